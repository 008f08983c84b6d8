"""One epoch loop for every diagonal Gaussian variant: the variant gives its step, textcw the loop.

:func:`diagonal_gaussian_kernels` takes a variant's two numba functions, as scikit-learn's SGD
takes a loss object into one loop:

- ``step(m, v, params) -> (alpha, beta, c)``: the mean step ``alpha`` (``mu += alpha y Sigma x``)
  and the two numbers the variance update reads, from the margin ``m`` and the margin variance
  ``v = x' Sigma x`` (both before the update); ``alpha <= 0`` means no update;
- ``variance(s_j, x_j, beta, c, params, covariance, floor) -> s_j'``: one variance after the
  update (e.g. :func:`.gaussian_diag.update_variance` for ``diag-kl``/``diag-l2``).

``params`` is the tuple of the variant's step parameters, in the order the kernels were built
with. The loop applies textcw's guards (docs/algorithms.md "Numerics"), so that a variant cannot
leave one out: a mistake is counted before the update and a tie counts as a mistake; a document
whose ``v`` is below the smallest normal double (an empty one, or an underflow) or whose steps are
not finite makes no update; every changed variance is kept at or above ``floor`` (``a *
VARIANCE_FLOOR``), and an update where the floor stood in is counted in
``counts[COUNT_FLOORED]``. The mean moves with ``Sigma`` from before the update. Multi-class
problems use the top-1 reduction (the update on ``f(x, y) - f(x, r)`` against the best other
label ``r``, ties to the lowest index; both label blocks move and get the variance update).

The built kernels take ``(indptr, indices, data, y, order, mu, s, covariance, floor, params,
counts=None)`` (:mod:`textcw.kernels`). They are compiled when first called, once per process
(numba caches functions defined at module level only).
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from textcw._jit import closure_kernel
from textcw.learners._kernels.common import column, row_scores, top_competitor
from textcw.learners._kernels.constants import COUNT_FLOORED, SMALLEST_NORMAL


class DiagonalKernels(NamedTuple):
    """The epoch kernels of one diagonal Gaussian variant (:func:`diagonal_gaussian_kernels`)."""

    binary: Callable
    top1: Callable
    params: tuple[str, ...]  # the step parameters, in the order of ``params``


def diagonal_gaussian_kernels(step, variance, params: tuple[str, ...]) -> DiagonalKernels:
    """The binary and top-1 multi-class epoch kernels of a diagonal Gaussian variant whose
    update is ``step`` and ``variance`` (numba functions, see the module docstring) with the
    step parameters named ``params``."""
    params = tuple(params)
    if not params or not all(isinstance(p, str) and p.isidentifier() for p in params):
        raise TypeError(f"params must name the step parameters (identifiers); got {params!r}")

    def guarded_step(m, v, values):
        if not v >= SMALLEST_NORMAL:  # an empty document, or an underflowed variance
            return 0.0, 0.0, 0.0
        alpha, beta, c = step(m, v, values)
        if alpha > 0.0 and math.isfinite(alpha) and math.isfinite(beta) and math.isfinite(c):
            return alpha, beta, c
        return 0.0, 0.0, 0.0

    guarded = closure_kernel(guarded_step)

    def binary_epoch(indptr, indices, data, y, order, mu, s, covariance, floor, params, counts=None):
        mistakes = 0
        updates = 0
        for t in range(order.shape[0]):
            i = order[t]
            start, stop = column(indptr[i]), column(indptr[i + 1])
            score = 0.0
            v = 0.0
            for p in range(start, stop):
                j = column(indices[p])
                xj = data[p]
                score += mu[j] * xj
                v += s[j] * xj * xj
            m = y[i] * score
            if m <= 0.0:  # before the update; a tie is a mistake
                mistakes += 1
            alpha, beta, c = guarded(m, v, params)
            if alpha > 0.0:
                updates += 1
                hit = False
                ay = alpha * y[i]
                for p in range(start, stop):
                    j = column(indices[p])
                    xj = data[p]
                    sj = s[j]
                    mu[j] += ay * (sj * xj)  # Sigma from before the update
                    new = variance(sj, xj, beta, c, params, covariance, floor)
                    hit = hit or new <= floor
                    s[j] = new if new > floor else floor
                if hit and counts is not None:
                    counts[COUNT_FLOORED] += 1
        return mistakes, updates

    def top1_epoch(indptr, indices, data, y, order, mu, s, covariance, floor, params, counts=None):
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
            alpha, beta, c = guarded(m, v, params)
            if alpha > 0.0:
                updates += 1
                hit = False
                for p in range(start, stop):
                    j = column(indices[p])
                    xj = data[p]
                    mu[j, yi] += alpha * (s[j, yi] * xj)
                    mu[j, rc] -= alpha * (s[j, rc] * xj)
                    new = variance(s[j, yi], xj, beta, c, params, covariance, floor)
                    hit = hit or new <= floor
                    s[j, yi] = new if new > floor else floor
                    new = variance(s[j, rc], xj, beta, c, params, covariance, floor)
                    hit = hit or new <= floor
                    s[j, rc] = new if new > floor else floor
                if hit and counts is not None:
                    counts[COUNT_FLOORED] += 1
        return mistakes, updates

    binary_epoch.__name__ = binary_epoch.__qualname__ = f"{getattr(step, '__name__', 'step')}_binary_epoch"
    top1_epoch.__name__ = top1_epoch.__qualname__ = f"{getattr(step, '__name__', 'step')}_top1_epoch"
    return DiagonalKernels(closure_kernel(binary_epoch), closure_kernel(top1_epoch), params)
