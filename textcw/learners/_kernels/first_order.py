"""Perceptron and Passive-Aggressive (PA, PA-I, PA-II) kernels.

PA step sizes follow Crammer et al., "Online Passive-Aggressive Algorithms", JMLR 2006, eq. (7)
(docs/algorithms.md "Passive-Aggressive"): with hinge loss ``l = max(0, 1 - m)`` and
``q = ||g||^2``, ``tau = l / q`` (PA), ``min(C, l / q)`` (PA-I), ``l / (q + 1 / (2C))`` (PA-II).

Weighted examples (docs/algorithms.md "Weighted examples"): the binary and top-1 kernels take an
optional ``weights`` array, one weight ``s > 0`` per row (indexed like ``y``; ``None`` is all
ones). The perceptron's step becomes ``s`` (``w += s y x``); PA-I and PA-II solve JMLR 2006
eqs. 4 and 5 with the slack penalty ``s C xi`` (``s C xi^2``), i.e. ``C -> s C`` for that example.
Plain PA (eq. 2) has no slack to weight; the learner refuses weights for it. A weight of 1
multiplies exactly, so unit weights give the unweighted model bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import (
    add_examples,
    column,
    examples_seen,
    move_mean,
    row_dot,
    row_scores,
    row_sq_norm,
    top_competitor,
)
from textcw.learners._kernels.constants import PA, PA1, PA2, PERCEPTRON, SMALLEST_NORMAL
from textcw.learners._kernels.prefetch import prefetch_ahead


@kernel
def step_size(rule, m, q, C):
    """The multiplier of ``y x`` (binary) or of ``g`` (multi-class) for margin ``m``, ``q = ||g||^2``.

    Guards, which change nothing on ordinary data: for PA, whose step divides by ``q`` alone, a
    ``q`` below the smallest normal double (a document whose squared values underflow) makes no
    update, since ``loss / q`` would overflow (``constants.SMALLEST_NORMAL``); PA-I's cap and
    PA-II's ``1/(2C)`` keep their steps finite there. A step that is still not finite (a NaN
    margin, or a loss beyond about ``1e150`` against a tiny ``q``) makes no update either, rather
    than writing inf/NaN into the weights.
    """
    if rule == PERCEPTRON:
        return 1.0 if m <= 0.0 else 0.0
    loss = 1.0 - m
    if not loss > 0.0 or q <= 0.0:  # "not >": a NaN margin makes no update
        return 0.0
    if rule == PA:
        if q < SMALLEST_NORMAL:
            return 0.0
        tau = loss / q
    elif rule == PA1:
        tau = min(C, loss / q)
    elif rule == PA2:
        tau = loss / (q + 1.0 / (2.0 * C))
    else:
        raise ValueError("unknown first-order rule code")
    return tau if math.isfinite(tau) else 0.0


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, rule, C, weights=None, u=None, count=None):
    """One epoch of binary updates; ``u`` and ``count`` (optional) keep the running average
    (:func:`.common.move_mean`)."""
    w = mu
    seen = examples_seen(count)
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        # fetch the rows a few steps ahead: a shuffled epoch's rows start at random places
        prefetch_ahead(indptr, indices, data, order, t, w, w)
        if u is not None:  # the running average's accumulator, written with w
            prefetch_ahead(indptr, indices, data, order, t, u, u)
        i = order[t]
        weight = 1.0 if weights is None else weights[i]
        m = y[i] * row_dot(indptr, indices, data, i, w)
        if m <= 0.0:
            mistakes += 1
        # ||x||^2 only when a PA rule may update: a second pass over the row costs a third of
        # the epoch, and the perceptron never needs it
        if rule == PERCEPTRON:
            tau = weight if m <= 0.0 else 0.0
        elif m < 1.0:
            tau = step_size(rule, m, row_sq_norm(indptr, data, i), weight * C)
        else:
            tau = 0.0
        if tau > 0.0 and indptr[i + 1] > indptr[i]:
            updates += 1
            step = tau * y[i]
            for p in range(column(indptr[i]), column(indptr[i + 1])):
                move_mean(w, u, column(indices[p]), step * data[p], seen + t)
    add_examples(count, seen, order.shape[0])
    return mistakes, updates


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, rule, C, weights=None, u=None,
                          count=None):
    """Single-constraint top-1 update: the true label against its highest-scoring competitor.

    The difference vector ``g = f(x, y) - f(x, r)`` has ``||g||^2 = 2 ||x||^2``. ``weights``,
    ``u`` and ``count`` as for :func:`binary_epoch`.
    """
    W = mu
    seen = examples_seen(count)
    mistakes = 0
    updates = 0
    scores = np.empty(W.shape[1])
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        weight = 1.0 if weights is None else weights[i]
        row_scores(indptr, indices, data, i, W, scores)
        r = top_competitor(scores, yi)
        m = scores[yi] - scores[r]
        if m <= 0.0:
            mistakes += 1
        if rule == PERCEPTRON:
            tau = weight if m <= 0.0 else 0.0
        elif m < 1.0:
            tau = step_size(rule, m, 2.0 * row_sq_norm(indptr, data, i), weight * C)
        else:
            tau = 0.0
        if tau > 0.0 and indptr[i + 1] > indptr[i]:
            updates += 1
            for p in range(column(indptr[i]), column(indptr[i + 1])):
                j = column(indices[p])
                move_mean(W, u, (j, yi), tau * data[p], seen + t)
                move_mean(W, u, (j, r), -(tau * data[p]), seen + t)
    add_examples(count, seen, order.shape[0])
    return mistakes, updates
