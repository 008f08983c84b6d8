"""Plain-numpy NHERD, written from the update in ``textcw_example.nherd``'s docstring.

The independent twin of the numba kernels: one row at a time with vectorised numpy, the
competitor by ``np.argmax`` over the other labels, the variances in the textbook order of each
formula (``1 / (1/s + c x^2)``, ``s - beta (s x)^2``, ``s / (1 + C x^2 s)^2``) where the kernels
regroup products. :func:`full_update` is the paper's full-covariance update, for checking the
diagonal forms where the diagonal is the whole matrix.
"""

from __future__ import annotations

import numpy as np

SMALLEST_NORMAL = np.finfo(float).tiny  # below it, v has underflowed: no update (textcw's guard)


def steps(m, v, C):
    """``(alpha, beta, c)``: ``alpha = max(0, 1 - m) / (v + 1/C)``, ``c = 2C + C^2 v``,
    ``beta = c / (1 + c v)``; ``None`` when there is no update."""
    if not v >= SMALLEST_NORMAL or m >= 1.0:
        return None
    c = 2.0 * C + C * C * v
    return (1.0 - m) / (v + 1.0 / C), c / (1.0 + c * v), c


def new_variances(s, x, beta, c, C, covariance, floor):
    if covariance == "diag-kl":
        new = 1.0 / (1.0 / s + c * x * x)
    elif covariance == "diag-l2":
        new = s - beta * (s * x) ** 2
    elif covariance == "exact":
        new = s / (1.0 + C * x * x * s) ** 2
    else:
        raise ValueError(covariance)
    return np.maximum(new, floor)


def binary_epoch(X, y, order, mu, s, covariance, C, floor):
    """One epoch over CSR ``X`` with ``y`` in {-1, +1}; updates ``mu``, ``s`` in place."""
    mistakes = updates = 0
    for i in order:
        idx, x = X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]
        m = y[i] * np.dot(mu[idx], x)
        v = np.dot(s[idx], x * x)
        mistakes += int(m <= 0)
        step = steps(m, v, C)
        if step is not None:
            alpha, beta, c = step
            updates += 1
            mu[idx] += alpha * y[i] * s[idx] * x
            s[idx] = new_variances(s[idx], x, beta, c, C, covariance, floor)
    return mistakes, updates


def multiclass_epoch(X, y, order, mu, s, covariance, C, floor):
    """One top-1 epoch over CSR ``X`` with label indices ``y``; ``mu``, ``s`` are ``d x K``."""
    mistakes = updates = 0
    for i in order:
        idx, x = X.indices[X.indptr[i]:X.indptr[i + 1]], X.data[X.indptr[i]:X.indptr[i + 1]]
        scores = x @ mu[idx]
        yi = y[i]
        others = np.where(np.arange(mu.shape[1]) == yi, -np.inf, scores)
        r = int(np.argmax(others))  # the first maximum: ties to the lowest index
        m = scores[yi] - scores[r]
        v = np.dot(s[idx, yi] + s[idx, r], x * x)
        mistakes += int(m <= 0)
        step = steps(m, v, C)
        if step is not None:
            alpha, beta, c = step
            updates += 1
            mu[idx, yi] += alpha * s[idx, yi] * x
            mu[idx, r] -= alpha * s[idx, r] * x
            s[idx, yi] = new_variances(s[idx, yi], x, beta, c, C, covariance, floor)
            s[idx, r] = new_variances(s[idx, r], x, beta, c, C, covariance, floor)
    return mistakes, updates


def full_update(mu, Sigma, x, y, C):
    """The paper's binary update with a full covariance: ``(mu, Sigma)`` after example ``(x, y)``.

    ``Sigma <- Sigma - Sigma x x' Sigma (C^2 v + 2C) / (1 + C v)^2``, as printed, not as the
    precision update it equals.
    """
    v = x @ Sigma @ x
    m = y * (mu @ x)
    if m >= 1.0:
        return mu, Sigma
    Sx = Sigma @ x
    alpha = (1.0 - m) / (v + 1.0 / C)
    return mu + alpha * y * Sx, Sigma - np.outer(Sx, Sx) * (C * C * v + 2.0 * C) / (1.0 + C * v) ** 2
