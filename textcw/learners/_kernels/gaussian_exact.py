"""CW with the exact diagonal update (JMLR 2012, section 6.2): ``covariance="exact"``.

Instead of diagonalising a full update (diag-kl, diag-l2), the constraint is solved with the
covariance restricted to diagonal matrices. There is no closed form; the mean step ``alpha`` is
the unique root beyond ``L = max(0, -m / v)`` of (docs/algorithms.md "CW exact diagonal", with
``w_j = s_j x_j^2``)

    var:    f(alpha) = m + alpha v - sum_j phi w_j / (1 + 2 alpha phi w_j)
    stdev:  g(alpha) = m + alpha v - sum_j phi^2 w_j / (m + alpha v + alpha phi^2 w_j)

followed by ``s_j <- s_j / (1 + 2 alpha phi w_j)`` (var) or
``s_j <- s_j t / (t + alpha phi^2 w_j)`` (stdev), and ``mu += alpha y s * x`` with the old ``s``.
The update is made only when the constraint is violated before it.

Numerics. We solve in ``t = m + alpha v``, the new margin, not in ``alpha``: on noisy streams
``v`` can be 1e-18 and the root then sits within rounding of ``L`` in ``alpha`` while ``t`` stays
well scaled. ``t`` is bracketed by ``(max(0, m), phi v]`` (var) or ``(max(0, m), phi sqrt(v)]``
(stdev) because each sum is at most ``phi v`` (resp. ``phi^2 v / t``). Both functions are
increasing and concave in ``t``, so Newton's method started at the left end stays left of the
root and converges monotonically (quadratically near it); a step that leaves the bracket falls
back to bisection. The update then uses ``alpha w_j = (t - m) (w_j / v)``, a product of
well-scaled factors. Variances are floored, and the mean step grouped as
``alpha * (s_j x_j)``, as in :mod:`.gaussian_diag`.

Guards (they change nothing on ordinary data), as for the closed-form rules
(:func:`.gaussian_rules.steps`): a document whose margin variance ``v`` is below the smallest
normal double makes no update (every step divides by ``v``), nor does one whose step
``alpha = (t - m) / v`` is not finite (a margin out of range against a tiny ``v``).
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import add_examples, column, examples_seen, move_mean
from textcw.learners._kernels.common import row_scores, top_competitor
from textcw.learners._kernels.constants import CW_STDEV, CW_VAR, SMALLEST_NORMAL

_MAX_ITER = 200
_EPS = 2.220446049250313e-16
_UNKNOWN_RULE = "unknown rule code for covariance='exact' (CW var or stdev only)"


@kernel
def _value(rule, t, m, v, phi, w, n):
    """``f(t)`` (var) or ``g(t)`` (stdev) and its derivative, over ``w[:n]``."""
    k = t - m  # alpha v
    f = t
    df = 1.0
    if rule == CW_VAR:
        for j in range(n):
            q = 2.0 * phi * w[j] / v  # 2 phi w_j / v, so that 2 alpha phi w_j = k q
            den = 1.0 + k * q
            f -= phi * w[j] / den
            df += phi * w[j] * q / (den * den)
    elif rule == CW_STDEV:
        phi2 = phi * phi
        for j in range(n):
            q = phi2 * w[j] / v  # alpha phi^2 w_j = k q
            den = t + k * q
            f -= phi2 * w[j] / den
            df += phi2 * w[j] * (1.0 + q) / (den * den)
    else:
        raise ValueError(_UNKNOWN_RULE)
    return f, df


@kernel
def solve_margin(rule, m, v, phi, w, n):
    """The new margin ``t`` at which the exact diagonal constraint holds with equality."""
    lo = m if m > 0.0 else 0.0
    if rule == CW_VAR:
        hi = phi * v
    elif rule == CW_STDEV:
        hi = phi * np.sqrt(v)
    else:
        raise ValueError(_UNKNOWN_RULE)
    t = lo
    f, df = _value(rule, t, m, v, phi, w, n)
    if not np.isfinite(f):  # stdev with m == 0: g(0) = -inf; start inside the bracket
        t = 0.5 * (lo + hi)
        f, df = _value(rule, t, m, v, phi, w, n)
    for _ in range(_MAX_ITER):
        if f == 0.0:
            return t
        if f > 0.0:
            hi = t
        else:
            lo = t
        step = t - f / df
        new = step if (lo < step < hi) else 0.5 * (lo + hi)
        if abs(new - t) <= 4.0 * _EPS * abs(new) or hi - lo <= 4.0 * _EPS * hi:
            return new
        t = new
        f, df = _value(rule, t, m, v, phi, w, n)
    return t


@kernel
def widest_row(indptr):
    width = 1
    for i in range(indptr.shape[0] - 1):
        width = max(width, indptr[i + 1] - indptr[i])
    return width


@kernel
def violated(rule, m, v, phi):
    if not v >= SMALLEST_NORMAL:  # empty, or its squares underflow (also false for NaN)
        return False
    if rule == CW_VAR:
        return m < phi * v
    if rule == CW_STDEV:
        return m < phi * np.sqrt(v)
    raise ValueError(_UNKNOWN_RULE)


@kernel
def usable(k, v):
    """Whether the margin change ``k = t - m`` makes an update: positive, ``alpha = k / v`` finite."""
    return k > 0.0 and np.isfinite(k / v)


@kernel
def new_variance(rule, s_j, wv, k, t, phi, floor):
    """``s_j`` after the update, from ``wv = w_j / v`` and ``k = t - m = alpha v``."""
    if rule == CW_VAR:
        new = s_j / (1.0 + 2.0 * phi * k * wv)
    elif rule == CW_STDEV:
        # s_j t / (t + alpha phi^2 w_j), divided through by t: the product s_j t overflows when
        # the initial variance a is huge (t ~ phi sqrt(v) ~ sqrt(a)), the ratio does not
        new = s_j / (1.0 + phi * phi * k * wv / t)
    else:
        raise ValueError(_UNKNOWN_RULE)
    return new if new > floor else floor


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, s, rule, phi, floor, u=None, count=None):
    """One epoch of binary updates; ``u`` and ``count`` (optional) keep the running average of
    the mean (:func:`.common.move_mean`)."""
    seen = examples_seen(count)
    w = np.empty(widest_row(indptr))  # w_j = s_j x_j^2 of the current row
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        start = indptr[i]
        n = indptr[i + 1] - start
        score = 0.0
        v = 0.0
        for p in range(start, start + n):
            j = column(indices[p])
            score += mu[j] * data[p]
            w[p - start] = s[j] * data[p] * data[p]
            v += w[p - start]
        m = y[i] * score
        if m <= 0.0:
            mistakes += 1
        if not violated(rule, m, v, phi):
            continue
        t = solve_margin(rule, m, v, phi, w, n)
        k = t - m
        if not usable(k, v):
            continue
        updates += 1
        ky = k * y[i] / v  # alpha y
        for p in range(start, start + n):
            j = column(indices[p])
            move_mean(mu, u, j, ky * (s[j] * data[p]), seen + step)
            s[j] = new_variance(rule, s[j], w[p - start] / v, k, t, phi, floor)
    add_examples(count, seen, order.shape[0])
    return mistakes, updates


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, s, rule, phi, floor, u=None,
                          count=None):
    """Top-1: the constraint on ``g = f(x, y) - f(x, r)`` sums over both blocks' variances;
    ``u`` and ``count`` as for :func:`binary_epoch`."""
    seen = examples_seen(count)
    w = np.empty(2 * widest_row(indptr))  # both blocks' w_j, interleaved
    scores = np.empty(mu.shape[1])
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        yi = y[i]
        start = indptr[i]
        n = indptr[i + 1] - start
        row_scores(indptr, indices, data, i, mu, scores)
        rc = top_competitor(scores, yi)
        m = scores[yi] - scores[rc]
        if m <= 0.0:
            mistakes += 1
        v = 0.0
        for p in range(start, start + n):
            j = column(indices[p])
            x2 = data[p] * data[p]
            w[2 * (p - start)] = s[j, yi] * x2
            w[2 * (p - start) + 1] = s[j, rc] * x2
            v += w[2 * (p - start)] + w[2 * (p - start) + 1]
        if not violated(rule, m, v, phi):
            continue
        t = solve_margin(rule, m, v, phi, w, 2 * n)
        k = t - m
        if not usable(k, v):
            continue
        updates += 1
        a = k / v  # alpha
        for p in range(start, start + n):
            j = column(indices[p])
            move_mean(mu, u, (j, yi), a * (s[j, yi] * data[p]), seen + step)
            move_mean(mu, u, (j, rc), -(a * (s[j, rc] * data[p])), seen + step)
            s[j, yi] = new_variance(rule, s[j, yi], w[2 * (p - start)] / v, k, t, phi, floor)
            s[j, rc] = new_variance(rule, s[j, rc], w[2 * (p - start) + 1] / v, k, t, phi, floor)
    add_examples(count, seen, order.shape[0])
    return mistakes, updates
