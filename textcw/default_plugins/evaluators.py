"""Built-in evaluators."""

from textcw.evaluation.holdout import holdout
from textcw.hookspecs import hookimpl


@hookimpl
def register_evaluators(register):
    register("holdout", holdout, summary="Train on the training split, accuracy on the test split")
