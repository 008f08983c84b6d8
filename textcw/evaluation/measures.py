"""The built-in metrics (hook ``register_metrics``): ``error``, ``macro-f1``, ``log-loss``,
``brier``, ``ece`` and ``precision@k``, each computed on one fold's test documents.

The probability metrics read ``predict_proba`` (a learner without it shows ``–``); their
definitions are :class:`textcw.metrics.ProbabilityScores`' (log-loss clipped, sklearn's binary
Brier score, expected calibration error over equal-width confidence bins; Guo et al. ICML 2017).
"""

from __future__ import annotations

import numpy as np

from textcw.evaluation.contract import Fold, Metric, Option
from textcw.evaluation.training import error_percent
from textcw.metrics import ProbabilityScores, label_metrics

__all__ = ["ECE", "Brier", "Error", "LogLoss", "MacroF1", "PrecisionAtK"]


class Error(Metric):
    """Test error (%): the share of test documents whose predicted label is wrong."""

    title = "test error (%)"

    def __call__(self, fold: Fold) -> float:
        return error_percent(fold.y_true, fold.y_pred)


class MacroF1(Metric):
    """Macro-averaged F1 over the labels present in the fold (:func:`textcw.metrics.label_metrics`)."""

    title = "macro-F1"
    better = "higher"

    def __call__(self, fold: Fold) -> float:
        return label_metrics(fold.y_true, fold.y_pred)["macro_f1"]


class _Probability(Metric):
    needs = frozenset({"labels", "proba"})
    key = ""

    def __call__(self, fold: Fold) -> float:
        scores = ProbabilityScores(fold.classes)
        scores.add(fold.y_true, fold.y_pred, fold.proba)
        return scores.result()[self.key]


class LogLoss(_Probability):
    """Mean negative log-probability of the true label (clipped), from ``predict_proba``."""

    title, key = "log-loss", "log_loss"


class Brier(_Probability):
    """Brier score: mean squared distance of the probabilities from the one-hot truth."""

    title, key = "Brier score", "brier_score"


class ECE(_Probability):
    """Expected calibration error of the predicted label's probability (Guo et al. ICML 2017)."""

    title, key = "expected calibration error", "expected_calibration_error"


class PrecisionAtK(Metric):
    """Precision at ``k`` of a single-label task (top-k accuracy): the share of test documents
    whose true label is among the ``k`` labels with the highest decision scores (ties broken by
    the order of ``classes``, so that ``k=1`` is the accuracy of ``predict``). A true label the
    learner never saw in training is never among them.

    It applies only to tasks with more than two labels and more than ``k``
    (:meth:`applies`): with at most ``k`` labels every label is in the top ``k`` and it would be
    1 by construction, and on a binary task ``k=1`` is the accuracy, which ``error`` gives. The
    evaluators show ``n/a`` there.
    """

    title = "precision@k"
    better = "higher"
    needs = frozenset({"labels", "scores"})
    options = {"k": Option("int", default=3, minimum=1, help="how many of the best-scored labels may hold the true one")}

    def applies(self, fold: Fold) -> bool:
        return len(fold.labels) > max(2, self.settings["k"])

    def __call__(self, fold: Fold) -> float:
        k = self.settings["k"]
        scores = fold.class_scores()
        truth = fold.class_index(fold.y_true)  # -1: a label the learner never saw
        best = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        return float(np.mean((best == truth[:, None]).any(axis=1)))
