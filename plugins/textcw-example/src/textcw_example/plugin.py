"""The plugin module: the entry point ``example = "textcw_example.plugin"`` names it.

textcw calls each function below once per plugin manager, handing it a ``register`` callable
(see ``textcw.hookspecs``). Registration only records names and factories; nothing is built or
trained here, so loading the plugin stays cheap. The factories are named as
``"package.module:attribute"`` references, which textcw imports the first time it builds one:
textcw imports this module whenever a command asks for one of its names (and to list them), and
``textcw list learners`` should not wait for numba. (Passing the class itself works too; it only
costs its imports each time the plugin is loaded.)
"""

import textcw


@textcw.hookimpl
def register_learners(register):
    register("balanced-winnow", "textcw_example.winnow:BalancedWinnow", online=True,
             summary="Balanced Winnow, multiplicative mistake-driven updates (Dagan, Karov, Roth 1997)")
    register("nherd", "textcw_example.nherd:NHERD", online=True,
             summary="Normal herding, NHERD (Crammer and Lee, NIPS 2010); covariance=diag-kl|diag-l2|exact")
    register("bounded-arow", "textcw_example.bounded_arow:BoundedAROW", online=True,
             summary="Diagonal AROW with a variance lower bound b; covariance=diag-kl|diag-l2")


@textcw.hookimpl
def register_featurizers(register):
    register("char-ngrams", "textcw_example.featurizers:char_ngrams",
             summary="Binary character n-grams within word boundaries (CountVectorizer, char_wb)")


@textcw.hookimpl
def register_evaluators(register):
    register("shuffle-split", "textcw_example.evaluators:ShuffleSplit",
             summary="Repeated stratified random train/test splits (Monte Carlo cross-validation)")


@textcw.hookimpl
def register_metrics(register):
    register("auc-per-class", "textcw_example.metrics:AUCPerClass",
             summary="AUC of each class against the rest, from decision scores; higher is better")
    register("cost-error", "textcw_example.metrics:CostError",
             summary="Mean misclassification cost from a CSV cost matrix (costs=PATH); lower is better")
