"""Multi-class updates with k constraints solved jointly (``multiclass="exact"``).

For one example with true label ``y`` and competitors ``r_1..r_k`` (the top-k labels by current
score) every learner's "exact" update solves one convex problem with a constraint, or a loss
term, per competitor on the difference vectors ``g_j = f(x, y) - f(x, r_j)``, as EMNLP 2009
(section 5.2) and MLJ 2013 (section 3.3, eq. 27) prescribe. Their solution is the point
Hildreth's algorithm converges to (Censor and Zenios, "Parallel Optimization", 1997): cyclic
coordinate ascent on the Lagrange multipliers ``lambda_j >= 0``, each step projecting onto
constraint ``j`` from the current point with the other multipliers fixed; unlike a plain
sequence of projections it may *lower* ``lambda_j`` (to zero at most) when the other
constraints have made constraint ``j`` slack. For CW (a nonlinear problem) textcw runs exactly
that, sweeping until no multiplier moves by more than ``TOLERANCE`` of the largest: the KKT
system to rounding (every constraint holds, those with ``lambda_j > 0`` with equality). For the
quadratic programs of AROW and PA it computes the same KKT point directly (below). The tests
check the solutions against ``scipy.optimize.minimize``.

Why each step is cheap. The covariance is block-diagonal, one block per label, so the label
scores ``s_l = mu_l . x`` are independent with variances ``v_l = x' Sigma_l x``, and
``V = G' Sigma G = v_y 1 1' + diag(v_r)``. The stationarity conditions give the mean
``mu = mu_0 + Sigma_0 G lambda`` (``Sigma_0`` from before the update), so the new margins are
``m_j = m0_j + v_y sum(lambda) + v_rj lambda_j``; every problem lives in the ``k + 1`` scores.

The callers use :func:`cw_solve`, which checks the sweeps' result against the KKT conditions
(:func:`cw_kkt_residual`) and, when the sweeps ran out or stopped short, continues them with
vector extrapolation (:func:`cw_accelerated`) until the conditions hold; the learners count
those examples in ``n_solver_fallbacks_``.

- CW (:func:`cw_multipliers`): the precision becomes ``P_0 + G diag(D) G'`` with
  ``D_j = 2 phi lambda_j`` (var, JMLR eq. 18's KKT) or ``phi lambda_j / sqrt(v_j)`` (stdev,
  eq. 31's). ``G diag(D) G'`` couples ``s_y`` with each ``s_rj``; eliminating the competitors,
  the true label's score variance after the update is ``sigma_y = 1 / (1/v_y + T)`` with
  ``T = sum_j t_j``, ``t_j = D_j / (1 + D_j v_rj)``. With the other multipliers fixed, the variance
  of margin ``j`` is ``W_j / (1 + D_j W_j)`` where ``W_j = sigma_y(without j) + v_rj``, so the
  step on ``lambda_j`` is a binary CW step whose mean moves along ``v_y + v_rj`` while its
  variance is ``W_j``: a quadratic with a closed-form root (:func:`cw_coordinate`).
- AROW (:func:`.shared_qp.arow_multipliers`): MLJ 2013 eq. 27 with the squared hinge of eq. 25, one slack
  shared by the competitors: maximise ``sum_j lambda_j (1 - m0_j) - lambda' V lambda / 2 -
  r (sum lambda)^2 / 2``.
- PA (:func:`.shared_qp.pa_multipliers`): ``min ||W - W_t||^2 / 2`` subject to ``m_j >= 1`` (PA), plus
  ``C sum_j xi_j`` (PA-I) or ``C sum_j xi_j^2`` (PA-II), one slack per competitor: the form in
  which one Hildreth sweep from zero is exactly ``multiclass="seq"`` (k PA steps in order).

These two are quadratic programs whose matrix is ``a 1 1' + diag(d)``; their KKT point is found
exactly (:func:`.shared_qp.shared_qp`) instead of by sweeps, which converge slowly when ``a`` dominates.

The covariance of the joint solution couples blocks; :func:`cw_block_steps` gives the rank-one
coefficients that keep its block-diagonal part (``diag-l2``, ``full``), the same projection the
top-1 update makes.
"""

from __future__ import annotations

import math

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.constants import CW_STDEV, CW_VAR

TOLERANCE = 1e-14  # relative change of the multipliers at which a sweep ends the iteration
MAX_SWEEPS = 10_000


@kernel
def cw_coordinate(rule, a, q, W, phi):
    """``(lambda_j, D_j)`` with constraint ``j`` met with equality (or ``(0, 0)`` if it holds at 0).

    The new margin is ``a + q lambda`` (``a`` includes the other multipliers, ``q = v_y + v_rj``);
    the variance of the margin is ``W / (1 + D W)``.

    - var: ``a + q lambda = phi W / (1 + 2 phi lambda W)``, i.e.
      ``2 phi W q lambda^2 + b lambda + (a - phi W) = 0`` with ``b = q + 2 phi a W``. The positive
      root is written ``2 (phi W - a) / (b + sqrt(disc))`` when ``b > 0`` (the printed form
      cancels near the boundary, as in JMLR eq. 18; see ``gaussian_rules.cw_var_steps``).
    - stdev: the new margin ``s = a + q lambda`` equals ``phi sqrt(u)`` where ``u``, the new
      variance, solves ``u + lambda W phi sqrt(u) - W = 0`` (eq. 31's ``sqrt_u`` with ``v = W``):
      ``s^2 (q + W phi^2) - W a phi^2 s - W q phi^2 = 0``. Then
      ``lambda = (s - a) / q``, written without cancellation for ``a > 0``, and
      ``D = phi lambda / sqrt(u)``.

    With ``W = q`` (one constraint) both reduce to the binary closed forms.
    """
    if rule == CW_VAR:
        if a >= phi * W:
            return 0.0, 0.0
        b = q + 2.0 * phi * a * W
        root = math.sqrt(b * b - 8.0 * phi * W * q * (a - phi * W))
        if b > 0.0:
            lam = 2.0 * (phi * W - a) / (b + root)
        else:
            lam = (root - b) / (4.0 * phi * W * q)
        return lam, 2.0 * phi * lam
    if rule != CW_STDEV:
        raise ValueError("unknown CW rule code for the joint multi-class update")
    if a >= phi * math.sqrt(W):
        return 0.0, 0.0
    phi2 = phi * phi
    h = 2.0 * q + W * phi2
    root = math.sqrt(W * W * a * a * phi2 * phi2 + 4.0 * (q + W * phi2) * W * q * phi2)
    if a > 0.0:
        lam = 2.0 * (phi2 * W - a * a) / (root + a * h)
    else:
        lam = (root - a * h) / (2.0 * q * (q + W * phi2))
    # sqrt(u) in the rationalised form of gaussian_rules.stdev_covariance_steps
    lwp = lam * W * phi
    sqrt_u = 2.0 * W / (lwp + math.hypot(lwp, 2.0 * math.sqrt(W)))
    return lam, lam * phi / sqrt_u


@kernel
def _precision_share(d, vr):
    """``t = D / (1 + D v_r)``: what a constraint adds to the true label's score precision."""
    if d <= 0.0:
        return 0.0
    return 1.0 / (1.0 / d + vr)  # finite even if D overflows


@kernel
def cw_multipliers(rule, m0, vy, vr, k, phi, lam, D, t):
    """Solve the k-constraint CW problem; fills ``lam``, ``D`` and ``t`` (see the module docstring).

    ``m0[j]`` and ``vr[j]`` are the margin and the competitor's score variance before the
    update, ``vy`` the true label's. Returns the number of sweeps made.
    """
    for j in range(k):
        lam[j] = 0.0
        D[j] = 0.0
        t[j] = 0.0
    for sweep in range(MAX_SWEEPS):
        change, top = _sweep(rule, m0, vy, vr, k, phi, lam, D, t)
        if change <= TOLERANCE * top:
            return sweep + 1
    return MAX_SWEEPS


# The fallback of :func:`cw_solve`: the joint KKT residual a solution must reach (relative to the
# scale of the margins), and the sweeps the accelerated iteration may take to get there.
KKT_TOLERANCE = 1e-9
FALLBACK_SWEEPS = 200_000
_EXTRAPOLATE_EVERY = 8  # sweeps between two extrapolation steps of the fallback


@kernel
def cw_kkt_residual(rule, m0, vy, vr, k, phi, lam, D, t):
    """The largest violation of the joint problem's KKT conditions at ``(lam, D, t)``, relative.

    With ``L = sum(lambda)`` and ``T = sum(t)``, margin ``j`` after the update is
    ``m_j = m0_j + v_y L + v_rj lambda_j`` and its variance ``u_j = W_j / (1 + D_j W_j)`` with
    ``W_j = v_y / (1 + v_y (T - t_j)) + v_rj`` (module docstring). The conditions: ``lambda_j >= 0``;
    every constraint holds, ``m_j >= phi u_j`` (var) or ``phi sqrt(u_j)`` (stdev); those with
    ``lambda_j > 0`` with equality; and ``D_j`` is the multiplier's precision increment
    (``2 phi lambda_j``, or ``phi lambda_j / sqrt(u_j)``) with ``t_j = D_j / (1 + D_j v_rj)``. The
    gaps are divided by ``1 + max_j |m_j|`` (and ``D``'s by ``1 + max D``). ``inf`` if anything
    is not finite.
    """
    total = 0.0
    T = 0.0
    top_m = 0.0
    top_d = 0.0
    for j in range(k):
        total += lam[j]
        T += t[j]
        top_d = max(top_d, abs(D[j]))
    for j in range(k):
        top_m = max(top_m, abs(m0[j] + vy * total + vr[j] * lam[j]))
    worst = 0.0
    for j in range(k):
        if not (lam[j] >= 0.0 and np.isfinite(lam[j]) and np.isfinite(D[j])):
            return math.inf
        W = vy / (1.0 + vy * (T - t[j])) + vr[j]
        u = W / (1.0 + D[j] * W)
        bound = phi * u if rule == CW_VAR else phi * math.sqrt(u)
        gap = (m0[j] + vy * total + vr[j] * lam[j] - bound) / (1.0 + top_m)
        worst = max(worst, -gap)  # the constraint must hold
        if lam[j] > 0.0:
            worst = max(worst, abs(gap))  # with equality when its multiplier is positive
        want_d = 2.0 * phi * lam[j] if rule == CW_VAR else phi * lam[j] / math.sqrt(u)
        worst = max(worst, abs(D[j] - want_d) / (1.0 + top_d))
        worst = max(worst, abs(t[j] - _precision_share(D[j], vr[j])) / (1.0 + abs(t[j])))
    return worst


@kernel
def _sweep(rule, m0, vy, vr, k, phi, lam, D, t):
    """One Hildreth sweep (the loop body of :func:`cw_multipliers`); returns ``(change, top)``."""
    change = 0.0
    top = 0.0
    for j in range(k):
        others_lam = 0.0
        others_t = 0.0
        for i in range(k):
            if i != j:
                others_lam += lam[i]
                others_t += t[i]
        q = vy + vr[j]
        # W_j: margin j's variance under the other constraints' update (sigma_y shrinks)
        W = q if others_t == 0.0 else vy / (1.0 + vy * others_t) + vr[j]
        new, d = cw_coordinate(rule, m0[j] + vy * others_lam, q, W, phi)
        change = max(change, abs(new - lam[j]))
        top = max(top, new)
        lam[j] = new
        D[j] = d
        t[j] = _precision_share(d, vr[j])
    return change, top


@kernel
def cw_accelerated(rule, m0, vy, vr, k, phi, lam, D, t, previous, step):
    """Hildreth's sweeps from the current point, with vector extrapolation; the sweeps made.

    Why sweeps stall: the coordinate steps are Gauss-Seidel on a system whose curvature is
    ``v_y 1 1' + diag(v_r)``. When ``v_y`` is much larger than the ``v_rj`` (a true label seen
    rarely against competitors seen often) every multiplier moves the true label's score by
    ``v_y lambda_j``, so each step undoes most of the others' and the error shrinks by about
    ``1 - v_r / (k v_y)`` per sweep: 10,000 sweeps leave the competitors' multipliers tens of
    percent off at ``v_y / v_r = 1000``. The error is then dominated by one slowly decaying
    direction, ``delta_n ~ rho^n e``; every few sweeps this estimates ``rho`` from two
    consecutive sweep differences and jumps to the limit of the geometric series,
    ``lambda + delta rho / (1 - rho)`` (Aitken's extrapolation applied to the vector; ``t`` and
    ``D`` are moved alike and the next sweep recomputes both from the multipliers). Extrapolation
    only chooses where the sweeps continue from: the iteration ends, as :func:`cw_multipliers`
    does, when a full sweep moves no multiplier by more than ``TOLERANCE`` of the largest, so
    the point returned is a fixed point of the exact coordinate steps. ``previous`` and ``step``
    are scratch arrays of length ``k``.
    """
    have_previous = False
    previous_norm = 0.0
    for sweep in range(FALLBACK_SWEEPS):
        for j in range(k):
            step[j] = lam[j]
        change, top = _sweep(rule, m0, vy, vr, k, phi, lam, D, t)
        if change <= TOLERANCE * top:
            return sweep + 1
        norm = 0.0
        for j in range(k):
            step[j] = lam[j] - step[j]
            norm += step[j] * step[j]
        norm = math.sqrt(norm)
        if have_previous and sweep % _EXTRAPOLATE_EVERY == 0 and previous_norm > 0.0:
            dot = 0.0
            for j in range(k):
                dot += step[j] * previous[j]
            rho = dot / (previous_norm * previous_norm)
            # the steps point the same way and shrink: a geometric tail to jump over
            if 0.0 < rho < 1.0 and norm <= previous_norm:
                jump = rho / (1.0 - rho)
                for j in range(k):
                    value = lam[j] + jump * step[j]
                    value = value if value > 0.0 else 0.0
                    # D is proportional to lambda for var and nearly so for stdev
                    D[j] = D[j] * (value / lam[j]) if lam[j] > 0.0 else 0.0
                    lam[j] = value
                    t[j] = _precision_share(D[j], vr[j])
                have_previous = False
                continue
        for j in range(k):
            previous[j] = step[j]
        previous_norm = norm
        have_previous = True
    return FALLBACK_SWEEPS


@kernel
def cw_solve(rule, m0, vy, vr, k, phi, lam, D, t, scratch):
    """:func:`cw_multipliers`, checked: 0 if its sweeps converged, 1 if the fallback ran and was
    certified, 2 if not even the fallback reached the KKT conditions.

    The sweeps' own stop (no multiplier moves) is reached on almost every example and is left
    exactly as it was. When they run out (``MAX_SWEEPS``) or stop at a point whose KKT residual
    (:func:`cw_kkt_residual`) exceeds ``KKT_TOLERANCE``, :func:`cw_accelerated` continues from
    there. If that fails too (2), the point with the smaller residual is kept. ``scratch`` holds
    ``5 k`` floats.
    """
    sweeps = cw_multipliers(rule, m0, vy, vr, k, phi, lam, D, t)
    if sweeps < MAX_SWEEPS and cw_kkt_residual(rule, m0, vy, vr, k, phi, lam, D, t) <= KKT_TOLERANCE:
        return 0
    before = cw_kkt_residual(rule, m0, vy, vr, k, phi, lam, D, t)
    for j in range(k):  # keep the sweeps' point in case the fallback does no better
        scratch[2 * k + j] = lam[j]
        scratch[3 * k + j] = D[j]
        scratch[4 * k + j] = t[j]
    cw_accelerated(rule, m0, vy, vr, k, phi, lam, D, t, scratch[:k], scratch[k:2 * k])
    after = cw_kkt_residual(rule, m0, vy, vr, k, phi, lam, D, t)
    if after <= KKT_TOLERANCE:
        return 1
    if before < after:
        for j in range(k):
            lam[j] = scratch[2 * k + j]
            D[j] = scratch[3 * k + j]
            t[j] = scratch[4 * k + j]
    return 2


@kernel
def cw_block_steps(k, vy, vr, D, t, beta_r, c_r):
    """Rank-one coefficients of the block-diagonal part of the joint CW update.

    The joint covariance is ``Sigma* = Sigma_0 - Sigma_0 G (D^{-1} + V)^{-1} G' Sigma_0``. Its
    ``y`` block is ``Sigma_y - beta_y (Sigma_y x)(Sigma_y x)'`` with
    ``beta_y = (v_y - sigma_y) / v_y^2 = T / (1 + v_y T)``, its ``r_j`` block
    ``Sigma_rj - beta_j (Sigma_rj x)(Sigma_rj x)'`` with ``beta_j = t_j (1 - sigma_y t_j)``. On the
    precision (Sherman-Morrison) these are ``+ c x x'`` with ``c = beta / (1 - beta v)``:
    ``c_y = T`` and ``c_j = beta_j / (1 / (1 + D_j v_rj) + sigma_y t_j^2 v_rj)``. Every expression
    is a sum or product of positive terms (no cancellation). Returns ``(beta_y, c_y)`` and fills
    ``beta_r``, ``c_r``; for ``k = 1`` these are the top-1 kernels' ``beta``, ``c / (1 + c v_r)``
    and ``c / (1 + c v_y)``.
    """
    T = 0.0
    for j in range(k):
        T += t[j]
    sigma_y = vy / (1.0 + vy * T)
    for j in range(k):
        if D[j] <= 0.0:
            beta_r[j] = 0.0
            c_r[j] = 0.0
            continue
        others = 0.0
        for i in range(k):
            if i != j:
                others += t[i]
        # 1 - sigma_y t_j = (1/v_y + T - t_j) / (1/v_y + T)
        beta_r[j] = t[j] * (1.0 + vy * others) / (1.0 + vy * T)
        c_r[j] = beta_r[j] / (1.0 / (1.0 + D[j] * vr[j]) + sigma_y * t[j] * t[j] * vr[j])
    return T / (1.0 + vy * T), T
