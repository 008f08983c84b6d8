"""Documents with no feature the model knows: the labels of held-out documents that had none.

A test document whose every word is missing from the training vocabulary is an empty row: its
scores are all zero, or the intercept alone, and say nothing about it. One short-text task had
23% of such test documents (docs/quality.md "Documents with no known word"). What a label is
then worth is measurable without a test document: cross-fitting
(:class:`textcw.learners.calibrated.Calibrated`, ``unseen="drop"``) scores each held-out
document as a test document is featurized, so some held-out rows are empty, and their labels
are a sample of the labels of documents with no known word. Those documents are not a random
sample of the labels (a language written without spaces is one unknown word to the tokenizer):
on four short-text tasks the most frequent label among them was right on 4.7-9.1 times as many
of the test documents without a known word as the most frequent training label.

:func:`unknown_probabilities` estimates ``P(label | no known feature)`` from the ``n_e``
held-out empty rows, ``c_k`` of them with label ``k``, by the mean of the Dirichlet posterior
with ``K`` pseudo-documents spread as the training label frequencies ``pi_k`` (a prior as
strong as Laplace's add-one rule, centred on the frequencies instead of the uniform):

    q_k = (c_k + K pi_k) / (n_e + K)

:func:`chosen_unknown` keeps it only where it predicts the held-out empty rows better than the
temperature does: its leave-one-out log-loss on them (each row's label left out of its own
estimate) against the log-loss that a temperature fitted without them gives their recorded
scores. With few empty rows the estimate is about the label frequencies, and a learned
intercept can know more; then the temperature keeps them. The temperature is fitted to the rows
it will scale: without the empty ones where the estimate is kept, else to every row, so that a
calibration that rejects the estimate is exactly the one fitted before it existed
(:func:`textcw.learners.calibrated.fit_calibration`).

The rows it applies to are those with no non-zero value (:func:`no_known_feature`). Where it
is kept, the calibration (:class:`textcw.learners.temperature.TemperatureScaling`, field
``unknown``) gives such a document the probabilities ``q`` and the label ``argmax q``, so the
most probable label stays the predicted one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from textcw.errors import ParameterError

# How far from 1 the stored probabilities may sum (they are written as JSON in exports).
SUM_TOLERANCE = 1e-9


def no_known_feature(X) -> np.ndarray:
    """``(n,)`` bool: the rows of ``X`` with no non-zero value. ``X`` is a sparse matrix, rows in
    compressed form (``indptr``, ``data``: :class:`textcw.features.native.KernelRows`) or dense."""
    if sp.issparse(X) or hasattr(X, "indptr"):
        X = X.tocsr() if sp.issparse(X) else X
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        return np.bincount(rows[np.asarray(X.data) != 0], minlength=X.shape[0]) == 0
    X = np.asarray(X)
    return ~np.any(X.reshape(X.shape[0], -1) != 0, axis=1)


def unknown_probabilities(counts: np.ndarray, frequencies: np.ndarray) -> np.ndarray:
    """``q``: the posterior mean of the module docstring, from the held-out empty rows' label
    ``counts`` and the training label ``frequencies`` (both ``(K,)``)."""
    k = len(counts)
    return (counts + k * frequencies) / (counts.sum() + k)


def leave_one_out_log_loss(counts: np.ndarray, frequencies: np.ndarray) -> float:
    """Mean log-loss of the empty rows, each under the estimate of the others (``c_k - 1``)."""
    k = len(counts)
    q = (counts - 1 + k * frequencies) / (counts.sum() - 1 + k)
    present = counts > 0
    return float(-(counts[present] * np.log(q[present])).sum() / counts.sum())


def chosen_unknown(target: np.ndarray, empty: np.ndarray, proba_empty: np.ndarray,
                   n_classes: int) -> tuple[float, ...] | None:
    """``q`` as a tuple when it predicts the held-out empty rows better than the temperature
    (module docstring), else ``None``.

    ``target``: every recorded document's label index; ``empty``: which recorded rows were
    scored with no known feature; ``proba_empty``: the temperature's probabilities of those
    rows (``(n_e, K)``)."""
    n_empty = int(np.count_nonzero(empty))
    if n_empty == 0:
        return None
    frequencies = np.bincount(target, minlength=n_classes) / len(target)
    counts = np.bincount(target[empty], minlength=n_classes).astype(float)
    picked = np.clip(proba_empty[np.arange(n_empty), target[empty]], 1e-300, 1.0)
    if leave_one_out_log_loss(counts, frequencies) >= float(-np.log(picked).mean()):
        return None
    return tuple(float(p) for p in unknown_probabilities(counts, frequencies))


def with_unknown(proba: np.ndarray, X, unknown) -> np.ndarray:
    """``proba`` (``(n, K)``) with the rows of ``X`` that have no known feature set to ``unknown``."""
    if unknown is not None:
        proba[no_known_feature(X)] = unknown
    return proba


def unknown_labels(predicted: np.ndarray, X, unknown, classes) -> np.ndarray:
    """``predicted`` with the rows of ``X`` that have no known feature given ``argmax unknown``
    (the first of equal ones, as ``predict`` breaks ties)."""
    if unknown is None:
        return predicted
    empty = no_known_feature(X)
    if empty.any():
        predicted = np.array(predicted, copy=True)
        predicted[empty] = np.asarray(classes)[int(np.argmax(unknown))]
    return predicted


def checked_unknown(values) -> tuple[float, ...] | None:
    """``values`` read back from a model or an export, checked: ``None``, or a list of two or more
    finite probabilities in ``(0, 1]`` that sum to 1."""
    if values is None:
        return None
    if not isinstance(values, (list, tuple)) or len(values) < 2 or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 < v <= 1.0 for v in values):
        raise ParameterError("a calibration's unknown must be a list of two or more probabilities in (0, 1]")
    if abs(sum(values) - 1.0) > SUM_TOLERANCE * len(values):
        raise ParameterError("a calibration's unknown probabilities must sum to 1")
    return tuple(float(v) for v in values)


__all__ = ["chosen_unknown", "checked_unknown", "leave_one_out_log_loss", "no_known_feature", "unknown_labels",
           "unknown_probabilities", "with_unknown"]
