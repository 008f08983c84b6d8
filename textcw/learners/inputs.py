"""Checks of a learner's input, shared by the online learners and the batch baselines.

Each failure is an :class:`~textcw.errors.InputError` that says what was wrong and what to do;
where scikit-learn has a wording for the same problem ("Reshape your data", "Unknown label
type: continuous", "is expecting N features as input"), it is kept, so that code (and
scikit-learn's estimator checks) that recognise its messages recognise these.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import type_of_target

from textcw._csr import as_kernel_csr
from textcw._limits import MAX_LABEL_CHARS
from textcw.errors import InputError

_BOOLS = {"bool", "bool_"}


def _ndim(X) -> int | None:
    try:
        return np.ndim(X)
    except (ValueError, TypeError):  # ragged rows: as_kernel_csr reports them
        return None


def _dtype_kind(X) -> str | None:
    dtype = getattr(X, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(X).dtype
        except (ValueError, TypeError):
            return None
    return dtype.kind


def check_features(X, n_features: int | None = None, *, estimator: str = "the model") -> sp.csr_matrix:
    """``X`` as canonical CSR (:func:`textcw._csr.as_kernel_csr`), 2-d, real, with at least one
    column, and ``n_features`` columns when the model was fitted with that many."""
    if not sp.issparse(X) and _ndim(X) == 1:
        raise InputError(
            f"X is 1-d with shape {np.shape(X)}; Reshape your data: pass a 2-d matrix with one "
            "row per document (a single document: X.reshape(1, -1))"
        )
    if _dtype_kind(X) == "c":
        raise InputError(
            "Complex data not supported: X contains complex values; textcw learns from "
            "real-valued features"
        )
    X = as_kernel_csr(X)
    if X.shape[1] == 0:
        raise InputError(
            f"X has 0 feature(s) (shape={X.shape}) while a minimum of 1 is required; every "
            "document needs a feature vector (featurize the documents first)"
        )
    if n_features is not None and X.shape[1] != n_features:
        raise InputError(
            f"X has {X.shape[1]} features, but {estimator} is expecting {n_features} features as "
            f"input (it was fitted with {n_features}); use the same featurizer (or the saved "
            "pipeline) for training and prediction"
        )
    return X


# What a label may be: one string, number or boolean per document (numpy's scalar types included).
_SCALAR_LABELS = (str, bytes, int, float, bool, np.generic)


def as_label_array(values, what: str = "y") -> np.ndarray:
    """``values`` as a numpy array of scalar labels.

    A label is one string, number or boolean. numpy turns a list of equal-length tuples or lists
    into a 2-d array (refused later as not 1-d), a ragged one into an error, and a 1-d object
    array may hold tuples, lists or dicts, which ``np.unique`` would sort and compare as labels:
    each of these is refused here, saying so, rather than learning from a silently reshaped y.
    """
    try:
        array = np.asarray(values)
    except (ValueError, TypeError) as exc:
        raise InputError(
            f"{what} cannot be read as one label per document ({exc}); give a 1-d list or array "
            "of strings or numbers"
        ) from None
    if array.dtype == object:
        odd = next((v for v in array.ravel().tolist() if not isinstance(v, _SCALAR_LABELS)), _NONE)
        if odd is not _NONE:
            raise InputError(
                f"{what} must hold one string, number or boolean per document; it holds a "
                f"{type(odd).__name__} ({_short(odd)}); a document has one label (for several "
                "labels per document, train one model per label)"
            )
    return array


_NONE = object()


def _short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def check_targets(y, n_rows: int, *, estimator: str = "the model") -> np.ndarray:
    """``y`` as a 1-d array with one label per row of ``X`` (a column vector is flattened, with
    scikit-learn's warning); no rows at all is an error."""
    if y is None:
        raise InputError(
            f"{estimator} requires y to be passed, but the target y is None; give one label per "
            "document"
        )
    y = as_label_array(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected: y of shape "
            f"{y.shape} was flattened to one label per document; pass a 1-d array of labels "
            "to avoid this warning",
            DataConversionWarning, stacklevel=4,
        )
        y = y.ravel()
    if y.ndim != 1:
        raise InputError(
            f"y must be 1-d (one label per document); got shape {y.shape}: a document has one "
            "label, a string or a number (a list of tuples or a 2-d array is not a label vector)"
        )
    if y.shape[0] != n_rows:
        raise InputError(f"X has {n_rows} rows but y has {y.shape[0]} labels; they must match")
    if n_rows == 0:
        raise InputError("no training documents: X has 0 rows")
    return y


def distinct_labels(y: np.ndarray) -> np.ndarray:
    """``np.unique(y)`` of a 1-d label array, with the same result for labels of one type.

    numpy sorts an object array by comparing Python objects one pair at a time (about 3 ms for
    10,000 string labels, every chunk of a stream); a set finds the few distinct labels in one
    hashing pass and only they are sorted. Mixed label types raise ``TypeError`` as
    ``np.unique`` does (``sorted`` cannot order them).
    """
    if y.dtype != object:
        return np.unique(y)
    return np.array(sorted(set(y.tolist())), dtype=object)


def unknown_labels(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """``np.setdiff1d(labels, classes)``: the distinct ``labels`` that are not ``classes``
    (sorted, as :func:`check_labels` leaves them).

    ``setdiff1d`` sorts both arrays and concatenates them (0.13 ms for one string label against
    20 classes, a tenth of a one-document update in a service); a binary search of the sorted
    classes answers the usual case (every label known, of the classes' type) in a tenth of that.
    Labels of the classes' kind but another width are of their type too: strings of another
    length (``<U9`` labels, ``<U24`` classes: a batch's longest label sets its width), numbers of
    another size, and text labels (``<U9``) of text classes kept as objects, as a model's
    ``classes_`` are (compared as Python strings; a service's labels were 0.1 ms of each
    ``partial_fit`` call through ``setdiff1d`` before).
    """
    if labels.dtype.kind == "U" and classes.dtype == object:
        try:
            return _unknown_sorted(labels.astype(object), classes, labels)
        except TypeError:  # classes of another type: setdiff1d says which labels are unknown
            return np.setdiff1d(labels, classes)
    if labels.dtype == classes.dtype or (labels.dtype.kind == classes.dtype.kind and labels.dtype.kind in "USiuf"):
        return _unknown_sorted(labels, classes, labels)
    return np.setdiff1d(labels, classes)


def _unknown_sorted(probe: np.ndarray, classes: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """:func:`unknown_labels` by binary search of ``probe`` (``labels`` in the classes' type)."""
    if len(classes) and probe.ndim == 1:
        at = np.minimum(np.searchsorted(classes, probe), len(classes) - 1)
        missing = classes[at] != probe
        if not np.any(missing):
            return labels[:0]
    return np.setdiff1d(labels, classes)


def check_labels(y: np.ndarray, what: str = "y", min_classes: int = 2) -> np.ndarray:
    """The sorted distinct labels of ``y``: of one type, finite, not real-valued, none longer than
    ``MAX_LABEL_CHARS`` (what trains must export), and at least ``min_classes`` of them."""
    if y.ndim != 1:
        raise InputError(f"{what} must be 1-d (one label per document); got shape {y.shape}")
    kinds = {type(v).__name__ for v in y.tolist()} if y.dtype == object else set()
    try:
        labels = distinct_labels(y)
        # np.unique would merge True with 1 and False with 0 without a word
        if kinds & _BOOLS and kinds - _BOOLS:
            raise TypeError
    except TypeError:
        raise InputError(
            f"{what} mixes label types ({sorted(kinds or {type(v).__name__ for v in y.tolist()})}); "
            "use labels of one type, e.g. all strings or all integers"
        ) from None
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise InputError(f"{what} contains NaN or infinite labels")
    if labels.dtype.kind == "f" and type_of_target(labels) == "continuous":
        raise InputError(
            f"Unknown label type: continuous. {what} holds real-valued targets (e.g. "
            f"{labels[~np.equal(np.mod(labels, 1), 0)][0]!r}), a regression target; a classifier "
            "needs class labels such as strings or integers"
        )
    long = next((v for v in labels.tolist() if isinstance(v, (str, bytes)) and len(v) > MAX_LABEL_CHARS), None)
    if long is not None:  # a model must export and import as it trains (textcw._limits)
        raise InputError(f"{what} holds a label of {len(long):,} characters ({_short(long, 40)}), more than the "
                         f"{MAX_LABEL_CHARS:,} a label may have; is it the label column?")
    if labels.size < min_classes:
        raise InputError(f"{what} has only one class ({labels.tolist()}); a classifier needs at least two")
    return labels
