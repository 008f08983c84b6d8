"""Multi-class perceptron and Passive-Aggressive with k competing labels.

The same constraint structure as the Gaussian learners (EMNLP 2009 section 5, which compares CW
with "k-best PA", Crammer and Singer 2003; McDonald et al. 2004): for the top-k competitors
``r_1..r_k`` by current score (ties to the lowest index), the difference vectors
``g_j = f(x, y) - f(x, r_j)`` with ``||g_j||^2 = 2 ||x||^2`` and margins ``m_j = w_y.x - w_rj.x``.
A step ``tau`` on pair ``j`` is ``w_y += tau x``, ``w_rj -= tau x``.

- ``seq``: for each competitor in order, ``m_j`` from the current weights and one top-1 step
  (:func:`.first_order.step_size`: the perceptron's ``tau = 1`` if ``m_j <= 0``; PA's
  ``l / q``, PA-I's ``min(C, l / q)``, PA-II's ``l / (q + 1/(2C))`` with ``q = 2||x||^2``).
  ``k = 1`` is the top-1 kernel exactly.
- ``par``: the ``k`` steps from the same start, averaged with weights ``1/k`` (as EMNLP 2009's
  parallel update): ``w_y += (sum_j tau_j / k) x``, ``w_rj -= (tau_j / k) x``.
- ``exact`` (PA family only): ``min ||W - W_t||^2 / 2`` subject to ``m_j >= 1 - xi_j`` for every
  competitor, with no slack (PA), ``+ C sum_j xi_j`` (PA-I) or ``+ C sum_j xi_j^2`` (PA-II): the
  k-constraint problems of Crammer et al. (JMLR 2006, eqs. 2, 4, 5) with one slack per constraint.
  Hildreth's cyclic projections converge to its solution and their first sweep from zero is ``seq``;
  :func:`.shared_qp.pa_multipliers` finds it exactly from the problem's structure. The perceptron
  minimises nothing, so it has no joint problem; the learner refuses ``multiclass="exact"`` for it.
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
    row_scores,
    row_sq_norm,
    top_competitors,
)
from textcw.learners._kernels.constants import MC_EXACT, MC_PAR, MC_SEQ, PERCEPTRON, SMALLEST_NORMAL
from textcw.learners._kernels.first_order import step_size
from textcw.learners._kernels.shared_qp import pa_multipliers


@kernel
def _tau(rule, m, xx, C):
    """The top-1 kernel's step for margin ``m`` (``||g||^2 = 2 xx``)."""
    if rule == PERCEPTRON:
        return 1.0 if m <= 0.0 else 0.0
    if m < 1.0:
        return step_size(rule, m, 2.0 * xx, C)
    return 0.0


@kernel
def _move(indptr, indices, data, i, W, label, step, u, lag):
    for p in range(column(indptr[i]), column(indptr[i + 1])):
        move_mean(W, u, (column(indices[p]), label), step * data[p], lag)


@kernel
def multiclass_epoch(indptr, indices, data, y, order, mu, rule, strategy, k, C, u=None, count=None):
    """One epoch of ``seq``, ``par`` or ``exact`` updates with ``k`` competitors (module docstring);
    ``u`` and ``count`` (optional) keep the running average (:func:`.common.move_mean`)."""
    seen = examples_seen(count)
    if strategy != MC_SEQ and strategy != MC_PAR and strategy != MC_EXACT:
        raise ValueError("unknown multi-class strategy code")
    if strategy == MC_EXACT and rule == PERCEPTRON:
        raise ValueError("unknown rule code for the joint (exact) update: the perceptron solves no problem")
    W = mu
    K = W.shape[1]
    scores = np.empty(K)
    comp = np.empty(k, np.int64)
    tau = np.empty(k)
    m0 = np.empty(k)
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        yi = y[i]
        row_scores(indptr, indices, data, i, W, scores)
        top_competitors(scores, yi, k, comp)
        if scores[yi] - scores[comp[0]] <= 0.0:
            mistakes += 1
        if indptr[i + 1] == indptr[i]:
            continue
        # ||x||^2 only for the PA rules, as in the top-1 kernel
        xx = 0.0 if rule == PERCEPTRON else row_sq_norm(indptr, data, i)
        changed = False
        if strategy == MC_SEQ:
            for q in range(k):
                rc = comp[q]
                if q == 0:
                    m = scores[yi] - scores[rc]
                else:
                    m = 0.0
                    for p in range(column(indptr[i]), column(indptr[i + 1])):
                        j = column(indices[p])
                        m += (W[j, yi] - W[j, rc]) * data[p]
                t = _tau(rule, m, xx, C)
                if t > 0.0:
                    changed = True
                    for p in range(column(indptr[i]), column(indptr[i + 1])):
                        j = column(indices[p])
                        move_mean(W, u, (j, yi), t * data[p], seen + step)
                        move_mean(W, u, (j, rc), -(t * data[p]), seen + step)
        else:
            if strategy == MC_PAR:
                for q in range(k):
                    tau[q] = _tau(rule, scores[yi] - scores[comp[q]], xx, C) / k
            elif xx >= SMALLEST_NORMAL:
                for q in range(k):
                    m0[q] = scores[yi] - scores[comp[q]]
                pa_multipliers(rule, m0, xx, k, C, tau)
            else:
                # ||x||^2 underflows: the joint problem's matrix ||x||^2 (I + 1 1') is zero in
                # double precision and its solution divides by it; skip the document, as the PA
                # step does (constants.SMALLEST_NORMAL)
                for q in range(k):
                    tau[q] = 0.0
            total = 0.0
            for q in range(k):
                total += tau[q]
            # "total > 0" is false for NaN; a non-finite total (margins out of range against a
            # tiny ||x||^2) would write inf/NaN into the weights: no update
            if total > 0.0 and math.isfinite(total):
                changed = True
                _move(indptr, indices, data, i, W, yi, total, u, seen + step)
                for q in range(k):
                    if tau[q] > 0.0:
                        _move(indptr, indices, data, i, W, comp[q], -tau[q], u, seen + step)
        if changed:
            updates += 1
    add_examples(count, seen, order.shape[0])
    return mistakes, updates
