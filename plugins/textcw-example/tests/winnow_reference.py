"""Plain-numpy Balanced Winnow, written from the rule in ``textcw_example.winnow``'s docstring.

It is the independent twin of the numba kernels: one row at a time with vectorised numpy, the
multipliers as ``alpha ** x`` (the kernels use ``exp(x * log(alpha))``), the competitor by
``np.argmax``, the weights clipped to the kernels' bounds. The tests check that both agree to
1e-12.
"""

from __future__ import annotations

import numpy as np

LOW, HIGH = 1e-100, 1e100  # the kernels' saturation bounds (see textcw_example.kernels)


def _scale(w, factor):
    with np.errstate(over="ignore"):
        return np.clip(w * factor, LOW, HIGH)


def binary_epoch(X, y, order, u, v, alpha, beta, theta, margin):
    """One epoch over CSR ``X`` with ``y`` in {-1, +1}; updates ``u``, ``v`` in place."""
    mistakes = updates = 0
    for i in order:
        lo, hi = X.indptr[i], X.indptr[i + 1]
        idx, x = X.indices[lo:hi], X.data[lo:hi]
        m = y[i] * (np.dot(u[idx] - v[idx], x) - theta)
        mistakes += int(m <= 0)
        if m <= margin and idx.size:
            updates += 1
            up, down = (alpha, beta) if y[i] > 0 else (beta, alpha)
            u[idx] = _scale(u[idx], up ** x)
            v[idx] = _scale(v[idx], down ** x)
    return mistakes, updates


def multiclass_epoch(X, y, order, u, v, alpha, beta, margin):
    """One top-1 epoch over CSR ``X`` with label indices ``y``; ``u``, ``v`` are ``d x K``."""
    mistakes = updates = 0
    for i in order:
        lo, hi = X.indptr[i], X.indptr[i + 1]
        idx, x = X.indices[lo:hi], X.data[lo:hi]
        scores = (u[idx] - v[idx]).T @ x
        competitors = scores.copy()
        competitors[y[i]] = -np.inf
        r = int(np.argmax(competitors))  # argmax breaks ties towards the lowest index
        m = scores[y[i]] - scores[r]
        mistakes += int(m <= 0)
        if m <= margin and idx.size:
            updates += 1
            u[idx, y[i]] = _scale(u[idx, y[i]], alpha ** x)
            v[idx, y[i]] = _scale(v[idx, y[i]], beta ** x)
            u[idx, r] = _scale(u[idx, r], beta ** x)
            v[idx, r] = _scale(v[idx, r], alpha ** x)
    return mistakes, updates
