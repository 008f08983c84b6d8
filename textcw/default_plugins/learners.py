"""Built-in learners."""

from textcw.hookspecs import hookimpl
from textcw.learners.cw_stdev import CWStdev
from textcw.learners.cw_var import CWVar
from textcw.learners.passive_aggressive import PassiveAggressive, PassiveAggressiveI, PassiveAggressiveII
from textcw.learners.perceptron import Perceptron


@hookimpl
def register_learners(register):
    register("perceptron", Perceptron, summary="Perceptron (Rosenblatt 1958)")
    register("pa", PassiveAggressive, summary="Passive-Aggressive (Crammer et al. 2006)")
    register("pa1", PassiveAggressiveI, summary="Passive-Aggressive I, step capped at C")
    register("pa2", PassiveAggressiveII, summary="Passive-Aggressive II, squared slack")
    register("cw-var", CWVar, summary="Confidence-weighted, variance form (ICML 2008)")
    register("cw-stdev", CWStdev, summary="Confidence-weighted, exact stdev form (NIPS 2008)")
