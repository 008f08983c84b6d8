"""Scores of documents by every label's model of a :class:`~textcw.learners.multilabel.MultiLabel`,
and the honest ones (by models that had not learned the document) its calibration and thresholds
are fitted to."""

from __future__ import annotations

import numpy as np

from textcw.learners.interleaved import rows_dot, weights_dot
from textcw.learners.temperature import weight_norm


def label_scores(models, X) -> np.ndarray:
    """``(n, K)`` scores, one sparse product per label (no dense ``(d, K)`` weight matrix, which
    a hashed feature space would make large)."""
    scores = np.empty((X.shape[0], len(models)))
    for label, model in enumerate(models):
        scores[:, label] = weights_dot(model, X) + model.intercept_[0]
    return scores


class HonestScores:
    """Scores of documents by models that have not learned them, by row of ``X``."""

    def __init__(self, n: int, n_labels: int, gaussian: bool):
        self.scores = np.zeros((n, n_labels))
        self.norms = np.zeros((n, n_labels))
        self.variances = np.zeros((n, n_labels)) if gaussian else None

    def score(self, models, X, rows) -> None:
        self.scores[rows] = label_scores(models, X)
        squares = X.multiply(X).tocsr() if self.variances is not None else None
        for label, model in enumerate(models):
            self.norms[rows, label] = weight_norm(model)
            if self.variances is not None:
                self.variances[rows, label] = margin_variance(model, X, squares)

    def arrays(self):
        return self.scores, self.variances, self.norms


def margin_variance(model, X, squares) -> np.ndarray:
    """``model.margin_variance(X)``; for a diagonal covariance ``sum_j x_j^2 s_j`` from the
    squares of ``X`` computed once for every label (the learner's own formula)."""
    form = getattr(model, "form", None)
    if form is None or not getattr(form, "diagonal", False):
        return model.margin_variance(X)
    s = model.fitted_state()["s"]
    variance = rows_dot(squares, s[: model.n_features_in_])  # a paired s is not copied
    return variance + s[model.n_features_in_] if model.fit_intercept else variance


class LearnedCount:
    """Documents learned so far over every fit of one ``fit`` (passes and cross-fit halves),
    reported to ``callback(done, total)``."""

    def __init__(self, callback, total: int):
        self.callback, self.total, self.done = callback, total, 0

    def add(self, k: int) -> None:
        self.done += k
        if self.callback is not None:
            self.callback(self.done, self.total)


__all__ = ["HonestScores", "LearnedCount", "label_scores", "margin_variance"]
