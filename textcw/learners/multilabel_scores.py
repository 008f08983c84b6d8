"""Scores of documents by every label's model of a :class:`~textcw.learners.multilabel.MultiLabel`,
and the honest ones (by models that had not learned the document) its calibration and thresholds
are fitted to."""

from __future__ import annotations

import numpy as np

from textcw.learners.interleaved import rows_dots, weight_vector
from textcw.learners.temperature import weight_norm


def label_scores(models, X) -> np.ndarray:
    """``(n, K)`` scores: one sparse product for every label, over the columns the rows use (no
    dense ``(d, K)`` weight matrix, which a hashed feature space would make large)."""
    intercepts = np.array([model.intercept_[0] for model in models])
    return rows_dots(X, [weight_vector(model) for model in models]) + intercepts


class HonestScores:
    """Scores of documents by models that have not learned them, by row of ``X``."""

    def __init__(self, n: int, n_labels: int, gaussian: bool):
        self.scores = np.zeros((n, n_labels))
        self.norms = np.zeros((n, n_labels))
        self.variances = np.zeros((n, n_labels)) if gaussian else None

    def score(self, models, X, rows) -> None:
        """Rows ``rows`` scored by every label's model (``X``: those rows)."""
        self.score_labels(np.arange(len(models)), models, X, rows)

    def score_labels(self, labels, models, X, rows) -> None:
        """Rows ``rows`` scored by the models of ``labels`` (their indices in ``models``): each
        column is what :meth:`score` writes there, bit for bit (:func:`label_scores` computes
        each label's column alone), so label groups may score a chunk on threads of their own
        (:class:`~textcw.learners.label_threads.LabelGroups`)."""
        chosen = [models[k] for k in labels]
        cells = np.ix_(rows, labels)
        self.scores[cells] = label_scores(chosen, X)
        self.norms[cells] = [weight_norm(model) for model in chosen]
        if self.variances is not None:
            self.variances[cells] = margin_variances(chosen, X)

    def arrays(self):
        return self.scores, self.variances, self.norms


def kept_scores(old: dict | None, honest, Y, max_recorded: int) -> dict:
    """``old`` (the arrays kept so far, or ``None``) with the honest ``(scores, variances, norms)``
    of the documents labelled ``Y`` appended, cut to the most recent ``max_recorded`` documents:
    float32 scores, ``uint8`` labels."""
    scores, variances, norms = honest
    new = {"scores": scores, "norms": norms, "Y": Y}
    if variances is not None:
        new["variances"] = variances
    kept = {}
    for name, array in new.items():
        array = array.astype(np.uint8 if name == "Y" else np.float32)
        if old is not None and name in old:
            array = np.concatenate([old[name], array])
        kept[name] = np.ascontiguousarray(array[-max_recorded:])
    return kept


def margin_variances(models, X) -> np.ndarray:
    """``(n, K)``: column ``k`` is ``models[k].margin_variance(X)``; for a diagonal covariance
    ``sum_j x_j^2 s_j`` (the learner's own formula) from the squares of ``X`` computed once for
    every label, a paired ``s`` read where the rows need it."""
    diagonal = [k for k, model in enumerate(models) if getattr(getattr(model, "form", None), "diagonal", False)]
    out = np.empty((X.shape[0], len(models)))
    for k, model in enumerate(models):
        if k not in diagonal:
            out[:, k] = model.margin_variance(X)
    if diagonal:
        states = [models[k].fitted_state()["s"] for k in diagonal]
        ends = [models[k].n_features_in_ for k in diagonal]
        out[:, diagonal] = rows_dots(X.multiply(X).tocsr(), [s[:end] for s, end in zip(states, ends)])
        for column, k in enumerate(diagonal):
            if models[k].fit_intercept:
                out[:, k] += states[column][ends[column]]
    return out


class LearnedCount:
    """Documents learned so far over every fit of one ``fit`` (passes and cross-fit halves),
    reported to ``callback(done, total)``."""

    def __init__(self, callback, total: int):
        self.callback, self.total, self.done = callback, total, 0

    def add(self, k: int) -> None:
        self.done += k
        if self.callback is not None:
            self.callback(self.done, self.total)


__all__ = ["HonestScores", "LearnedCount", "kept_scores", "label_scores", "margin_variances"]
