"""The built-in metrics (hook ``register_metrics``): ``error``, ``macro-f1``, ``log-loss``,
``brier`` and ``ece``, each computed on one fold's test documents.

The probability metrics read ``predict_proba`` (a learner without it shows ``–``); their
definitions are :class:`textcw.metrics.ProbabilityScores`' (log-loss clipped, sklearn's binary
Brier score, expected calibration error over equal-width confidence bins; Guo et al. ICML 2017).
"""

from __future__ import annotations

from textcw.evaluation.contract import Fold, Metric
from textcw.evaluation.training import error_percent
from textcw.metrics import ProbabilityScores, label_metrics

__all__ = ["ECE", "Brier", "Error", "LogLoss", "MacroF1"]


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
