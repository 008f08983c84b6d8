"""Canonical CSR input for the kernels, checked once per call.

Kernels read ``(indptr, indices, data)`` directly, so they rely on: float64 data, int32 or int64
index arrays (both of one dtype; the kernels are compiled for either), C-contiguous storage,
sorted and de-duplicated column indices, finite non-zero values, and a known number of columns.
:func:`as_kernel_csr` establishes all of that or raises a clear error.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from textcw.errors import InputError

VALUE_DTYPE = np.float64
_INDEX_DTYPES = (np.int32, np.int64)


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
    if _meets_contract(X):
        _check_width(X, n_features, what)
        return X
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=VALUE_DTYPE, copy=True)
    else:
        try:
            arr = np.asarray(X, dtype=VALUE_DTYPE)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"{what} must be numeric (a 2-d array or a scipy.sparse matrix); got values that "
                f"cannot be converted to numbers ({exc}); featurize text with a featurizer first"
            ) from None
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
    if X.indices.dtype != X.indptr.dtype or X.indices.dtype not in _INDEX_DTYPES:
        X.indices = X.indices.astype(np.int64)
        X.indptr = X.indptr.astype(np.int64)
    X.data = np.ascontiguousarray(X.data)
    X.indices = np.ascontiguousarray(X.indices)
    X.indptr = np.ascontiguousarray(X.indptr)
    return X


def _meets_contract(X) -> bool:
    from textcw.learners._kernels.common import kernel_ready  # numba loads only when needed

    return (sp.issparse(X) and X.format == "csr" and X.dtype == VALUE_DTYPE
            and X.indices.dtype == X.indptr.dtype and X.indices.dtype in _INDEX_DTYPES
            and X.data.flags.c_contiguous and X.indices.flags.c_contiguous
            and X.indptr.flags.c_contiguous
            and kernel_ready(X.indptr, X.indices, X.data, X.shape[1]))


def _check_width(X, n_features: int | None, what: str) -> None:
    if n_features is not None and X.shape[1] != n_features:
        raise InputError(
            f"{what} has {X.shape[1]} features but the model was fitted with {n_features}; "
            "use the same featurizer (or the saved pipeline) for training and prediction"
        )
