"""Gaussian learners with a full covariance, kept as the Cholesky factor of the precision.

The same rules as the diagonal kernels (:mod:`.gaussian_rules`), with the exact full update
(docs/algorithms.md "Covariance forms"): ``mu += alpha y Sigma x`` and ``Sigma^{-1} += c x x'``
(equivalently ``Sigma -= beta (Sigma x)(Sigma x)'``), applied to ``R`` with ``P = Sigma^{-1} = R' R`` (see
:mod:`.linalg` for why the precision factor and not ``Sigma`` itself).

Binary state: ``mu`` of shape ``(d,)``, ``R`` of shape ``(d, d)``. Multi-class (top-1): ``mu`` of
shape ``(d, K)`` and one factor per label, ``R`` of shape ``(K, d, d)``.

Numerical guard: the precision increment is capped so that the margin variance after the update,
``v / (1 + c v)``, stays at or above ``floor * ||g||^2`` (``g`` the update direction, ``floor`` =
``a * VARIANCE_FLOOR``): the full-covariance counterpart of the diagonal kernels' variance floor
(:mod:`.gaussian_diag` explains the CW-stdev collapse it prevents). It bounds every increment by
``I / floor`` (in spectral norm), so the precision grows at most linearly in the number of
updates. Without it CW-stdev's increments, which grow like ``(m phi / v)^2``, overflow the factor
to inf/NaN within a few thousand updates of a noisy stream, whatever the representation. In the
normal regime it never fires and the update is exactly the papers'.
"""

from __future__ import annotations

import math

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import add_examples, column, examples_seen, move_mean, top_competitor
from textcw.learners._kernels.gaussian_rules import steps
from textcw.learners._kernels.linalg import back_solve, cholesky_update, dot, forward_solve, scatter_row


@kernel
def guarded_increment(c, v, gg, floor):
    """The precision increment ``c``, capped so that ``v / (1 + c v) >= floor * gg``."""
    lowest = floor * gg
    if v <= lowest:
        return 0.0
    cap = (v - lowest) / (lowest * v)
    return c if c < cap else cap


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, R, rule, phi, C, r, floor, u=None, count=None):
    """One epoch of binary updates; ``u`` and ``count`` (optional) keep the running average of
    the mean (:func:`.common.move_mean`; the mean step is dense here, ``O(d)`` like the update)."""
    seen = examples_seen(count)
    d = mu.shape[0]
    x = np.empty(d)
    z = np.empty(d)
    sx = np.empty(d)
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        xx = scatter_row(indptr, indices, data, i, x)
        m = y[i] * dot(mu, x)
        if m <= 0.0:
            mistakes += 1
        if xx == 0.0:
            continue
        forward_solve(R, x, z)
        v = dot(z, z)
        alpha, beta, c = steps(rule, m, v, phi, C, r)
        if alpha > 0.0:
            updates += 1
            back_solve(R, z, sx)  # Sigma x, with Sigma before the update
            ay = alpha * y[i]
            for k in range(d):
                move_mean(mu, u, k, ay * sx[k], seen + t)
            c = guarded_increment(c, v, xx, floor)
            if c > 0.0:
                root = math.sqrt(c)
                for k in range(d):
                    x[k] *= root
                cholesky_update(R, x)
    add_examples(count, seen, order.shape[0])
    return mistakes, updates


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, R, rule, phi, C, r, floor, u=None,
                          count=None):
    """Top-1 update on ``g = f(x, y) - f(x, r)``: ``v = v_y + v_r`` with ``v_k = x' Sigma_k x``.

    docs/algorithms.md "Multi-class" gives each block the binary covariance update with ``x``
    and the pair's ``beta``: ``Sigma_k -= beta (Sigma_k x)(Sigma_k x)'``. On the precision
    (Sherman-Morrison)
    that is ``Sigma_k^{-1} += beta / (1 - beta v_k) x x'``, and with ``beta = c / (1 + c v)``,
    ``beta / (1 - beta v_y) = c / (1 + c v_r)`` (and symmetrically for ``r``): positive and free
    of cancellation. ``u`` and ``count`` as for :func:`binary_epoch`.
    """
    seen = examples_seen(count)
    d, K = mu.shape
    x = np.empty(d)
    w = np.empty(d)
    zy = np.empty(d)
    zr = np.empty(d)
    sx = np.empty(d)
    scores = np.empty(K)
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        xx = scatter_row(indptr, indices, data, i, x)
        for k in range(K):
            scores[k] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = column(indices[p])
            for k in range(K):
                scores[k] += mu[j, k] * data[p]
        rc = top_competitor(scores, yi)
        m = scores[yi] - scores[rc]
        if m <= 0.0:
            mistakes += 1
        if xx == 0.0:
            continue
        forward_solve(R[yi], x, zy)
        forward_solve(R[rc], x, zr)
        vy = dot(zy, zy)
        vr = dot(zr, zr)
        v = vy + vr
        alpha, beta, c = steps(rule, m, v, phi, C, r)
        if alpha > 0.0:
            updates += 1
            back_solve(R[yi], zy, sx)
            for k in range(d):
                move_mean(mu, u, (k, yi), alpha * sx[k], seen + t)
            back_solve(R[rc], zr, sx)
            for k in range(d):
                move_mean(mu, u, (k, rc), -(alpha * sx[k]), seen + t)
            c = guarded_increment(c, v, 2.0 * xx, floor)
            if c > 0.0:
                root = math.sqrt(c / (1.0 + c * vr))
                for k in range(d):
                    w[k] = root * x[k]
                cholesky_update(R[yi], w)
                root = math.sqrt(c / (1.0 + c * vy))
                for k in range(d):
                    w[k] = root * x[k]
                cholesky_update(R[rc], w)
    add_examples(count, seen, order.shape[0])
    return mistakes, updates
