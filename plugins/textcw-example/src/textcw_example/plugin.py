"""The plugin module: the entry point ``example = "textcw_example.plugin"`` names it.

textcw calls each function below once per plugin manager, handing it a ``register`` callable
(see ``textcw.hookspecs``). Registration only records names and factories; nothing is built or
trained here, so loading the plugin stays cheap. The implementations are imported inside the
functions: textcw loads every plugin to start, and ``textcw --help`` should not wait for numba.
"""

import textcw


@textcw.hookimpl
def register_learners(register):
    from textcw_example.winnow import BalancedWinnow

    register("balanced-winnow", BalancedWinnow,
             summary="Balanced Winnow, multiplicative mistake-driven updates (Dagan, Karov, Roth 1997)")


@textcw.hookimpl
def register_featurizers(register):
    from textcw_example.featurizers import char_ngrams

    register("char-ngrams", char_ngrams,
             summary="Binary character n-grams within word boundaries (CountVectorizer, char_wb)")
