"""Evaluators: experiments that turn learners and data into reports.

:mod:`textcw.evaluation.contract` is the contract of the registered designs, metrics and
comparisons ``textcw evaluate`` dispatches on (:mod:`textcw.evaluation.dispatch`), built on
:mod:`~textcw.evaluation.folds`, which the engine shares with it; the built-ins are
:mod:`~textcw.evaluation.designs`, :mod:`~textcw.evaluation.measures` and
:mod:`~textcw.evaluation.comparisons`. :mod:`textcw.evaluation.evaluators` holds the library
functions by name. The modules not listed below (``data``, ``grids``, ``plot``, ``table``,
``training`` and the reproductions in ``experiments``) are internal.
"""

__all__ = [
    "calibration", "combination", "comparisons", "contract", "curve", "cv", "designs", "dispatch",
    "evaluators", "folds", "holdout", "mcnemar", "measures", "metrics", "noise", "online", "rank", "report",
    "specs", "suite", "timing", "tune",
]
