"""Multi-class Gaussian learners with diagonal covariance and k competing labels.

``multiclass="seq"|"par"|"exact"`` for ``diag-kl`` and ``diag-l2``
(docs/algorithms.md "Multi-class"; EMNLP 2009 section 5.2; MLJ 2013 section 3.3). The
competitors are the ``k`` labels other than
``y`` with the highest current scores, best first (ties to the lowest index); the online mistake
is counted against the first, as for top-1. For a pair ``(y, r)`` the binary problem is the
difference vector ``f(x, y) - f(x, r)``: ``m = mu_y.x - mu_r.x``, ``v = v_y + v_r`` with
``v_l = sum_j s_jl x_j^2``; ``mu_y += alpha s_y x``, ``mu_r -= alpha s_r x`` and both blocks get
the binary variance update with ``x`` (:mod:`.gaussian_diag`).

- ``seq``: for each competitor in order, ``m`` and ``v`` from the current parameters and one
  binary update. With ``k = 1`` it is the top-1 kernel, bit for bit.
- ``par``: the ``k`` binary updates from the same start, then means and precisions averaged with
  weights ``1/k`` (EMNLP 2009's choice ``lambda_j = 1/k``; a constraint that needs no update
  contributes the starting point). diag-kl: the true label's precision gains the mean of the
  increments, ``1/s_y += (sum_j c_j / k) x^2``, and ``r_j``'s ``c_j / k``. diag-l2: each update
  gives ``s^(j) = s - beta_j (s x)^2`` and ``1/s_y = mean_j 1/s_y^(j)``.
- ``exact``: the k constraints solved jointly (:mod:`.hildreth`): ``mu_y += sum(lambda) s_y x``,
  ``mu_rj -= lambda_j s_rj x``; the joint precision increment ``G diag(D) G'`` has diagonal
  ``sum(D) x^2`` on the ``y`` block and ``D_j x^2`` on ``r_j`` (diag-kl keeps it, as the KL
  projection does), while diag-l2 keeps the diagonal of the joint covariance (coefficients
  ``beta_y``, ``beta_j`` of :func:`.hildreth.cw_block_steps`). AROW's full multi-class update
  (MLJ 2013 Fig. 2) moves the mean by eq. 27 and the covariance by eq. 29 with the features of
  every label, ``f_t = sum_l f(x, l)``: every label block gets ``1/s += x^2 / r`` (diag-kl) or
  ``s -= (s x)^2 / (r + sum_l v_l)`` (diag-l2), whatever ``k``.

Variances keep the floor of :mod:`.gaussian_diag`, and products are grouped as there
(``alpha * (s_j x_j)``).
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import column, row_scores, row_variances, top_competitors
from textcw.learners._kernels.constants import (
    AROW_SQUARED_HINGE,
    COUNT_FLOORED,
    COUNT_SOLVER_FALLBACKS,
    COUNT_SOLVER_UNCERTIFIED,
    DIAG_KL,
    DIAG_L2,
    MC_EXACT,
    MC_PAR,
    MC_SEQ,
    SMALLEST_NORMAL,
)
from textcw.learners._kernels.gaussian_diag import update_variance
from textcw.learners._kernels.gaussian_rules import steps
from textcw.learners._kernels.hildreth import cw_block_steps, cw_solve
from textcw.learners._kernels.shared_qp import arow_multipliers


@kernel
def _floored(value, floor):
    return value if value > floor else floor


@kernel
def _seq(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, covariance, phi, C, r, floor):
    """k binary updates in order, each from the current parameters; 1 if any changed the model."""
    changed = 0
    start = column(indptr[i])
    stop = column(indptr[i + 1])
    for q in range(k):
        rc = comp[q]
        v = 0.0
        if q == 0:
            # the top-1 kernel's own arithmetic, so that k = 1 reproduces it exactly
            m = scores[yi] - scores[rc]
            for p in range(start, stop):
                j = column(indices[p])
                v += (s[j, yi] + s[j, rc]) * data[p] * data[p]
        else:
            m = 0.0
            for p in range(start, stop):
                j = column(indices[p])
                xj = data[p]
                m += (mu[j, yi] - mu[j, rc]) * xj
                v += (s[j, yi] + s[j, rc]) * xj * xj
        alpha, beta, c = steps(rule, m, v, phi, C, r)
        if alpha > 0.0:
            changed = 1
            for p in range(start, stop):
                j = column(indices[p])
                xj = data[p]
                mu[j, yi] += alpha * (s[j, yi] * xj)
                mu[j, rc] -= alpha * (s[j, rc] * xj)
                s[j, yi] = update_variance(s[j, yi], xj, beta, c, covariance, floor)
                s[j, rc] = update_variance(s[j, rc], xj, beta, c, covariance, floor)
    return changed


@kernel
def _par(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, covariance, phi, C, r, floor,
         vr, alpha, beta, cc):
    """k binary updates from the same start, means and precisions averaged (weights 1/k)."""
    start = column(indptr[i])
    stop = column(indptr[i + 1])
    vy = 0.0
    for q in range(k):
        vr[q] = 0.0
    for p in range(start, stop):
        j = column(indices[p])
        x2 = data[p] * data[p]
        vy += s[j, yi] * x2
        for q in range(k):
            vr[q] += s[j, comp[q]] * x2
    any_update = False
    alpha_mean = 0.0
    c_mean = 0.0
    for q in range(k):
        a, b, c = steps(rule, scores[yi] - scores[comp[q]], vy + vr[q], phi, C, r)
        alpha[q] = a
        beta[q] = b
        cc[q] = c
        alpha_mean += a / k
        c_mean += c / k
        any_update = any_update or a > 0.0
    if not any_update:
        return 0
    for p in range(start, stop):
        j = column(indices[p])
        xj = data[p]
        sy = s[j, yi]
        mu[j, yi] += alpha_mean * (sy * xj)
        if covariance == DIAG_KL:
            s[j, yi] = update_variance(sy, xj, 0.0, c_mean, DIAG_KL, floor)
        else:
            precision = 0.0
            for q in range(k):
                sx = sy * xj
                precision += 1.0 / _floored(sy - beta[q] * sx * sx, floor)
            s[j, yi] = _floored(k / precision, floor)
        for q in range(k):
            if alpha[q] <= 0.0:
                continue  # this constraint's "update" is the starting point: r_q unchanged
            rc = comp[q]
            sr = s[j, rc]
            mu[j, rc] -= alpha[q] / k * (sr * xj)
            if covariance == DIAG_KL:
                s[j, rc] = update_variance(sr, xj, 0.0, cc[q] / k, DIAG_KL, floor)
            else:
                sx = sr * xj
                own = _floored(sr - beta[q] * sx * sx, floor)
                s[j, rc] = _floored(k / (1.0 / own + (k - 1) / sr), floor)
    return 1


@kernel
def joint_step_defined(vy, vr, k):
    """Whether the joint (``exact``) step can be taken: every block's score variance is normal.

    The guards of :func:`.gaussian_rules.steps` for the joint problem: the multipliers divide by
    the score variances (the AROW and PA quadratic programs by ``v_rj``, CW's coordinate steps by
    ``v_y + v_rj``), so a document whose squared values underflow (a variance below the smallest
    normal double) makes no update; the callers also refuse multipliers that are not finite.
    """
    smallest = vy
    for q in range(k):
        smallest = min(smallest, vr[q])
    return smallest >= SMALLEST_NORMAL


@kernel
def _exact(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, covariance, phi, r, floor,
           var, m0, vr, lam, D, t, beta_r, c_r, scratch):
    """The k-constraint problem solved jointly (:mod:`.hildreth`).

    Returns ``(changed, solver)``: 1 if the model changed, and :func:`.hildreth.cw_solve`'s code
    (0 for AROW, whose multipliers are found exactly).
    """
    start = column(indptr[i])
    stop = column(indptr[i + 1])
    row_variances(indptr, indices, data, i, s, var)
    vy = var[yi]
    for q in range(k):
        m0[q] = scores[yi] - scores[comp[q]]
        vr[q] = var[comp[q]]
    if not joint_step_defined(vy, vr, k):
        return 0, 0
    arow = rule == AROW_SQUARED_HINGE
    solver = 0
    if arow:
        arow_multipliers(m0, vy, vr, k, r, lam)
    else:
        solver = cw_solve(rule, m0, vy, vr, k, phi, lam, D, t, scratch)
    total = 0.0
    increments = 0.0  # CW's precision increments must be finite too
    for q in range(k):
        total += lam[q]
        if not arow:
            increments += D[q]
    if not (total > 0.0 and np.isfinite(total) and np.isfinite(increments)):  # joint_step_defined
        return 0, solver
    K = s.shape[1]
    if arow:
        v_all = 0.0
        for label in range(K):
            v_all += var[label]
        beta_all = 1.0 / (r + v_all)  # MLJ 2013 eq. 29 with f_t = sum over every label
        c_all = 1.0 / r
        beta_y = 0.0
        d_sum = 0.0
    else:
        beta_y, _ = cw_block_steps(k, vy, vr, D, t, beta_r, c_r)
        d_sum = 0.0
        for q in range(k):
            d_sum += D[q]
    for p in range(start, stop):
        j = column(indices[p])
        xj = data[p]
        # the mean moves with the covariance from before the update
        mu[j, yi] += total * (s[j, yi] * xj)
        for q in range(k):
            if lam[q] > 0.0:
                mu[j, comp[q]] -= lam[q] * (s[j, comp[q]] * xj)
        if arow:
            for label in range(K):
                s[j, label] = update_variance(s[j, label], xj, beta_all, c_all, covariance, floor)
            continue
        s[j, yi] = update_variance(s[j, yi], xj, beta_y, d_sum, covariance, floor)
        for q in range(k):
            if D[q] > 0.0:
                rc = comp[q]
                s[j, rc] = update_variance(s[j, rc], xj, beta_r[q], D[q], covariance, floor)
    return 1, solver


@kernel
def _floored_row(indptr, indices, i, s, yi, comp, k, every_label, floor):
    """Whether a variance this example's update changed sits at the floor: those of ``y`` and
    the competitors (every label for AROW's ``exact``) on the example's features."""
    for p in range(column(indptr[i]), column(indptr[i + 1])):
        j = column(indices[p])
        if every_label:
            for label in range(s.shape[1]):
                if s[j, label] <= floor:
                    return True
            continue
        if s[j, yi] <= floor:
            return True
        for q in range(k):
            if s[j, comp[q]] <= floor:
                return True
    return False


@kernel
def multiclass_epoch(indptr, indices, data, y, order, mu, s, rule, covariance, strategy, k, phi, C,
                     r, floor, counts=None):
    """One epoch of ``seq``, ``par`` or ``exact`` updates with ``k`` competitors (module docstring).

    ``exact`` is defined for CW var and stdev and for AROW with the squared hinge; the learners
    refuse the other rules with it. ``counts`` (optional, int64 of length ``N_COUNTS``) is
    increased by the floored updates (a variance of ``y`` or of a competitor on the example's
    features at the floor after the update) and by :func:`.hildreth.cw_solve`'s fallbacks.
    """
    if covariance != DIAG_KL and covariance != DIAG_L2:  # the helpers branch on it
        raise ValueError("unknown diagonal covariance code (DIAG_KL or DIAG_L2)")
    K = mu.shape[1]
    scores = np.empty(K)
    comp = np.empty(k, np.int64)
    var = np.empty(K)
    m0 = np.empty(k)
    vr = np.empty(k)
    alpha = np.empty(k)
    beta = np.empty(k)
    cc = np.empty(k)
    lam = np.empty(k)
    D = np.empty(k)
    t = np.empty(k)
    scratch = np.empty(5 * k)
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        yi = y[i]
        row_scores(indptr, indices, data, i, mu, scores)
        top_competitors(scores, yi, k, comp)
        if scores[yi] - scores[comp[0]] <= 0.0:
            mistakes += 1
        if indptr[i + 1] == indptr[i]:
            continue  # no features: v = 0, nothing to update
        solver = 0
        if strategy == MC_SEQ:
            changed = _seq(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, covariance,
                           phi, C, r, floor)
        elif strategy == MC_PAR:
            changed = _par(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, covariance,
                           phi, C, r, floor, vr, alpha, beta, cc)
        elif strategy == MC_EXACT:
            changed, solver = _exact(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule,
                                     covariance, phi, r, floor, var, m0, vr, lam, D, t, alpha, beta,
                                     scratch)
        else:
            raise ValueError("unknown multi-class strategy code")
        updates += changed
        if counts is not None:
            if solver > 0:
                counts[COUNT_SOLVER_FALLBACKS] += 1
            if solver > 1:
                counts[COUNT_SOLVER_UNCERTIFIED] += 1
            every_label = strategy != MC_SEQ and strategy != MC_PAR and rule == AROW_SQUARED_HINGE
            if changed and _floored_row(indptr, indices, i, s, yi, comp, k, every_label, floor):
                counts[COUNT_FLOORED] += 1
    return mistakes, updates

