"""Perceptron and Passive-Aggressive (PA, PA-I, PA-II) kernels: the rules as steps of the
per-feature loop (:mod:`.feature_loop`), which runs their binary and top-1 multi-class epochs.

PA step sizes follow Crammer et al., "Online Passive-Aggressive Algorithms", JMLR 2006, eq. (7)
(docs/algorithms.md "Passive-Aggressive"): with hinge loss ``l = max(0, 1 - m)`` and
``q = ||g||^2``, ``tau = l / q`` (PA), ``min(C, l / q)`` (PA-I), ``l / (q + 1 / (2C))`` (PA-II).

Weighted examples (docs/algorithms.md "Weighted examples"): the binary and top-1 kernels take an
optional ``weights`` array, one weight ``s > 0`` per row (indexed like ``y``; ``None`` is all
ones). The perceptron's step becomes ``s`` (``w += s y x``); PA-I and PA-II solve JMLR 2006
eqs. 4 and 5 with the slack penalty ``s C xi`` (``s C xi^2``), i.e. ``C -> s C`` for that example.
Plain PA (eq. 2) has no slack to weight; the learner refuses weights for it. A weight of 1
multiplies exactly, so unit weights give the unweighted model bit for bit.

On the loop the weights are one state array ``w`` (with ``average=True`` also the running
average's accumulator ``u``, :func:`.common.move_mean`); the rule is :func:`rule_step`, and the
parameters are ``(rule, C, scale, lag)``: PA's ``C``, the perceptron's step ``scale`` (1, or the
example's weight) and the example's 0-based index among all those seen (for ``u``), which
:func:`example_params` sets per example.
"""

from __future__ import annotations

import math

from textcw._jit import KernelRef, kernel
from textcw.learners._kernels.constants import PA, PA1, PA2, PERCEPTRON, SMALLEST_NORMAL
from textcw.learners._kernels.feature_loop import binary_loop, top1_loop


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
def weight(state, c):
    """The weight of cell ``c``: ``w[c]``."""
    return state[0][c]


@kernel
def rule_step(m, q, params):
    """``tau`` of the rule ``params[0]`` for margin ``m`` and ``q = ||g||^2``: the perceptron's
    ``scale`` on a mistake (``m <= 0``), :func:`step_size` for PA where the hinge loss is
    positive (``m < 1``)."""
    rule = params[0]
    if rule == PERCEPTRON:
        return params[2] if m <= 0.0 else 0.0
    if m < 1.0:
        return step_size(rule, m, q, params[1])
    return 0.0


@kernel
def additive_update(state, c, x, g, params):
    """``w[c] += g x``; with the running average also ``u[c] += lag g x`` (:func:`.common.move_mean`)."""
    delta = g * x
    state[0][c] += delta
    if len(state) > 1:
        state[1][c] += params[3] * delta


@kernel
def example_params(params, weight, lag):
    """PA's ``C -> s C`` and the perceptron's step ``s`` for an example of weight ``s`` (module
    docstring); ``lag`` for the running average."""
    return params[0], weight * params[1], weight * params[2], lag


WEIGHT, STEP, UPDATE, EXAMPLE = (KernelRef(f) for f in (weight, rule_step, additive_update, example_params))


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, rule, C, weights=None, u=None, count=None):
    """One epoch of binary updates; ``u`` and ``count`` (optional, together) keep the running
    average (:func:`.common.move_mean`)."""
    params = (rule, float(C), 1.0, 0.0)
    if u is None:
        return binary_loop(indptr, indices, data, y, order, (mu,), WEIGHT, STEP, UPDATE, EXAMPLE,
                           params, 0.0, weights, count, None)
    return binary_loop(indptr, indices, data, y, order, (mu, u), WEIGHT, STEP, UPDATE, EXAMPLE,
                       params, 0.0, weights, count, None)


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, rule, C, weights=None, u=None,
                          count=None):
    """Single-constraint top-1 update: the true label against its highest-scoring competitor.

    The difference vector ``g = f(x, y) - f(x, r)`` has ``||g||^2 = 2 ||x||^2``. ``weights``,
    ``u`` and ``count`` as for :func:`binary_epoch`.
    """
    params = (rule, float(C), 1.0, 0.0)
    if u is None:
        return top1_loop(indptr, indices, data, y, order, (mu.reshape(mu.size),), mu.shape[1], WEIGHT,
                         STEP, UPDATE, EXAMPLE, params, weights, count, None)
    return top1_loop(indptr, indices, data, y, order, (mu.reshape(mu.size), u.reshape(u.size)),
                     mu.shape[1], WEIGHT, STEP, UPDATE, EXAMPLE, params, weights, count, None)
