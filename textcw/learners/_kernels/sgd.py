"""Stochastic gradient descent on a convex loss of the margin, with L2 decay.

Per example ``t`` (counted from 1 over the model's whole life, across epochs and ``partial_fit``
calls), with margin ``m = y w.x`` and loss derivative ``g = -dloss/dm >= 0``:

    w <- (1 - eta_t alpha) w + eta_t g y x

Losses (``g`` as a function of ``m``): hinge ``max(0, 1 - m)`` (``g = 1`` if ``m < 1``), log
``log(1 + e^{-m})`` (``g = 1 / (1 + e^m)``), modified Huber (``(1 - m)^2`` for ``m >= -1``,
``-4 m`` below; ``g = 2 (1 - m)`` or ``4``; Zhang 2004).

Schedules: ``decay`` ``eta_t = eta0 / (1 + eta0 alpha t)`` (Bottou, "Stochastic gradient descent
tricks", 2012: the step of SGD on an L2-regularised objective), ``constant`` ``eta_t = eta0``,
``invscaling`` ``eta_t = eta0 / t^power_t``.

The decay touches every weight; to keep an update ``O(nnz(x))`` the weights are stored as
``w = scale * u`` (Shalev-Shwartz et al., Pegasos 2007; Bottou's svmsgd): the decay multiplies
``scale`` and the gradient step adds to ``u`` divided by ``scale``. ``scale`` is folded back into
the weights when it drops below 1e-9 (so ``u`` cannot overflow) and at the end of every call, so
the state always holds the plain weights. The learner refuses ``eta0 alpha >= 1`` for the
``constant`` and ``invscaling`` schedules, where ``1 - eta_t alpha`` would not be positive.

Weighted examples (docs/algorithms.md "Weighted examples"): with an optional ``weights`` array
(one ``s >= 0`` per row, ``None`` all ones) the example's objective is ``s loss(m) +
(alpha/2) ||w||^2``, whose gradient step is ``eta_t s g y x`` after the same decay.

Multi-class (top-1): ``m = w_y.x - w_r.x`` for the top competitor ``r``; ``w_y += eta_t g x`` and
``w_r -= eta_t g x``; the decay applies to every block.
"""

from __future__ import annotations

import math

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import column, row_dot, row_scores, top_competitor
from textcw.learners._kernels.constants import CONSTANT, DECAY, HINGE, INVSCALING, LOG, MODIFIED_HUBER

_RESCALE_BELOW = 1e-9


@kernel
def negative_slope(loss, m):
    """``g = -dloss/dm`` at margin ``m`` (zero when the example does not move the weights)."""
    if loss == HINGE:
        return 1.0 if m < 1.0 else 0.0
    if loss == LOG:
        # 1 / (1 + e^m) without overflow for large |m|
        if m > 0.0:
            e = math.exp(-m)
            return e / (1.0 + e)
        return 1.0 / (1.0 + math.exp(m))
    if loss == MODIFIED_HUBER:
        if m >= 1.0:
            return 0.0
        if m >= -1.0:
            return 2.0 * (1.0 - m)
        return 4.0
    raise ValueError("unknown SGD loss code")


@kernel
def learning_rate(schedule, t, alpha, eta0, power_t):
    if schedule == DECAY:
        return eta0 / (1.0 + eta0 * alpha * t)
    if schedule == CONSTANT:
        return eta0
    if schedule == INVSCALING:
        return eta0 / t ** power_t
    raise ValueError("unknown SGD learning-rate schedule code")


@kernel
def _fold(w, scale):
    if scale != 1.0:
        w *= scale
    return 1.0


@kernel
def _decayed(w, scale, decay):
    """The scale after this example's decay ``1 - eta_t alpha``, folded into ``w`` first if small.

    Folding before the gradient step, not after it: the step adds ``eta g y x / scale`` to the
    stored weights, and with a large ``alpha`` the decay can make ``scale`` tiny or exactly 0 in
    one example (``1 - eta_t alpha`` rounds to 0 once ``eta0 alpha`` reaches about 1e16, as
    ``eta_t alpha = eta0 alpha / (1 + eta0 alpha t)`` rounds to 1), and that division would
    overflow or give inf/NaN. Folded, the weights are the decayed ones (all zero if the decay
    is complete) and the step divides by 1.
    """
    scale *= decay
    if scale < _RESCALE_BELOW:
        return _fold(w, scale)
    return scale


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, count, loss, schedule, alpha, eta0, power_t,
                 weights=None):
    w = mu
    mistakes = 0
    updates = 0
    scale = 1.0
    for step in range(order.shape[0]):
        i = order[step]
        count[0] += 1.0
        eta = learning_rate(schedule, count[0], alpha, eta0, power_t)
        m = y[i] * scale * row_dot(indptr, indices, data, i, w)
        if m <= 0.0:
            mistakes += 1
        g = negative_slope(loss, m)
        scale = _decayed(w, scale, 1.0 - eta * alpha)
        if g > 0.0 and indptr[i + 1] > indptr[i]:
            updates += 1
            weight = 1.0 if weights is None else weights[i]
            step_size = eta * g * weight * y[i] / scale
            for p in range(column(indptr[i]), column(indptr[i + 1])):
                w[column(indices[p])] += step_size * data[p]
    _fold(w, scale)
    return mistakes, updates


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, count, loss, schedule, alpha, eta0,
                          power_t, weights=None):
    W = mu
    mistakes = 0
    updates = 0
    scale = 1.0
    scores = np.empty(W.shape[1])
    for step in range(order.shape[0]):
        i = order[step]
        yi = y[i]
        count[0] += 1.0
        eta = learning_rate(schedule, count[0], alpha, eta0, power_t)
        row_scores(indptr, indices, data, i, W, scores)
        rc = top_competitor(scores, yi)
        m = scale * (scores[yi] - scores[rc])
        if m <= 0.0:
            mistakes += 1
        g = negative_slope(loss, m)
        scale = _decayed(W, scale, 1.0 - eta * alpha)
        if g > 0.0 and indptr[i + 1] > indptr[i]:
            updates += 1
            weight = 1.0 if weights is None else weights[i]
            step_size = eta * g * weight / scale
            for p in range(column(indptr[i]), column(indptr[i + 1])):
                j = column(indices[p])
                W[j, yi] += step_size * data[p]
                W[j, rc] -= step_size * data[p]
    _fold(W, scale)
    return mistakes, updates
