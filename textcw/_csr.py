"""Canonical CSR input for the kernels, checked once per call.

Kernels read ``(indptr, indices, data)`` directly, so they rely on: float64 data, int32 or int64
index arrays (both of one dtype; the kernels are compiled for either), C-contiguous storage,
sorted and de-duplicated column indices inside ``[0, n_columns)``, finite non-zero values of at
most :data:`MAX_ABS_VALUE` in absolute value, and a known number of columns.
:func:`as_kernel_csr` establishes all of that or raises a clear error.

Why a largest accepted value. The update rules square feature values and multiply the squares
together: a margin variance is ``v = sum_j s_j x_j^2``, CW-var's margins grow like ``x^2`` (its
mean moves by ``alpha Sigma x`` with ``alpha`` of order ``phi``, JMLR 2012 eq. 18), SCW-II's step
uses ``m^2 v^2`` and the joint multi-class CW step (Hildreth, EMNLP 2009 section 5.2) forms
``(m W)^2`` with ``m W`` of order ``x^4``: products of up to eight feature values, which overflow
double precision (about 1.8e308) from ``|x| ~ 1e38`` on. Below ``1e30`` every kernel stays
finite with a margin of ``1e68`` for the sums over features and updates, the initial variance
``a`` and the confidence ``phi``. Real features (counts, tf-idf, pixels, measurements) are many
orders of magnitude smaller; larger ones are refused with advice to rescale instead of silently
turning the model into inf/NaN. Most update rules are not invariant to a rescaling of the
features anyway (PA's unit margin, AROW's ``r`` and SCW's ``C`` fix a scale), so rescaling is
advisable for such data whatever the limit.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from textcw._jit import kernels_loaded
from textcw._limits import MAX_ABS_VALUE
from textcw.errors import InputError

VALUE_DTYPE = np.float64
_INDEX_DTYPES = (np.int32, np.int64)
__all__ = ["MAX_ABS_VALUE", "VALUE_DTYPE", "as_kernel_csr"]


def as_kernel_csr(X, n_features: int | None = None, *, what: str = "X") -> sp.csr_matrix:
    """Return ``X`` as a CSR matrix that meets the kernel contract, copying only when it must.

    A CSR matrix that already meets the contract is returned as it is: checking that takes one
    pass over the non-zeros, whereas canonicalising copies every array. Anything else is
    canonicalised into a new matrix (the caller's matrix is never modified).

    Parameters
    ----------
    X : array-like or scipy.sparse matrix/array, shape (n_samples, n_features)
    n_features : int, optional
        The number of columns the model was fitted on; a different width is an error.
    what : str
        How to name the input in error messages.
    """
    if _meets_contract(X):  # which includes the range of the values
        _check_width(X, n_features, what)
        return X
    if sp.issparse(X):
        _check_kind(X.dtype, what)
        # The kernels index the state arrays with the column indices without bounds checks, so
        # a matrix whose index arrays are inconsistent (built from raw (data, indices, indptr) or
        # edited in place) would read and write outside them: check the structure before scipy's
        # own conversions, which do not check it either, touch the arrays.
        X, copied = _valid_structure(X, what)
        X = sp.csr_matrix(X, dtype=VALUE_DTYPE, copy=not copied)
    else:
        try:
            arr = np.asarray(X)
        except (TypeError, ValueError) as exc:
            arr, error = None, exc
        if arr is not None:
            _check_kind(arr.dtype, what)  # an InputError of its own, not a failed conversion
            try:
                arr = arr.astype(VALUE_DTYPE, copy=False)
            except (TypeError, ValueError) as exc:
                arr, error = None, exc
        if arr is None:
            raise InputError(
                f"{what} must be numeric (a 2-d array or a scipy.sparse matrix); got values that "
                f"cannot be converted to numbers ({error}); featurize text with a featurizer first"
            )
        if arr.ndim != 2:
            raise InputError(
                f"{what} must be 2-d with one row per document; got shape {arr.shape} (reshape "
                "a single example with X.reshape(1, -1))"
            )
        X = sp.csr_matrix(arr)
    if not np.all(np.isfinite(X.data)):
        bad = int(np.count_nonzero(~np.isfinite(X.data)))
        raise InputError(
            f"{what} contains {bad} NaN or infinite value(s); remove or impute them before training "
            "or predicting"
        )
    _check_width(X, n_features, what)
    X.sum_duplicates()  # sorts indices and adds up duplicates (on our own copy)
    X.eliminate_zeros()
    _check_magnitude(X.data, what)  # after summing: duplicates may add up past the limit
    if X.indices.dtype != X.indptr.dtype or X.indices.dtype not in _INDEX_DTYPES:
        X.indices = X.indices.astype(np.int64)
        X.indptr = X.indptr.astype(np.int64)
    X.data = np.ascontiguousarray(X.data)
    X.indices = np.ascontiguousarray(X.indices)
    X.indptr = np.ascontiguousarray(X.indptr)
    return X


#: Up to this many stored values, a matrix is checked with numpy while no kernel has been used in
#: the process: a one-line prediction then never imports numba (about 0.3 s of one core) for a
#: check numpy does in microseconds; past it, or once numba is loaded, the compiled check runs.
SMALL_NNZ = 1 << 16


def _meets_contract(X) -> bool:
    if not (sp.issparse(X) and X.format == "csr" and X.dtype == VALUE_DTYPE
            and X.indices.dtype == X.indptr.dtype and X.indices.dtype in _INDEX_DTYPES
            and X.data.flags.c_contiguous and X.indices.flags.c_contiguous
            and X.indptr.flags.c_contiguous):
        return False
    if X.nnz <= SMALL_NNZ and not kernels_loaded():
        return contract_met(X.indptr, X.indices, X.data, X.shape[1])
    from textcw._csr_kernel import kernel_ready  # numba loads only when needed

    return kernel_ready(X.indptr, X.indices, X.data, X.shape[1])


def contract_met(indptr: np.ndarray, indices: np.ndarray, data: np.ndarray, n_columns: int) -> bool:
    """:func:`textcw._csr_kernel.kernel_ready` in numpy (the same verdict on every input; for
    small matrices, where it is the faster of the two)."""
    if len(indptr) < 1 or indptr[0] != 0 or indptr[-1] != len(data) or len(indices) != len(data):
        return False
    # zero, beyond the largest value (inf included), or NaN (for which the comparison is false)
    if np.any(data == 0) or not np.all(np.abs(data) <= MAX_ABS_VALUE) or np.any(np.diff(indptr) < 0):
        return False
    if len(indices) and (indices.min() < 0 or indices.max() >= n_columns):
        return False
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))  # each stored value's row
    return not np.any((rows[1:] == rows[:-1]) & (np.diff(indices) <= 0))


def _check_width(X, n_features: int | None, what: str) -> None:
    if n_features is not None and X.shape[1] != n_features:
        raise InputError(
            f"{what} has {X.shape[1]} features but the model was fitted with {n_features}; "
            "use the same featurizer (or the saved pipeline) for training and prediction"
        )


def _check_kind(dtype, what: str) -> None:
    """Refuse complex numbers and text before a cast would drop or parse them silently."""
    if dtype.kind == "c":
        raise InputError(
            f"Complex data not supported: {what} contains complex values; textcw learns from "
            "real-valued features"
        )
    if dtype.kind in "USV":
        # numpy would parse strings such as "1.5" as numbers: text is never a feature matrix
        raise InputError(
            f"{what} must be numeric (a 2-d array or a scipy.sparse matrix); it holds "
            f"{'text' if dtype.kind == 'U' else 'raw bytes'} ({dtype}): featurize the documents "
            "with a featurizer first"
        )


def _valid_structure(X, what: str):
    """``(X, copied)``: ``X`` or a checked copy of it; :class:`InputError` for broken index arrays."""
    fmt = X.format
    if fmt in ("csr", "csc", "bsr"):
        X = X.copy()  # check_format fixes dtypes and prunes in place: never on the caller's matrix
        try:
            X.check_format(full_check=True)
        except ValueError as exc:
            raise InputError(
                f"{what} is a malformed {fmt.upper()} matrix ({exc}); build it with a scipy "
                "constructor, or check its (data, indices, indptr) arrays"
            ) from None
    elif fmt == "coo":
        rows, cols = X.coords if hasattr(X, "coords") else (X.row, X.col)
        n_rows, n_cols = X.shape
        if rows.size and (rows.min() < 0 or rows.max() >= n_rows or cols.min() < 0
                          or cols.max() >= n_cols):
            raise InputError(
                f"{what} is a malformed COO matrix (row or column indices outside its shape "
                f"{X.shape}); build it with a scipy constructor"
            )
        return X, False
    return X, fmt in ("csr", "csc", "bsr")


def _check_magnitude(data: np.ndarray, what: str) -> None:
    """Refuse values beyond :data:`MAX_ABS_VALUE` (two passes over the non-zeros, no copy)."""
    if data.size == 0:
        return
    big = max(float(data.max()), -float(data.min()))
    if big > MAX_ABS_VALUE:
        raise InputError(
            f"{what} contains a value of magnitude {big:.3g}; textcw accepts feature values up to "
            f"{MAX_ABS_VALUE:g} in absolute value (the update rules multiply squared feature "
            "values together, which overflows double precision beyond that); scale the features "
            "first, e.g. with sklearn.preprocessing.MaxAbsScaler"
        )
