"""NHERD's epoch kernels as they were written by hand before textcw's epoch loop took its step
(:mod:`textcw_example.nherd_step`): kept as the reference the loop must equal bit for bit.

Numba kernels of NHERD (Crammer and Lee, "Learning via Gaussian Herding", NIPS 2010).

The rule, its derivation and the three diagonal forms are in :mod:`textcw_example.nherd`. Per
example, with margin ``m`` and margin variance ``v = x' Sigma x`` (both before the update):

- ``alpha = max(0, 1 - m) / (v + 1/C)``; ``mu += alpha y Sigma x`` (old ``Sigma``);
- ``c = 2C + C^2 v``, the full update's precision increment ``Sigma^{-1} += c x x'``, applied per
  form: ``PROJECT`` (textcw's ``DIAG_KL``) ``1/s_j += c x_j^2``; ``DROP`` (``DIAG_L2``)
  ``s_j -= c / (1 + c v) (s_j x_j)^2``; ``EXACT`` ``s_j <- s_j / (1 + C x_j^2 s_j)^2``.

They follow textcw's kernel conventions (:mod:`textcw.kernels`): arguments
``(indptr, indices, data, y, order, mu, s, covariance, C, floor, counts=None)``, bound by name
from :meth:`textcw_example.nherd.NHERD.kernel_values`; return ``(mistakes, updates)``. The
guards are textcw's (docs/algorithms.md "Numerics"): a document whose ``v`` is below the smallest
normal double (an empty one) or whose steps are not finite makes no update, and every variance
the update changes is kept at or above ``floor`` (``a * VARIANCE_FLOOR``), the updates where the
floor stood in being counted in ``counts[COUNT_FLOORED]``.

The diag-kl and diag-l2 variances go through :func:`textcw.kernels.update_variance`, textcw's own
diagonal update (``1/s_j += c x_j^2`` as ``s_j / (1 + c s_j x_j^2)``; ``s_j -= beta (s_j x_j)^2``),
with NHERD's ``c`` and ``beta = c / (1 + c v)``.
"""

from __future__ import annotations

import math

import numpy as np
from textcw.kernels import (
    COUNT_FLOORED,
    DIAG_KL,
    DIAG_L2,
    SMALLEST_NORMAL,
    column,
    kernel,
    row_dot_and_variance,
    row_scores,
    top_competitor,
    update_variance,
)

PROJECT = DIAG_KL  # covariance="diag-kl"
DROP = DIAG_L2  # covariance="diag-l2"
EXACT = 2  # covariance="exact": NHERD's exact diagonal update
UNKNOWN_FORM = "unknown NHERD covariance code (PROJECT, DROP or EXACT)"


@kernel
def steps(m, v, C):
    """``(alpha, beta, c)`` of one example (all zero: no update).

    ``alpha = max(0, 1 - m) / (v + 1/C)``, ``c = 2C + C^2 v``, ``beta = c / (1 + c v)``.
    """
    if not v >= SMALLEST_NORMAL or m >= 1.0:  # an empty document, or no loss
        return 0.0, 0.0, 0.0
    alpha = (1.0 - m) / (v + 1.0 / C)
    c = 2.0 * C + C * C * v
    beta = c / (1.0 + c * v)
    if math.isfinite(alpha) and math.isfinite(beta) and math.isfinite(c):
        return alpha, beta, c
    return 0.0, 0.0, 0.0


@kernel
def variance(s_j, x_j, beta, c, C, covariance, floor):
    """One variance after the update, in the given form, kept at or above ``floor``."""
    if covariance == EXACT:
        shrink = 1.0 + C * (x_j * x_j * s_j)
        new = s_j / (shrink * shrink)
        return new if new > floor else floor
    if covariance == PROJECT or covariance == DROP:
        return update_variance(s_j, x_j, beta, c, covariance, floor)
    raise ValueError(UNKNOWN_FORM)


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, s, covariance, C, floor, counts=None):
    """One epoch of binary NHERD updates over the rows in ``order``."""
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        start, stop = column(indptr[i]), column(indptr[i + 1])
        score, v = row_dot_and_variance(indptr, indices, data, i, mu, s)
        m = y[i] * score
        if m <= 0.0:
            mistakes += 1
        alpha, beta, c = steps(m, v, C)
        if alpha > 0.0:
            updates += 1
            hit = False
            ay = alpha * y[i]
            for p in range(start, stop):
                j = column(indices[p])
                xj = data[p]
                sj = s[j]
                mu[j] += ay * (sj * xj)  # Sigma from before the update
                s[j] = variance(sj, xj, beta, c, C, covariance, floor)
                hit = hit or s[j] <= floor
            if hit and counts is not None:
                counts[COUNT_FLOORED] += 1
    return mistakes, updates


@kernel
def multiclass_epoch(indptr, indices, data, y, order, mu, s, covariance, C, floor, counts=None):
    """One epoch of top-1 multi-class NHERD: the binary update on ``f(x, y) - f(x, r)`` against
    the best other label ``r`` (ties to the lowest index): ``m = mu_y . x - mu_r . x``,
    ``v = x' Sigma_y x + x' Sigma_r x``; both blocks move (``mu_y += alpha Sigma_y x``,
    ``mu_r -= alpha Sigma_r x``) and both get the covariance update with ``x`` and that ``v``.
    """
    mistakes = 0
    updates = 0
    scores = np.empty(mu.shape[1])
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        start, stop = column(indptr[i]), column(indptr[i + 1])
        row_scores(indptr, indices, data, i, mu, scores)
        rc = top_competitor(scores, yi)
        m = scores[yi] - scores[rc]
        if m <= 0.0:
            mistakes += 1
        v = 0.0
        for p in range(start, stop):
            j = column(indices[p])
            v += (s[j, yi] + s[j, rc]) * data[p] * data[p]
        alpha, beta, c = steps(m, v, C)
        if alpha > 0.0:
            updates += 1
            hit = False
            for p in range(start, stop):
                j = column(indices[p])
                xj = data[p]
                mu[j, yi] += alpha * (s[j, yi] * xj)
                mu[j, rc] -= alpha * (s[j, rc] * xj)
                s[j, yi] = variance(s[j, yi], xj, beta, c, C, covariance, floor)
                s[j, rc] = variance(s[j, rc], xj, beta, c, C, covariance, floor)
                hit = hit or s[j, yi] <= floor or s[j, rc] <= floor
            if hit and counts is not None:
                counts[COUNT_FLOORED] += 1
    return mistakes, updates
