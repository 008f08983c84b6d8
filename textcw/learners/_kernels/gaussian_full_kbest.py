"""Multi-class Gaussian learners with a full covariance per label and k competing labels.

The full-covariance counterpart of :mod:`.gaussian_diag_kbest` (``multiclass="seq"|"par"|"exact"``,
docs/algorithms.md "Multi-class"). Each label ``l`` keeps the upper Cholesky factor ``R[l]`` of its
precision (see :mod:`.linalg`); ``v_l = x' Sigma_l x = ||R_l^{-T} x||^2`` and ``Sigma_l x`` cost
two triangular solves. As in the top-1 kernel (:func:`.gaussian_full.multiclass_top1_epoch`), a
pair update keeps the block-diagonal part of the covariance update, written on each precision as
``P_l += c_l x x'``:

- ``seq``: for each competitor in order, the top-1 pair update from the current parameters
  (``c_y = c / (1 + c v_r)``, ``c_r = c / (1 + c v_y)``); ``k = 1`` is the top-1 kernel exactly.
- ``par``: ``k`` pair updates from the same start, averaged with weights ``1/k``: the mean of
  the means, and the mean of the precisions, ``P_y += (sum_j c_y^(j) / k) x x'`` and
  ``P_rj += (c_rj^(j) / k) x x'`` (each a single rank-one update).
- ``exact``: the joint solution (:mod:`.hildreth`), ``mu_y += sum(lambda) Sigma_y x``,
  ``mu_rj -= lambda_j Sigma_rj x``; the block-diagonal part of the joint covariance is
  ``P_y += T x x'`` and ``P_rj += c_j x x'`` (:func:`.hildreth.cw_block_steps`). AROW (MLJ 2013
  Fig. 2): the mean by eq. 27 and, by eq. 29 with ``f_t = sum_l f(x, l)``, every block's
  covariance ``Sigma_l - Sigma_l x x' Sigma_l / (r + sum_l' v_l')``, i.e.
  ``P_l += x x' / (r + sum_{l' != l} v_l')``.

Guard: as in :mod:`.gaussian_full`, a precision increment is capped so that the margin variance
it leaves stays at or above ``floor * ||g||^2`` (per pair for ``seq`` and ``par``, as the top-1
kernel does; per block, ``floor * ||x||^2``, for ``exact``). It never fires in the normal regime.
"""

from __future__ import annotations

import math

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import column, row_scores, top_competitors
from textcw.learners._kernels.constants import (
    AROW_SQUARED_HINGE,
    COUNT_SOLVER_FALLBACKS,
    COUNT_SOLVER_UNCERTIFIED,
    MC_EXACT,
    MC_PAR,
    MC_SEQ,
)
from textcw.learners._kernels.gaussian_diag_kbest import joint_step_defined
from textcw.learners._kernels.gaussian_full import guarded_increment
from textcw.learners._kernels.gaussian_rules import steps
from textcw.learners._kernels.hildreth import cw_block_steps, cw_solve
from textcw.learners._kernels.shared_qp import arow_multipliers
from textcw.learners._kernels.linalg import back_solve, cholesky_update, dot, forward_solve, scatter_row


@kernel
def _move_mean(mu, label, R, x, z, sx, step):
    """``mu_label += step Sigma_label x`` (``Sigma`` from before any precision update)."""
    forward_solve(R[label], x, z)
    back_solve(R[label], z, sx)
    for j in range(x.shape[0]):
        mu[j, label] += step * sx[j]


@kernel
def _add_precision(R, label, x, c, w):
    """``P_label += c x x'`` (a rank-one Cholesky update; nothing when ``c <= 0``)."""
    if c <= 0.0:
        return
    root = math.sqrt(c)
    for j in range(x.shape[0]):
        w[j] = root * x[j]
    cholesky_update(R[label], w)


@kernel
def _seq(indptr, indices, data, i, yi, comp, k, scores, mu, R, rule, phi, C, r, floor, x, xx, w, zy,
         zr, sx):
    d = x.shape[0]
    changed = 0
    for q in range(k):
        rc = comp[q]
        if q == 0:
            m = scores[yi] - scores[rc]
        else:
            m = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                j = column(indices[p])
                m += (mu[j, yi] - mu[j, rc]) * data[p]
        # the top-1 kernel's pair update (gaussian_full.multiclass_top1_epoch)
        forward_solve(R[yi], x, zy)
        forward_solve(R[rc], x, zr)
        vy = dot(zy, zy)
        vr = dot(zr, zr)
        v = vy + vr
        alpha, beta, c = steps(rule, m, v, phi, C, r)
        if alpha > 0.0:
            changed = 1
            back_solve(R[yi], zy, sx)
            for j in range(d):
                mu[j, yi] += alpha * sx[j]
            back_solve(R[rc], zr, sx)
            for j in range(d):
                mu[j, rc] -= alpha * sx[j]
            c = guarded_increment(c, v, 2.0 * xx, floor)
            if c > 0.0:
                _add_precision(R, yi, x, c / (1.0 + c * vr), w)
                _add_precision(R, rc, x, c / (1.0 + c * vy), w)
    return changed


@kernel
def _par(yi, comp, k, scores, mu, R, rule, phi, C, r, floor, x, xx, w, z, sx, vr, alpha, cc):
    forward_solve(R[yi], x, z)
    vy = dot(z, z)
    for q in range(k):
        forward_solve(R[comp[q]], x, z)
        vr[q] = dot(z, z)
    any_update = False
    alpha_mean = 0.0
    c_y = 0.0
    for q in range(k):
        v = vy + vr[q]
        a, _, c = steps(rule, scores[yi] - scores[comp[q]], v, phi, C, r)
        alpha[q] = a
        cc[q] = guarded_increment(c, v, 2.0 * xx, floor) if a > 0.0 else 0.0
        alpha_mean += a / k
        c_y += cc[q] / (1.0 + cc[q] * vr[q]) / k
        any_update = any_update or a > 0.0
    if not any_update:
        return 0
    _move_mean(mu, yi, R, x, z, sx, alpha_mean)
    for q in range(k):
        if alpha[q] > 0.0:
            _move_mean(mu, comp[q], R, x, z, sx, -alpha[q] / k)
    _add_precision(R, yi, x, c_y, w)
    for q in range(k):
        if alpha[q] > 0.0:
            _add_precision(R, comp[q], x, cc[q] / (1.0 + cc[q] * vy) / k, w)
    return 1


@kernel
def _exact(yi, comp, k, scores, mu, R, rule, phi, r, floor, x, xx, w, z, sx, var, m0, vr, lam, D, t,
           beta_r, c_r, scratch):
    """The joint update; ``(changed, solver)`` as in :func:`.gaussian_diag_kbest._exact`."""
    K = mu.shape[1]
    arow = rule == AROW_SQUARED_HINGE
    for label in range(K):
        if arow or label == yi:
            forward_solve(R[label], x, z)
            var[label] = dot(z, z)
    for q in range(k):
        m0[q] = scores[yi] - scores[comp[q]]
        if not arow:
            forward_solve(R[comp[q]], x, z)
            var[comp[q]] = dot(z, z)
        vr[q] = var[comp[q]]
    vy = var[yi]
    if not joint_step_defined(vy, vr, k):
        return 0, 0
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
    _move_mean(mu, yi, R, x, z, sx, total)
    for q in range(k):
        if lam[q] > 0.0:
            _move_mean(mu, comp[q], R, x, z, sx, -lam[q])
    if arow:
        for label in range(K):
            others = 0.0
            for other in range(K):
                if other != label:
                    others += var[other]
            c = guarded_increment(1.0 / (r + others), var[label], xx, floor)
            _add_precision(R, label, x, c, w)
        return 1, solver
    _, c_y = cw_block_steps(k, vy, vr, D, t, beta_r, c_r)
    _add_precision(R, yi, x, guarded_increment(c_y, vy, xx, floor), w)
    for q in range(k):
        if c_r[q] > 0.0:
            _add_precision(R, comp[q], x, guarded_increment(c_r[q], vr[q], xx, floor), w)
    return 1, solver


@kernel
def multiclass_epoch(indptr, indices, data, y, order, mu, R, rule, strategy, k, phi, C, r, floor,
                     counts=None):
    """One epoch of ``seq``, ``par`` or ``exact`` updates; ``mu`` is (d, K), ``R`` is (K, d, d).

    ``counts`` (optional, int64 of length ``N_COUNTS``) is increased by the joint solves whose
    sweeps did not converge (:func:`.hildreth.cw_solve`).
    """
    d, K = mu.shape
    x = np.empty(d)
    w = np.empty(d)
    zy = np.empty(d)
    zr = np.empty(d)
    sx = np.empty(d)
    scores = np.empty(K)
    var = np.empty(K)
    comp = np.empty(k, np.int64)
    m0 = np.empty(k)
    vr = np.empty(k)
    alpha = np.empty(k)
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
        xx = scatter_row(indptr, indices, data, i, x)
        row_scores(indptr, indices, data, i, mu, scores)
        top_competitors(scores, yi, k, comp)
        if scores[yi] - scores[comp[0]] <= 0.0:
            mistakes += 1
        if xx == 0.0:
            continue
        if strategy == MC_SEQ:
            updates += _seq(indptr, indices, data, i, yi, comp, k, scores, mu, R, rule, phi, C, r,
                            floor, x, xx, w, zy, zr, sx)
        elif strategy == MC_PAR:
            updates += _par(yi, comp, k, scores, mu, R, rule, phi, C, r, floor, x, xx, w, zy, sx,
                            vr, alpha, cc)
        elif strategy == MC_EXACT:
            changed, solver = _exact(yi, comp, k, scores, mu, R, rule, phi, r, floor, x, xx, w, zy, sx,
                                     var, m0, vr, lam, D, t, alpha, cc, scratch)
            updates += changed
            if counts is not None and solver > 0:
                counts[COUNT_SOLVER_FALLBACKS] += 1
                if solver > 1:
                    counts[COUNT_SOLVER_UNCERTIFIED] += 1
        else:
            raise ValueError("unknown multi-class strategy code")
    return mistakes, updates
