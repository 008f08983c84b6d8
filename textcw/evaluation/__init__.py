"""Evaluators: experiments that turn learners and data into reports.

:mod:`textcw.evaluation.evaluators` holds the evaluators by name;
:func:`textcw.evaluation.suite.run_suite` is what ``textcw evaluate`` runs. The modules not
listed below (``data``, ``grids``, ``plot``, ``table``, ``training`` and the reproductions in
``experiments``) are internal.
"""

__all__ = [
    "calibration", "combination", "curve", "cv", "evaluators", "holdout", "mcnemar", "metrics",
    "noise", "online", "rank", "report", "specs", "suite", "timing", "tune",
]
