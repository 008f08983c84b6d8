"""Second-order perceptron kernels (Cesa-Bianchi, Conconi and Gentile, SIAM J. Comput. 2005).

State: ``vsum`` (the sum of ``y x`` over past mistakes), the correlation
``A = a I + sum over past mistakes of x x'`` and the weights ``mu = A^{-1} vsum`` exposed as
``coef_``. The prediction includes the current example
(docs/algorithms.md "Second-order perceptron"):
``score = vsum' (A + x x')^{-1} x``; on a mistake (``y score <= 0``) ``vsum += y x`` and ``A += x x'``.

- Full: ``A = R' R`` is kept as its upper Cholesky factor (:mod:`.linalg`). By Sherman-Morrison,
  ``vsum' (A + x x')^{-1} x = (mu . x) / (1 + x' A^{-1} x)``, one forward solve per example.
- Diagonal: ``A`` keeps only its diagonal, so ``score = sum_j vsum_j x_j / (A_jj + x_j^2)``.

Multi-class (top-1, an extension in the style of the papers' multi-class reductions): one block
``(vsum_k, A_k)`` per label; on a mistake against the top competitor ``r``, ``vsum_y += x``,
``vsum_r -= x`` and both blocks add ``x x'``.
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import column, top_competitor
from textcw.learners._kernels.linalg import back_solve, cholesky_update, dot, forward_solve, scatter_row


@kernel
def _diag_score(indptr, indices, data, i, vsum, A):
    score = 0.0
    for p in range(column(indptr[i]), column(indptr[i + 1])):
        j = column(indices[p])
        xj = data[p]
        score += vsum[j] * xj / (A[j] + xj * xj)
    return score


@kernel
def binary_diag_epoch(indptr, indices, data, y, order, mu, vsum, A):
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        if y[i] * _diag_score(indptr, indices, data, i, vsum, A) <= 0.0:
            mistakes += 1
            if indptr[i + 1] > indptr[i]:
                updates += 1
                for p in range(column(indptr[i]), column(indptr[i + 1])):
                    j = column(indices[p])
                    vsum[j] += y[i] * data[p]
                    A[j] += data[p] * data[p]
                    mu[j] = vsum[j] / A[j]
    return mistakes, updates


@kernel
def multiclass_diag_epoch(indptr, indices, data, y, order, mu, vsum, A):
    K = mu.shape[1]
    scores = np.empty(K)
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        for k in range(K):
            scores[k] = 0.0
        for p in range(column(indptr[i]), column(indptr[i + 1])):
            j = column(indices[p])
            xj = data[p]
            for k in range(K):
                scores[k] += vsum[j, k] * xj / (A[j, k] + xj * xj)
        rc = top_competitor(scores, yi)
        if scores[yi] - scores[rc] <= 0.0:
            mistakes += 1
            if indptr[i + 1] > indptr[i]:
                updates += 1
                for p in range(column(indptr[i]), column(indptr[i + 1])):
                    j = column(indices[p])
                    x2 = data[p] * data[p]
                    vsum[j, yi] += data[p]
                    vsum[j, rc] -= data[p]
                    A[j, yi] += x2
                    A[j, rc] += x2
                    mu[j, yi] = vsum[j, yi] / A[j, yi]
                    mu[j, rc] = vsum[j, rc] / A[j, rc]
    return mistakes, updates


@kernel
def _refresh_weights(R, vsum, z, mu):
    """``mu = A^{-1} vsum`` by two triangular solves (exact, so no drift accumulates)."""
    forward_solve(R, vsum, z)
    back_solve(R, z, mu)


@kernel
def binary_full_epoch(indptr, indices, data, y, order, mu, vsum, R):
    d = mu.shape[0]
    x = np.empty(d)
    z = np.empty(d)
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        xx = scatter_row(indptr, indices, data, i, x)
        if xx > 0.0:
            forward_solve(R, x, z)
            score = dot(mu, x) / (1.0 + dot(z, z))
        else:
            score = 0.0
        if y[i] * score <= 0.0:
            mistakes += 1
            if xx > 0.0:
                updates += 1
                for k in range(d):
                    vsum[k] += y[i] * x[k]
                cholesky_update(R, x)
                _refresh_weights(R, vsum, z, mu)
    return mistakes, updates


@kernel
def multiclass_full_epoch(indptr, indices, data, y, order, mu, vsum, R):
    """``mu`` and ``vsum`` have shape ``(d, K)``; ``R`` has shape ``(K, d, d)``."""
    d, K = mu.shape
    x = np.empty(d)
    z = np.empty(d)
    col = np.empty(d)
    out = np.empty(d)
    scores = np.empty(K)
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        xx = scatter_row(indptr, indices, data, i, x)
        for k in range(K):
            if xx > 0.0:
                forward_solve(R[k], x, z)
                total = 0.0
                for j in range(d):
                    total += mu[j, k] * x[j]
                scores[k] = total / (1.0 + dot(z, z))
            else:
                scores[k] = 0.0
        rc = top_competitor(scores, yi)
        if scores[yi] - scores[rc] <= 0.0:
            mistakes += 1
            if xx > 0.0:
                updates += 1
                for label, sign in ((yi, 1.0), (rc, -1.0)):
                    for j in range(d):
                        vsum[j, label] += sign * x[j]
                        z[j] = x[j]
                    cholesky_update(R[label], z)
                    for j in range(d):
                        col[j] = vsum[j, label]
                    _refresh_weights(R[label], col, z, out)
                    for j in range(d):
                        mu[j, label] = out[j]
    return mistakes, updates
