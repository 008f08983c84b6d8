"""A binary diagonal Gaussian state kept side by side: a feature's mean and variance in one line.

A diagonal Gaussian learner reads and writes a mean ``mu_j`` and a variance ``s_j`` for every
non-zero of a document it learns from (docs/algorithms.md "CW var", "AROW"; the diagonal loop,
:mod:`textcw.learners._kernels.diagonal_loop`). Kept as two arrays, the two values of a feature
sit in two cache lines far apart, so a shuffled epoch waits on main memory twice per non-zero
where the passive-aggressive learners, with one weight per feature, wait once. Kept as the two
columns of one C-ordered ``(n_rows, 2)`` array, ``mu_j`` and ``s_j`` are neighbours (16 bytes,
8 for a 32-bit state, never split across a 64-byte line since the array starts on a multiple
of 16): one line per feature. Measured on the benchmark's 200,000 x 10^6 Zipf rows (docs/
benchmarks.md), a diagonal AROW epoch reads and writes the state 20% faster this way.

The learners keep the names and shapes they always had: ``state["mu"]`` and ``state["s"]`` are
1-d views of the two columns (stride two values), so ``coef_``, ``sigma_``, ``state_dict()``
and the model files are what they were, value for value. :func:`paired_state` makes a new
state this way; :func:`pair` brings a state that arrives as two arrays (a model loaded from a
file, which stores the two arrays as it always did, or a state set by ``load_state_dict``)
back into one array before the next epoch writes it. ``coef_`` and ``sigma_`` of a binary
learner are handed out C-ordered (copies of a paired state), so that what is computed from them
sums in the order it always did; predictions and margin variances read a paired state where a
document's features need it (:func:`rows_dot`, :func:`weights_dot`), not a copy of the whole,
with the same sums bit for bit. Multi-class states (``d x K`` per array)
keep two arrays: the top-1 update scores a document against every label, which reads the
``K`` means of a feature, contiguous in a ``d x K`` array, and pairing them with the variances
would spread those over twice the lines.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["PairedState", "is_paired", "pair", "paired_state", "rows_dot", "weights_dot"]


def paired_state(n_rows: int, a: float, dtype=np.float64) -> tuple[np.ndarray, np.ndarray]:
    """``(mu, s)`` for ``n_rows`` features: ``mu = 0`` and ``s = a``, the two columns of one
    ``(n_rows, 2)`` C-ordered array."""
    both = np.empty((n_rows, 2), dtype=dtype)
    both[:, 0] = 0.0
    both[:, 1] = a
    return both[:, 0], both[:, 1]


def is_paired(mu: np.ndarray, s: np.ndarray) -> bool:
    """Whether ``mu`` and ``s`` are the two columns of one ``(n, 2)`` array the kernels can write:
    ``s[j]`` stored right after ``mu[j]`` for every ``j``, both writeable."""
    if not (isinstance(mu, np.ndarray) and isinstance(s, np.ndarray) and mu.ndim == 1
            and s.shape == mu.shape and s.dtype == mu.dtype and mu.flags.writeable and s.flags.writeable):
        return False
    both = mu.base
    return (isinstance(both, np.ndarray) and s.base is both and both.shape == (mu.shape[0], 2)
            and both.flags.c_contiguous and mu.strides == s.strides == (2 * mu.itemsize,)
            and s.ctypes.data == mu.ctypes.data + mu.itemsize)


def pair(mu: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mu, s)`` as the two columns of one array: themselves when they are already
    (:func:`is_paired`), else copies with the same values, bit for bit."""
    if is_paired(mu, s):
        return mu, s
    if mu.ndim != 1 or s.shape != mu.shape or s.dtype != mu.dtype:
        raise ValueError(f"mu and s must be vectors of one shape and dtype to be paired; got "
                         f"{mu.shape} {mu.dtype} and {s.shape} {s.dtype}")
    both = np.empty((mu.shape[0], 2), dtype=mu.dtype)
    both[:, 0] = mu
    both[:, 1] = s
    return both[:, 0], both[:, 1]


def rows_dot(X, w: np.ndarray) -> np.ndarray:
    """``X @ w`` for a canonical CSR ``X`` (sorted, unique indices) and a vector ``w``, equal bit
    for bit to scipy's product. scipy copies a ``w`` with a stride (a paired ``mu`` or ``s``)
    into a C-ordered vector first, ``O(n_features)`` per call: a thousand times the work of
    scoring one document under a hashed model of 2^20 features. Here only the entries the rows
    use are read (``O(nnz)``): the products ``x_j w_j`` are formed as scipy forms them, then
    summed row by row in index order by scipy itself (a product times 1.0 is exact)."""
    if w.flags.c_contiguous:
        return np.asarray(X @ w)
    products = X.data * w[X.indices]
    terms = sp.csr_matrix((products, np.arange(X.nnz), X.indptr), shape=(X.shape[0], X.nnz))
    return terms @ np.ones(X.nnz)


def used_columns(X) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(X.indices, return_inverse=True)``: the columns the rows use, in order, and each
    entry's position among them (so sorted rows stay sorted). Where the rows fill a good part of
    the columns, a mark per column replaces the sort (a tenth of its time on a training set's
    scores); a few rows in a wide (hashed) space keep the sort of their entries."""
    if X.shape[1] > 8 * X.nnz:
        columns, local = np.unique(X.indices, return_inverse=True)
        return columns, local.reshape(-1)
    used = np.zeros(X.shape[1], dtype=bool)
    used[X.indices] = True
    columns = np.flatnonzero(used)
    position = np.empty(X.shape[1], dtype=np.intp)
    position[columns] = np.arange(columns.size)
    return columns, position[X.indices]


def rows_dots(X, vectors) -> np.ndarray:
    """``(n, len(vectors))``: column ``k`` is ``rows_dot(X, vectors[k])``, bit for bit. The strided
    vectors are read once each at the columns the rows use, into one ``(columns, vectors)`` block
    that scipy multiplies in one pass over the rows: each sum is formed in index order from zero
    as one vector's product forms it, and a multi-label model scores a chunk once for all its
    labels instead of label by label (one gather of scattered entries per label and entry)."""
    out = np.empty((X.shape[0], len(vectors)))
    strided = []
    for k, w in enumerate(vectors):
        if w.flags.c_contiguous:
            out[:, k] = X @ w
        else:
            strided.append(k)
    if strided:
        columns, local = used_columns(X)
        rows = sp.csr_matrix((X.data, local, X.indptr), shape=(X.shape[0], columns.size))
        block = np.empty((columns.size, len(strided)))
        for j, k in enumerate(strided):
            block[:, j] = vectors[k][columns]
        out[:, strided] = rows @ block
    return out


def weight_vector(model) -> np.ndarray:
    """The weights of a fitted binary learner without its intercept, as ``coef_.ravel()`` holds
    them: a paired mean as the strided view its state keeps (not copied whole)."""
    state = model.__dict__.get("_state")
    mu = state.get(getattr(model, "weights", "mu")) if isinstance(state, dict) else None
    if isinstance(mu, np.ndarray) and mu.ndim == 1 and not mu.flags.c_contiguous:
        return model.fitted_state()[model.weights][: model.n_features_in_]
    return model.coef_.ravel()


def weights_dot(model, X) -> np.ndarray:
    """``X @ model.coef_.ravel()`` for a fitted binary learner and a canonical CSR ``X``, reading a
    paired mean where the rows need it (:func:`rows_dot`) instead of copying it whole."""
    return rows_dot(X, weight_vector(model))


class PairedState:
    """The Gaussian learners' side of the layout: before every epoch, a binary problem's ``mu``
    and ``s`` of a form that pairs them (``form.paired``) are made the two columns of one array,
    copied only when they are not already (a fresh state is, :func:`paired_state`)."""

    def _writeable_state(self, skip: tuple[str, ...] = ()) -> None:
        state = self._state
        if self.form.paired and self._binary:
            state["mu"], state["s"] = pair(state["mu"], state["s"])
            skip = (*skip, "mu", "s")
        super()._writeable_state(skip)
