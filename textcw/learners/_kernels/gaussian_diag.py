"""Gaussian learners with a diagonal covariance (mean ``mu``, variances ``s``).

One kernel serves every rule of :mod:`.gaussian_rules` (CW var and stdev, AROW, SCW-I/II) and both
diagonalisations of docs/algorithms.md "Covariance forms":

- ``diag-kl`` ("project", ICML 2008): ``1/s_j += c x_j^2``;
- ``diag-l2`` ("drop"): ``s_j -= beta (s_j x_j)^2``.

The mean moves with the variances from before the update: ``mu_j += alpha y s_j x_j``.

Numerical guard (with its counterparts in :mod:`.gaussian_full` and :mod:`.gaussian_exact`, the
only place the kernels leave the papers' formulas): after each update a variance is kept at or
above ``floor = a * VARIANCE_FLOOR`` (``a`` the initial variance, so the guard scales with ``a``
and CW-stdev's invariance to ``a``, NIPS 2008 Lemma 3, is kept). In exact arithmetic both forms
keep ``s_j > 0``, but on a confident mistake (``m < 0``, small margin variance ``v``) CW-stdev's
increment grows like ``c ~ (m phi / v)^2`` (eq. 31 with ``alpha ~ |m| / v``), so the margin
variance drops from ``v`` to about ``v^2 / (m phi)^2`` in one update, and diag-kl hands the
whole increment to every active feature: on noisy data variances underflow to exactly 0 within a
few hundred updates, after which ``alpha ~ |m| / v`` overflows. The floor sits twelve orders of
magnitude below ``a``. On clean text it never fires (on 20 Newsgroups the smallest variance
after 5 epochs is about ``1e-3 a``), so the kernels equal the papers' updates there; on dense
low-dimensional data CW-stdev's diagonal forms at ``eta = 0.99`` do reach it, as does CW on long
noisy streams, and it then stands in for the underflow. The kernels count the updates after
which a variance they changed sits at the floor (``counts[COUNT_FLOORED]``, optional), which the
learners report as ``n_variance_floored_``.

Grouping of products (here and in the other diagonal and exact kernels): the mean step is
computed as ``alpha * (s_j x_j)`` and the precision increment as ``c * (s_j x_j^2)``, the
components of ``Sigma x`` and ``x' Sigma x`` (which is how ``v`` is summed), not as
``(alpha s_j) x_j``: with a large initial variance ``a`` and small feature values ``alpha s_j``
overflows (``alpha ~ 1/(s_j x_j^2)``, e.g. ``1e20 * 1e300`` for ``a = 1e300``, ``x = 1e-170``)
although the step itself is moderate. Equal up to rounding; the tests' twins use the plain order.

Weighted examples (docs/algorithms.md "Weighted examples"): the binary and top-1 kernels take an
optional ``weights`` array (one ``s > 0`` per row, ``None`` all ones). Weighting the example's
terms of the objective by ``s`` is, for AROW (MLJ 2013 eq. 3, whose loss and variance terms share
the factor ``1/(2r)``), the update with ``r -> r / s`` (eqs. 12, 15, 16), and for SCW (ICML 2012,
the slack penalty ``C xi`` or ``C xi^2``) the update with ``C -> s C``. The kernels pass
``s C`` and ``r / s`` to the rule; CW (a hard constraint) is refused weights by its learner.

Memory: each step first hints the cache lines of the rows a few steps ahead in ``order`` and of
their features' ``mu`` and ``s`` (:func:`.prefetch.prefetch_ahead`); a shuffled epoch otherwise
waits on main memory at the start of every row. The hints change no result.
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import (
    add_examples,
    column,
    examples_seen,
    move_mean,
    row_scores,
    top_competitor,
)
from textcw.learners._kernels.constants import COUNT_FLOORED, DIAG_KL, DIAG_L2
from textcw.learners._kernels.gaussian_rules import steps
from textcw.learners._kernels.prefetch import prefetch_ahead

UNKNOWN_FORM = "unknown diagonal covariance code (DIAG_KL or DIAG_L2)"


@kernel
def update_variance(s_j, x_j, beta, c, covariance, floor):
    """One variance after the update, kept at or above ``floor`` (see the module docstring).

    diag-kl's ``1/s_j += c x_j^2`` is computed as ``s_j / (1 + c s_j x_j^2)``: the same value with
    one division instead of two, which is a tenth of the epoch on text-sized data.
    """
    if covariance == DIAG_KL:
        new = s_j / (1.0 + c * (s_j * x_j * x_j))
    elif covariance == DIAG_L2:
        sx = s_j * x_j
        new = s_j - beta * sx * sx
    else:
        raise ValueError(UNKNOWN_FORM)
    return new if new > floor else floor


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, s, rule, covariance, phi, C, r, floor,
                 counts=None, weights=None, u=None, count=None):
    """One epoch of binary updates; returns ``(mistakes, updates)``.

    ``counts`` (optional, int64 of length ``N_COUNTS``): ``counts[COUNT_FLOORED]`` is increased by
    the updates after which a variance they changed sat at the floor. ``u`` and ``count``
    (optional) keep the running average of the mean (:func:`.common.move_mean`).
    """
    seen = examples_seen(count)
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        prefetch_ahead(indptr, indices, data, order, t, mu, s)
        if u is not None:  # the running average's accumulator, written with mu
            prefetch_ahead(indptr, indices, data, order, t, u, u)
        i = order[t]
        start = column(indptr[i])
        stop = column(indptr[i + 1])
        score = 0.0
        v = 0.0
        for p in range(start, stop):
            j = column(indices[p])
            xj = data[p]
            score += mu[j] * xj
            v += s[j] * xj * xj
        m = y[i] * score
        if m <= 0.0:
            mistakes += 1
        if weights is None:
            alpha, beta, c = steps(rule, m, v, phi, C, r)
        else:  # C -> s C, r -> r / s (module docstring)
            alpha, beta, c = steps(rule, m, v, phi, weights[i] * C, r / weights[i])
        if alpha > 0.0:
            updates += 1
            hit = False  # did the floor stand in for a variance of this update?
            ay = alpha * y[i]
            # One loop per form, so the hot loop has no branch on the form (update_variance
            # inlined by hand); the mean uses Sigma from before the update.
            if covariance == DIAG_KL:
                for p in range(start, stop):
                    j = column(indices[p])
                    xj = data[p]
                    sj = s[j]
                    move_mean(mu, u, j, ay * (sj * xj), seen + t)
                    new = sj / (1.0 + c * (sj * xj * xj))
                    hit = hit or new <= floor
                    s[j] = new if new > floor else floor
            elif covariance == DIAG_L2:
                for p in range(start, stop):
                    j = column(indices[p])
                    xj = data[p]
                    sj = s[j]
                    move_mean(mu, u, j, ay * (sj * xj), seen + t)
                    sx = sj * xj
                    new = sj - beta * sx * sx
                    hit = hit or new <= floor
                    s[j] = new if new > floor else floor
            else:
                raise ValueError(UNKNOWN_FORM)
            if hit and counts is not None:
                counts[COUNT_FLOORED] += 1
    add_examples(count, seen, order.shape[0])
    return mistakes, updates


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, s, rule, covariance, phi, C, r, floor,
                          counts=None, weights=None, u=None, count=None):
    """Top-1 multi-class update (EMNLP 2009; MLJ 2013 section 3.3): one binary update on
    ``f(x, y) - f(x, r)``: ``m = mu_y . x - mu_r . x``, ``v = x' Sigma_y x + x' Sigma_r x``;
    both blocks move and both get the binary covariance update with ``x``. ``counts``, ``u`` and
    ``count`` as for :func:`binary_epoch`.
    """
    seen = examples_seen(count)
    mistakes = 0
    updates = 0
    scores = np.empty(mu.shape[1])
    for t in range(order.shape[0]):
        prefetch_ahead(indptr, indices, data, order, t, mu, s)
        if u is not None:  # the running average's accumulator, written with mu
            prefetch_ahead(indptr, indices, data, order, t, u, u)
        i = order[t]
        yi = y[i]
        row_scores(indptr, indices, data, i, mu, scores)
        rc = top_competitor(scores, yi)
        m = scores[yi] - scores[rc]
        if m <= 0.0:
            mistakes += 1
        v = 0.0
        for p in range(column(indptr[i]), column(indptr[i + 1])):
            j = column(indices[p])
            v += (s[j, yi] + s[j, rc]) * data[p] * data[p]
        if weights is None:
            alpha, beta, c = steps(rule, m, v, phi, C, r)
        else:  # C -> s C, r -> r / s (module docstring)
            alpha, beta, c = steps(rule, m, v, phi, weights[i] * C, r / weights[i])
        if alpha > 0.0:
            updates += 1
            hit = False
            for p in range(column(indptr[i]), column(indptr[i + 1])):
                j = column(indices[p])
                xj = data[p]
                move_mean(mu, u, (j, yi), alpha * (s[j, yi] * xj), seen + t)
                move_mean(mu, u, (j, rc), -(alpha * (s[j, rc] * xj)), seen + t)
                s[j, yi] = update_variance(s[j, yi], xj, beta, c, covariance, floor)
                s[j, rc] = update_variance(s[j, rc], xj, beta, c, covariance, floor)
                hit = hit or s[j, yi] <= floor or s[j, rc] <= floor
            if hit and counts is not None:
                counts[COUNT_FLOORED] += 1
    add_examples(count, seen, order.shape[0])
    return mistakes, updates
