"""Canonical CSR input for the kernels, checked once per call.

Kernels read ``(indptr, indices, data)`` directly, so they rely on: float64 data, int64 index
arrays, C-contiguous storage, sorted and de-duplicated column indices, finite values, and a known
number of columns. :func:`as_kernel_csr` establishes all of that or raises a clear error.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from textcw.errors import InputError

INDEX_DTYPE = np.int64
VALUE_DTYPE = np.float64


def as_kernel_csr(X, n_features: int | None = None, *, what: str = "X") -> sp.csr_matrix:
    """Return ``X`` as a canonical CSR matrix for the kernels.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix/array, shape (n_samples, n_features)
    n_features : int, optional
        The number of columns the model was fitted on; a different width is an error.
    what : str
        How to name the input in error messages.
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=VALUE_DTYPE, copy=False)
    else:
        try:
            arr = np.asarray(X, dtype=VALUE_DTYPE)
        except (TypeError, ValueError) as exc:
            raise InputError(
                f"{what} must be numeric (a 2-d array or a scipy.sparse matrix); got values that "
                f"cannot be converted to numbers ({exc}); featurize text with a featurizer first"
            ) from None
        if arr.ndim == 1:
            raise InputError(
                f"{what} is 1-d with shape {arr.shape}; pass a 2-d matrix with one row per "
                "document (reshape a single example with X.reshape(1, -1))"
            )
        if arr.ndim != 2:
            raise InputError(f"{what} must be 2-d; got {arr.ndim} dimensions (shape {arr.shape})")
        X = sp.csr_matrix(arr)
    if not np.all(np.isfinite(X.data)):
        bad = int(np.count_nonzero(~np.isfinite(X.data)))
        raise InputError(
            f"{what} contains {bad} NaN or infinite value(s); remove or impute them before training "
            "or predicting"
        )
    if n_features is not None and X.shape[1] != n_features:
        raise InputError(
            f"{what} has {X.shape[1]} features but the model was fitted with {n_features}; "
            "use the same featurizer (or the saved pipeline) for training and prediction"
        )
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()  # sorts indices and adds up duplicates
    X.eliminate_zeros()
    out = sp.csr_matrix(
        (
            np.ascontiguousarray(X.data, dtype=VALUE_DTYPE),
            np.ascontiguousarray(X.indices, dtype=INDEX_DTYPE),
            np.ascontiguousarray(X.indptr, dtype=INDEX_DTYPE),
        ),
        shape=X.shape,
        copy=False,
    )
    # scipy may downcast index arrays on construction; the kernels are compiled for int64.
    out.indices = np.ascontiguousarray(out.indices, dtype=INDEX_DTYPE)
    out.indptr = np.ascontiguousarray(out.indptr, dtype=INDEX_DTYPE)
    return out
