"""Small kernel building blocks: sparse dot products, scores and competitor choice."""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw._csr_kernel import kernel_ready  # noqa: F401  (the kernels' input check; imported here by tests)


@kernel
def column(j):
    """An index as the hot loops use it: unsigned.

    The kernel contract guarantees ``0 <= j < d`` for column indices and ``0 <= indptr[i]`` for
    positions; indexing with an unsigned integer lets numba drop its negative-index wraparound
    check, which is a quarter of a diagonal CW epoch. Use it only for values that serve as
    indices: numba types unsigned-with-signed arithmetic as float.
    """
    return np.uint64(j)


@kernel
def row_dot(indptr, indices, data, i, w):
    """``w . x_i`` for CSR row ``i``."""
    total = 0.0
    for p in range(column(indptr[i]), column(indptr[i + 1])):
        total += w[column(indices[p])] * data[p]
    return total


@kernel
def row_dot_and_variance(indptr, indices, data, i, w, s):
    """``(w . x_i, sum_j s_j x_ij^2)`` in one pass: the margin and, for a diagonal covariance
    ``s``, the margin variance ``x' Sigma x`` of a binary Gaussian learner."""
    score = 0.0
    variance = 0.0
    for p in range(column(indptr[i]), column(indptr[i + 1])):
        j = column(indices[p])
        xj = data[p]
        score += w[j] * xj
        variance += s[j] * xj * xj
    return score, variance


@kernel
def row_sq_norm(indptr, data, i):
    """``||x_i||^2``."""
    total = 0.0
    for p in range(column(indptr[i]), column(indptr[i + 1])):
        total += data[p] * data[p]
    return total


@kernel
def row_scores(indptr, indices, data, i, W, out):
    """``out[k] = W[:, k] . x_i`` for every label ``k`` (``W`` is feature-major, d x K)."""
    out[:] = 0.0
    for p in range(column(indptr[i]), column(indptr[i + 1])):
        j = column(indices[p])
        xj = data[p]
        for k in range(W.shape[1]):
            out[k] += W[j, k] * xj


@kernel
def top_competitor(scores, y):
    """The highest-scoring label other than ``y``; ties go to the lowest label index."""
    best = -1
    best_score = -np.inf
    for k in range(scores.shape[0]):
        if k != y and (best < 0 or scores[k] > best_score):
            best = k
            best_score = scores[k]
    return best


@kernel
def top_competitors(scores, y, k, out):
    """The ``k`` highest-scoring labels other than ``y``, best first, into ``out[:k]``.

    Ties go to the lowest label index, so ``out[0]`` is :func:`top_competitor`'s choice. Labels
    are inserted one by one into the sorted prefix (``O(K k)``): ``k`` is at most ``K - 1`` and a
    document's ``K`` scores already cost ``O(nnz K)``.
    """
    n = 0
    for label in range(scores.shape[0]):
        if label == y:
            continue
        score = scores[label]
        pos = n
        # move past every kept label that scores strictly less (equal scores keep the lower index first)
        while pos > 0 and scores[out[pos - 1]] < score:
            pos -= 1
        if pos < k:
            last = n if n < k else k - 1
            for q in range(last, pos, -1):
                out[q] = out[q - 1]
            out[pos] = label
            if n < k:
                n += 1
    return n


@kernel
def row_variances(indptr, indices, data, i, S, out):
    """``out[k] = sum_j S[j, k] x_ij^2`` for every label ``k``: ``x' Sigma_k x`` for diagonal blocks."""
    out[:] = 0.0
    for p in range(column(indptr[i]), column(indptr[i + 1])):
        j = column(indices[p])
        x2 = data[p] * data[p]
        for k in range(S.shape[1]):
            out[k] += S[j, k] * x2


# ---------------------------------------------------------------- lazy averaging of the mean
# Averaged learners (docs/algorithms.md "Averaging") predict with the mean of the weights after
# every example seen. The kernels that support it take two optional arrays after their other
# arguments: ``u`` (the shape of ``mu``) and ``count`` (one value, the examples seen before
# this call). Every change of the weights goes through :func:`move_mean`, which also adds
# ``lag * delta`` to ``u``, ``lag`` being the 0-based index of the example among all those seen;
# the average after ``T`` examples is then ``mu - u / T`` (Daume's trick, as in
# :mod:`.averaged`). With ``u=None`` (no averaging) numba prunes the branch: the update is the
# plain ``mu[at] += delta``, bit for bit.


@kernel
def move_mean(mu, u, at, delta, lag):
    """``mu[at] += delta``; when averaging, ``u[at] += lag * delta`` too (``at``: an index or a
    ``(row, label)`` pair)."""
    mu[at] += delta
    if u is not None:
        u[at] += lag * delta


@kernel
def examples_seen(count):
    """The examples seen before this kernel call: ``count[0]``, 0 without averaging."""
    if count is None:
        return 0.0
    return count[0]


@kernel
def add_examples(count, seen, n):
    """Record that this call saw ``n`` more examples after the ``seen`` before it."""
    if count is not None:
        count[0] = seen + n
