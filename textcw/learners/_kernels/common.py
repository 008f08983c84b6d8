"""Small kernel building blocks: sparse dot products, scores and competitor choice."""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel


@kernel
def row_dot(indptr, indices, data, i, w):
    """``w . x_i`` for CSR row ``i``."""
    total = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        total += w[indices[p]] * data[p]
    return total


@kernel
def row_sq_norm(indptr, data, i):
    """``||x_i||^2``."""
    total = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        total += data[p] * data[p]
    return total


@kernel
def row_scores(indptr, indices, data, i, W, out):
    """``out[k] = W[:, k] . x_i`` for every label ``k`` (``W`` is feature-major, d x K)."""
    out[:] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        j = indices[p]
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
