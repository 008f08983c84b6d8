"""Multi-label targets: label sets and 0/1 indicator matrices, and per-label decision thresholds.

The two forms of ``Y`` follow scikit-learn's multi-label conventions: a sequence with one
collection of labels per document (``[["acq"], ["earn", "trade"], []]``, what
``sklearn.preprocessing.MultiLabelBinarizer`` takes), or an ``(n_documents, n_labels)`` 0/1
indicator matrix, dense or sparse (what it returns). :func:`as_indicator` turns either into the
indicator matrix the learners train on and remembers which form was given, so that ``predict``
answers in the same form.

Thresholds (:func:`f1_thresholds`): the SCut strategy of Yang, "A study of thresholding
strategies for text categorization", SIGIR 2001, section 3.2: for every label, the cut on its
scores that maximises that label's F1 on documents it was not trained on, with that paper's
fallback for labels too rare to place a cut (SCut.FBR, section 3.3).

A minimum of labels per document (:func:`at_least`): the thresholds decide each label alone, so a
document may get no label at all; where every training document had at least one, an empty set is
never the right answer, and the document gets its most probable label instead. This is the
combination of a threshold per label with a rank cut (RCut, section 3.1 of the same paper: the
top ``k`` labels of each document) that keeps the threshold's decision wherever it gives ``k`` or
more labels.

The labels' temperatures are fitted in :mod:`textcw.learners.label_temperatures`.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.preprocessing import MultiLabelBinarizer

from textcw.errors import InputError

INDICATOR = "indicator"
SETS = "sets"
# The threshold of a label whose honest scores have no positive document or no cut with an F1
# above FBR: the calibrated probability's own decision, P(label | x) >= 1/2.
FALLBACK_THRESHOLD = 0.5
# SCut.FBR's lowest F1 worth a cut of its own (Yang 2001, section 3.3, tries 0.1 to 0.9): below
# it the label's honest scores rank its few documents too poorly for the best cut (often one
# letting in most documents) to carry over to new ones.
FBR = 0.3


def _label_scalar(value) -> bool:
    return isinstance(value, (str, numbers.Number, np.generic)) and not isinstance(value, bool)


def is_matrix(Y) -> bool:
    """Whether ``Y`` is an indicator matrix (sparse, or a 2-d array) rather than label sets."""
    return sp.issparse(Y) or (isinstance(Y, np.ndarray) and Y.ndim == 2)


def as_indicator(Y, n_rows: int, classes=None) -> tuple[np.ndarray, np.ndarray, str]:
    """``(indicator, classes, form)``: ``Y`` as an ``(n_rows, K)`` uint8 0/1 matrix, the labels of
    its columns and ``"indicator"`` or ``"sets"``. ``classes`` (label sets only) fixes the
    columns; a label outside it is refused."""
    if Y is None:
        raise InputError("MultiLabel requires Y: a list of label sets (one per document) or a 0/1 "
                         "indicator matrix; got None")
    if sp.issparse(Y) or (isinstance(Y, np.ndarray) and Y.ndim == 2):
        return _from_matrix(Y, n_rows, classes), _matrix_classes(Y, classes), INDICATOR
    if isinstance(Y, (str, bytes)) or not hasattr(Y, "__len__"):
        raise InputError(f"Y must be a list of label sets or a 0/1 indicator matrix; got {type(Y).__name__}")
    if len(Y) != n_rows:
        raise InputError(f"Y has {len(Y)} label sets but X has {n_rows} documents; give one label "
                         "set per document")
    sets = []
    for i, labels in enumerate(Y):
        if isinstance(labels, (str, bytes)) or _label_scalar(labels) or isinstance(labels, bool):
            raise InputError(
                f"document {i}'s labels are {labels!r}, a single value, not a collection of labels; "
                "give each document a list of labels (e.g. [['acq'], ['earn', 'trade']]), or use "
                "the learner without MultiLabel for one label per document")
        labels = list(labels)
        bad = [label for label in labels if not _label_scalar(label)]
        if bad:
            raise InputError(f"document {i} has the label {bad[0]!r}; a label must be a string or a "
                             "number")
        sets.append(labels)
    kinds = {isinstance(label, str) for labels in sets for label in labels}
    if len(kinds) > 1:
        raise InputError("Y mixes string and number labels; use one type for every label (e.g. "
                         "all strings)")
    binarizer = MultiLabelBinarizer(classes=None if classes is None else list(classes))
    if classes is not None:
        known = set(np.asarray(classes).tolist())
        unknown = sorted({label for labels in sets for label in labels} - known, key=str)
        if unknown:
            raise InputError(
                f"labels {unknown[:5]} are not among the model's {len(known)} labels; declare every "
                "label in classes= on the first partial_fit call (or call fit to start over)")
    indicator = binarizer.fit_transform(sets).astype(np.uint8, copy=False)
    return np.asarray(indicator), np.asarray(binarizer.classes_), SETS


def _matrix_classes(Y, classes):
    if classes is not None:
        return np.asarray(classes)
    return np.arange(Y.shape[1])


def _from_matrix(Y, n_rows: int, classes) -> np.ndarray:
    dense = Y.toarray() if sp.issparse(Y) else np.asarray(Y)
    if dense.shape[0] != n_rows:
        raise InputError(f"Y has {dense.shape[0]} rows but X has {n_rows} documents; give one "
                         "indicator row per document")
    if dense.shape[1] == 0:
        raise InputError("Y has no columns: an indicator matrix needs one column per label")
    if classes is not None and dense.shape[1] != len(classes):
        raise InputError(f"Y has {dense.shape[1]} columns but the model has {len(classes)} labels; "
                         "give one column per label, in the order of classes_")
    if dense.dtype.kind not in "biuf" or not np.all((dense == 0) | (dense == 1)):
        raise InputError("Y is a matrix but not a 0/1 indicator matrix; give 1 where a document "
                         "has a label and 0 elsewhere (MultiLabelBinarizer makes one from label sets)")
    return dense.astype(np.uint8)


def as_output(indicator: np.ndarray, classes: np.ndarray, form: str):
    """``predict``'s answer in the form ``fit`` was given: the indicator matrix, or one tuple of
    labels (in the order of ``classes``) per document, as ``MultiLabelBinarizer.inverse_transform``."""
    if form == INDICATOR:
        return indicator.astype(int)
    return [tuple(classes[np.flatnonzero(row)].tolist()) for row in indicator]


def unlabelled_rows(Y) -> int:
    """Rows of the indicator matrix ``Y`` with no label."""
    return int(np.count_nonzero(np.asarray(Y.sum(axis=1)).ravel() == 0))


def resolve_min_labels(min_labels, unlabelled_documents: int | None, n_labels: int) -> int:
    """The least number of labels ``predict`` gives a document: ``min_labels`` when a number
    (at most ``n_labels``); with ``"auto"``, 1 when every document learned had at least one label
    (``unlabelled_documents == 0``), else 0. ``None`` (a model saved before the count was kept)
    is 0, as such a model predicted."""
    if min_labels != "auto":
        return min(int(min_labels), n_labels)
    return int(unlabelled_documents == 0)


def at_least(indicator: np.ndarray, proba: np.ndarray, k: int) -> np.ndarray:
    """``indicator`` (0/1, documents x labels) with each row that has fewer than ``k`` labels
    completed by its most probable labels not yet given (ties by label order), so that it has
    ``k``; rows with ``k`` or more are unchanged."""
    short = np.flatnonzero(indicator.sum(axis=1) < k) if k > 0 else np.empty(0, dtype=np.intp)
    if short.size == 0:
        return indicator
    out = indicator.copy()
    for row in short:
        given = out[row].astype(bool)
        # most probable first; labels already given sort last, so the first k - |given| are new
        order = np.lexsort((np.arange(proba.shape[1]), -proba[row], given))
        out[row, order[:k - int(given.sum())]] = 1
    return out


def micro_f1(truth: np.ndarray, predicted: np.ndarray) -> float:
    """scikit-learn's ``f1_score(truth, predicted, average="micro", zero_division=0)`` of two boolean
    indicator matrices, ``2 TP / (true + predicted)`` as it computes it, without its input checks
    (17 ms a call on a Reuters half's 3,885 documents x 90 labels against 0.24 ms)."""
    total = int(truth.sum()) + int(predicted.sum())
    return 0.0 if total == 0 else 2.0 * int(np.count_nonzero(truth & predicted)) / total


def f1_thresholds(proba: np.ndarray, Y: np.ndarray, fbr: float = FBR) -> np.ndarray:
    """Per label, the probability cut that maximises F1 on ``(proba, Y)`` (SCut, module docstring).

    A document gets the label when its probability is above the cut. The cut lies halfway
    between the lowest probability kept and the highest one left out, so a cut never sits on a
    recorded value. A label without a positive document, or whose best F1 is below ``fbr``,
    gets :data:`FALLBACK_THRESHOLD`; so does a label whose best cut keeps every document (its
    scores do not tell its documents apart). Ties keep the higher cut (fewer labels predicted)."""
    n, k = proba.shape
    thresholds = np.full(k, FALLBACK_THRESHOLD)
    for label in range(k):
        positives = int(Y[:, label].sum())
        if positives == 0 or n == 0:
            continue
        # any order of equal probabilities gives the same cuts (a cut never falls inside a run of
        # equal values, and the positives counted at a run's end are the same), so the faster
        # unstable sort serves
        order = np.argsort(-proba[:, label])
        p = proba[order, label]
        true_pos = np.cumsum(Y[order, label], dtype=np.int64)
        f1 = 2.0 * true_pos / (np.arange(1, n + 1) + positives)
        # a cut can only fall between two different probabilities (or after the last one)
        f1[:-1][p[:-1] == p[1:]] = -1.0
        best = int(np.argmax(f1))
        if f1[best] < fbr or f1[best] <= 0.0 or best == n - 1:
            continue
        thresholds[label] = 0.5 * (p[best] + p[best + 1])
    return thresholds
