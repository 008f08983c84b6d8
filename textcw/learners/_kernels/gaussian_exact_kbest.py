"""CW with the exact diagonal update (``covariance="exact"``) and k competing labels.

``multiclass="seq"`` and ``"par"`` (docs/algorithms.md "Multi-class"; EMNLP 2009 section 5.2) over
the pair update of :func:`.gaussian_exact.multiclass_top1_epoch`: for the pair ``(y, r)`` the
constraint on ``f(x, y) - f(x, r)`` is solved exactly over diagonal covariances (JMLR 2012
section 6.2), its margin variance summing both blocks' ``w_j = s_j x_j^2``.

- ``seq``: for each competitor in order, ``m`` and the ``w_j`` from the current parameters and
  one exact pair update, so each constraint holds with equality right after its update (and
  stays satisfied: later updates only raise ``mu_y . x`` and lower the variances). ``k = 1`` is
  the top-1 kernel exactly.
- ``par``: the ``k`` exact pair updates from the same start, means averaged and precisions
  averaged (weights ``1/k``): ``1/s_y = mean_j 1/s_y^(j)``, ``1/s_rj = (1/s_rj^(j) + (k-1)/s_rj) / k``.

``multiclass="exact"`` is not offered with this form: it is already a root-finding solve per
constraint, and k of them solved jointly couple through the true label's variances into a
k-dimensional nonlinear system per example, which textcw does not solve; the learners refuse the
combination and name the alternatives.

Guards, floors and the grouping of products are those of :mod:`.gaussian_exact`.
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import column, row_scores, top_competitors
from textcw.learners._kernels.constants import MC_PAR, MC_SEQ
from textcw.learners._kernels.gaussian_exact import new_variance, solve_margin, usable, violated, widest_row


@kernel
def _pair_weights(indptr, indices, data, i, yi, rc, s, w):
    """Both blocks' ``w_j = s_j x_j^2``, interleaved, as the top-1 kernel keeps them; returns ``v``."""
    start = indptr[i]
    v = 0.0
    for p in range(start, indptr[i + 1]):
        j = column(indices[p])
        x2 = data[p] * data[p]
        w[2 * (p - start)] = s[j, yi] * x2
        w[2 * (p - start) + 1] = s[j, rc] * x2
        v += w[2 * (p - start)] + w[2 * (p - start) + 1]
    return v


@kernel
def _seq(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, phi, floor, w):
    start = indptr[i]
    n = indptr[i + 1] - start
    changed = 0
    for q in range(k):
        rc = comp[q]
        if q == 0:
            m = scores[yi] - scores[rc]
        else:
            m = 0.0
            for p in range(start, start + n):
                j = column(indices[p])
                m += (mu[j, yi] - mu[j, rc]) * data[p]
        v = _pair_weights(indptr, indices, data, i, yi, rc, s, w)
        if not violated(rule, m, v, phi):
            continue
        t = solve_margin(rule, m, v, phi, w, 2 * n)
        kk = t - m
        if not usable(kk, v):  # the guards of gaussian_exact
            continue
        changed = 1
        a = kk / v  # alpha
        for p in range(start, start + n):
            j = column(indices[p])
            mu[j, yi] += a * (s[j, yi] * data[p])
            mu[j, rc] -= a * (s[j, rc] * data[p])
            s[j, yi] = new_variance(rule, s[j, yi], w[2 * (p - start)] / v, kk, t, phi, floor)
            s[j, rc] = new_variance(rule, s[j, rc], w[2 * (p - start) + 1] / v, kk, t, phi, floor)
    return changed


@kernel
def _par(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, phi, floor, w, vs, ks, ts):
    start = indptr[i]
    n = indptr[i + 1] - start
    any_update = False
    alpha_mean = 0.0
    for q in range(k):
        m = scores[yi] - scores[comp[q]]
        v = _pair_weights(indptr, indices, data, i, yi, comp[q], s, w)
        vs[q] = v
        ks[q] = 0.0
        ts[q] = 0.0
        if violated(rule, m, v, phi):
            t = solve_margin(rule, m, v, phi, w, 2 * n)
            if usable(t - m, v):  # the guards of gaussian_exact
                ks[q] = t - m
                ts[q] = t
                alpha_mean += (t - m) / v / k
                any_update = True
    if not any_update:
        return 0
    for p in range(start, start + n):
        j = column(indices[p])
        xj = data[p]
        x2 = xj * xj
        sy = s[j, yi]
        mu[j, yi] += alpha_mean * (sy * xj)
        precision = 0.0
        for q in range(k):
            if ks[q] > 0.0:
                precision += 1.0 / new_variance(rule, sy, sy * x2 / vs[q], ks[q], ts[q], phi, floor)
            else:
                precision += 1.0 / sy
        new = k / precision
        s[j, yi] = new if new > floor else floor
        for q in range(k):
            if ks[q] <= 0.0:
                continue
            rc = comp[q]
            sr = s[j, rc]
            mu[j, rc] -= ks[q] / vs[q] / k * (sr * xj)
            own = new_variance(rule, sr, sr * x2 / vs[q], ks[q], ts[q], phi, floor)
            new = k / (1.0 / own + (k - 1) / sr)
            s[j, rc] = new if new > floor else floor
    return 1


@kernel
def multiclass_epoch(indptr, indices, data, y, order, mu, s, rule, strategy, k, phi, floor):
    """One epoch of ``seq`` or ``par`` exact-diagonal updates with ``k`` competitors."""
    w = np.empty(2 * widest_row(indptr))
    scores = np.empty(mu.shape[1])
    comp = np.empty(k, np.int64)
    vs = np.empty(k)
    ks = np.empty(k)
    ts = np.empty(k)
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
            continue
        if strategy == MC_SEQ:
            updates += _seq(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, phi, floor, w)
        elif strategy == MC_PAR:
            updates += _par(indptr, indices, data, i, yi, comp, k, scores, mu, s, rule, phi, floor, w,
                            vs, ks, ts)
        else:  # the joint (exact) strategy is not defined with covariance='exact'
            raise ValueError("unknown multi-class strategy code for covariance='exact'")
    return mistakes, updates
