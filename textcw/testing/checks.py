"""Checks that a plugin's learners, featurizers and registrations meet textcw's contract.

The checks live in :mod:`textcw.testing.learner_checks`, :mod:`textcw.testing.featurizer_checks`
and :mod:`textcw.testing.plugin_checks`, and run through :mod:`textcw.testing.runner`; this
module keeps the names it has always offered. Import them from :mod:`textcw.testing`.

Each public check is a plain function that returns ``None`` when everything holds and raises
:class:`AssertionError` naming the component, the failed property and what to change otherwise,
so it reads well both in a pytest run and in a script::

    from textcw.testing import check_learner, check_plugin
    check_learner(MyLearner)          # a class or any callable returning a fresh estimator
    check_plugin(my_package.plugin)   # registers it in an isolated manager, checks every entry

What the checks hold components to is what the rest of textcw relies on: the CLI trains and
predicts through a scikit-learn ``Pipeline`` (featurizer + learner), models are saved with
joblib, labels are names, and errors a user can cause are :class:`textcw.errors.TextcwError`\\ s
(the CLI prints those on one line instead of a traceback).
"""

from __future__ import annotations

from textcw.testing.featurizer_checks import check_featurizer
from textcw.testing.learner_checks import SKLEARN_CONTRACT_CHECKS, check_learner
from textcw.testing.plugin_checks import check_plugin

__all__ = ["SKLEARN_CONTRACT_CHECKS", "check_featurizer", "check_learner", "check_plugin"]
