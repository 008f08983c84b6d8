"""The quadratic programs of AROW's and PA's joint multi-class updates, solved exactly.

Both have the matrix ``a 1 1' + diag(d)`` (one slack shared by the competitors for AROW, MLJ 2013
eqs. 25-27; the competitors' margins coupled through the true label's weights for PA, Crammer and
Singer 2003): the constraints couple only through the sum of the multipliers, so the KKT point is
found exactly by a one-dimensional search over that sum (:func:`shared_qp`) instead of by
Hildreth's sweeps (:mod:`.hildreth`), which converge slowly when ``a`` dominates.
"""

from __future__ import annotations

import math

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.constants import PA, PA1, PA2


@kernel
def _share(g, m0j, dj, upper):
    """``clip((g - m0_j) / d_j, 0, upper)``: a multiplier given ``g = 1 - a sum(lambda)``."""
    value = (g - m0j) / dj
    if value <= 0.0:
        return 0.0
    return upper if value > upper else value


@kernel
def _balance(t, m0, c, room, a, d, upper, k):
    """``sum_j clip((t - s_j) / d_j, 0, upper) - (room - t) / a``: increasing in ``t``, zero at the
    solution (``t = g - c``, ``s_j = m0_j - c``, ``room = 1 - c``; :func:`shared_qp`)."""
    total = -(room - t) / a
    for j in range(k):
        total += _share(t, m0[j] - c, d[j], upper)
    return total


@kernel
def shared_qp(m0, a, d, upper, k, lam, breaks):
    """``argmax b'l - a (sum l)^2 / 2 - sum_j d_j l_j^2 / 2`` over ``0 <= l_j <= upper``, ``b_j = 1 - m0_j``.

    The quadratic programs of AROW and PA have ``Q = a 1 1' + diag(d)``: the constraints couple
    only through ``L = sum(lambda)``. Their KKT conditions say ``lambda_j = clip((b_j - a L) / d_j,
    0, upper)``. This is the point Hildreth's cyclic projections converge to, reached exactly;
    the projections themselves converge slowly when ``a`` dominates ``d`` (thousands of sweeps
    for AROW with ``v_y >> v_r``). ``breaks`` is scratch space of length ``2k + 1``. Returns ``L``.

    We solve for ``g = 1 - a L`` rather than for ``L``: then ``b_j - a L = g - m0_j`` and
    ``lambda_j = clip((g - m0_j) / d_j, 0, upper)``, so ``g`` is the root of the increasing,
    piecewise-linear :func:`_balance`, whose breakpoints are the margins ``m0_j`` (and
    ``m0_j + upper d_j``) themselves. Between consecutive breakpoints the set of free multipliers
    is fixed and ``g`` solves a linear equation. In ``L`` the breakpoints ``b_j / a`` and the
    differences ``b_j - a L`` are formed from ``1 - m0_j``, which rounds tiny margins away: with
    AROW on small feature values (or after the variances have shrunk, so that ``a = v_y + r``
    is 1e16 times ``d_j = v_rj``) every breakpoint coincided, the free set was picked by rounding
    noise and the multipliers were wrong or all zero (no update, ever).
    """
    # Shift the origin to the largest violated margin c: g = c + t, breakpoints s_j = m0_j - c
    # (exact for margins within a factor 2 of c) and s_j + upper d_j, the end ``room = 1 - c``
    # (exact for c in [0.5, 1]). Near g = 0 this keeps the margins' own precision, near g = 1
    # that of 1 - m0_j: with margins 1 - 1e-16 and d_j = 1e-16, m0_j + upper d_j rounds to 1 and
    # PA-I's upper breakpoint vanished (tau = C where the solution is free, 0.555 < C = 0.7).
    c = -math.inf
    for j in range(k):
        if m0[j] < 1.0 and m0[j] > c:
            c = m0[j]
    if c == -math.inf:  # every margin is at least 1: lambda = 0
        for j in range(k):
            lam[j] = 0.0
        return 0.0
    room = 1.0 - c  # s_j = m0_j - c is formed where it is used: no array per call
    n = 0
    for j in range(k):
        if m0[j] < 1.0:  # constraint j is violated at lambda = 0
            breaks[n] = m0[j] - c
            n += 1
            if upper < math.inf and (m0[j] - c) + upper * d[j] < room:
                breaks[n] = (m0[j] - c) + upper * d[j]
                n += 1
    sorted_breaks = np.sort(breaks[:n])
    # _balance < 0 at the lowest breakpoint (no multiplier is positive yet and g < 1) and >= 0
    # at g = 1: the last breakpoint at which it is still <= 0 starts the root's piece
    lo, hi = 0, n - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _balance(sorted_breaks[mid], m0, c, room, a, d, upper, k) <= 0.0:
            lo = mid
        else:
            hi = mid - 1
    left = sorted_breaks[lo]
    right = room if lo == n - 1 else sorted_breaks[lo + 1]
    probe = 0.5 * (left + right)
    # on this piece: sum_free (g - m0_j) / d_j + upper n_upper = (1 - g) / a, so
    # g (sum_free 1/d_j + 1/a) = sum_free m0_j / d_j - upper n_upper + 1/a; breaks now records
    # each multiplier's side: 0 at zero, 1 free, 2 at the upper bound
    weight = 1.0 / a
    at_upper = 0
    for j in range(k):
        if probe <= m0[j] - c:
            breaks[j] = 0.0
        elif upper < math.inf and probe - (m0[j] - c) >= upper * d[j]:
            breaks[j] = 2.0
            at_upper += 1
        else:
            breaks[j] = 1.0
            weight += 1.0 / d[j]
    total = 0.0
    for j in range(k):
        if breaks[j] == 0.0:
            lam[j] = 0.0
        elif breaks[j] == 2.0:
            lam[j] = upper
        else:
            # g - m0_j written out so that only differences of margins appear (no 1 - m0):
            # (sum_free (m0_i - m0_j) / d_i - upper n_upper + (1 - m0_j) / a) / weight
            spread = (room - (m0[j] - c)) / a
            for i in range(k):
                if breaks[i] == 1.0:
                    spread += (m0[i] - m0[j]) / d[i]
            if at_upper:  # (only then: upper may be inf)
                spread -= upper * at_upper
            value = spread / weight / d[j]
            lam[j] = 0.0 if value <= 0.0 else (upper if value > upper else value)
        total += lam[j]
    return total


@kernel
def arow_multipliers(m0, vy, vr, k, r, lam):
    """MLJ 2013 eq. 27 (squared hinge over the k competitors, one shared slack ``xi``).

    ``min (mu - mu0)' Sigma0^{-1} (mu - mu0) / 2 + xi^2 / (2r)`` subject to ``m_j >= 1 - xi``. The
    dual gradient in ``lambda_j`` is ``1 - m_j - r sum(lambda)`` with the new margin
    ``m_j = m0_j + v_y sum(lambda) + v_rj lambda_j``: :func:`shared_qp` with ``b_j = 1 - m0_j``,
    ``a = v_y + r`` and ``d_j = v_rj``. For ``k = 1`` this is AROW's ``alpha = (1 - m) / (v + r)``
    (eq. 16).
    """
    return shared_qp(m0, vy + r, vr, math.inf, k, lam, np.empty(2 * k + 1))


@kernel
def pa_multipliers(rule, m0, xx, k, C, tau):
    """k-constraint PA, PA-I or PA-II, one slack per competitor.

    The new margins are ``m_j = m0_j + ||x||^2 (sum(tau) + tau_j)``: :func:`shared_qp` with
    ``b_j = 1 - m0_j``, ``a = ||x||^2`` and ``d_j = ||x||^2``, plus ``1/(2C)`` for PA-II (the
    squared slack), and ``tau_j <= C`` for PA-I. For ``k = 1`` this is the top-1 step (JMLR 2006
    eq. 7 with ``q = 2 ||x||^2``).
    """
    if rule != PA and rule != PA1 and rule != PA2:
        raise ValueError("unknown passive-aggressive rule code")
    d = np.empty(k)
    extra = 1.0 / (2.0 * C) if rule == PA2 else 0.0
    for j in range(k):
        d[j] = xx + extra
    upper = C if rule == PA1 else math.inf
    return shared_qp(m0, xx, d, upper, k, tau, np.empty(2 * k + 1))
