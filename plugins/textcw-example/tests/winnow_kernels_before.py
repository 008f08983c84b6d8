"""Balanced Winnow's epoch kernels as they were written by hand before textcw's per-feature loop
took its update (:func:`textcw.kernels.per_feature_kernels`, :mod:`textcw_example.kernels`):
kept as the reference the loop must equal bit for bit.

Numba kernels of Balanced Winnow: one epoch over CSR rows, weights updated in place.

They follow textcw's kernel conventions, so :class:`textcw.learners.base.OnlineLinearClassifier`
can drive them:

- arguments ``(indptr, indices, data, y, order, u, v, log_alpha, log_beta, theta, margin)``:
  the CSR arrays (canonical: sorted, de-duplicated, int32 or int64 indices, float64 data), the
  labels, the rows to visit in order, the state arrays (``state_names``), then the
  hyperparameters, which :meth:`~textcw_example.winnow.BalancedWinnow.kernel_values` gives by
  these parameter names;
- binary ``y`` holds +1.0/-1.0 and ``u``, ``v`` are vectors of length ``d``; multi-class ``y``
  holds label indices and ``u``, ``v`` are ``d x K`` (feature-major);
- the return value is ``(mistakes, updates)``; a mistake is counted before the update, and a
  tie (margin exactly 0) is a mistake.

The multipliers are applied as ``exp(x * log(alpha))`` rather than ``alpha ** x``: the same
number, but ``log(alpha)`` is computed once per epoch instead of once per nonzero.

Every weight is kept within ``[WEIGHT_MIN, WEIGHT_MAX]``. Multiplicative weights grow or shrink
geometrically on data that is not separable (a feature value of 2,000 with ``alpha = 1.5``
multiplies by 10^352 at once); unbounded, they overflow to infinity and ``u - v`` becomes NaN.
A weight at a bound has saturated: it has long decided its feature's vote, and clipping it keeps
every score finite (at most 1e100 times the largest feature value textcw accepts, 1e30, per
nonzero). On ordinary data no weight comes near the bounds.
"""

from __future__ import annotations

import math

import numpy as np

# textcw's kernel policy (compiled once and cached on disk, the GIL released so shards can train
# in threads, no fastmath, which would reorder sums and break agreement with the reference) and
# its building blocks: ``column`` (an index as the hot loops use it) and ``top_competitor``.
from textcw.kernels import column, kernel, top_competitor

WEIGHT_MIN = 1e-100
WEIGHT_MAX = 1e100


@kernel
def _scaled(weight, log_factor, x):
    """``weight * exp(log_factor * x)``, clipped to ``[WEIGHT_MIN, WEIGHT_MAX]``."""
    return min(max(weight * math.exp(log_factor * x), WEIGHT_MIN), WEIGHT_MAX)


@kernel
def binary_epoch(indptr, indices, data, y, order, u, v, log_alpha, log_beta, theta, margin):
    """One pass of binary Balanced Winnow over the rows in ``order``.

    For row ``x`` with label ``y`` in {-1, +1}: score ``s = (u - v) . x - theta``; a mistake if
    ``y s <= 0``; an update if ``y s <= margin``. Promotion (``y = +1``) multiplies ``u_j`` by
    ``alpha ** x_j`` and ``v_j`` by ``beta ** x_j`` on the row's nonzeros; demotion
    (``y = -1``) multiplies ``u_j`` by ``beta ** x_j`` and ``v_j`` by ``alpha ** x_j``.
    """
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        start, stop = column(indptr[i]), column(indptr[i + 1])
        score = 0.0
        for p in range(start, stop):
            j = column(indices[p])
            score += (u[j] - v[j]) * data[p]
        m = y[i] * (score - theta)
        if m <= 0.0:
            mistakes += 1
        if m <= margin and stop > start:
            updates += 1
            if y[i] > 0.0:
                log_up, log_down = log_alpha, log_beta
            else:
                log_up, log_down = log_beta, log_alpha
            for p in range(start, stop):
                j = column(indices[p])
                u[j] = _scaled(u[j], log_up, data[p])
                v[j] = _scaled(v[j], log_down, data[p])
    return mistakes, updates


@kernel
def multiclass_epoch(indptr, indices, data, y, order, u, v, log_alpha, log_beta, theta, margin):
    """One pass of multi-class Balanced Winnow, single-constraint top-1 update.

    Label ``k`` scores ``s_k = (u_k - v_k) . x`` (``theta`` would shift every label equally, so
    it is not used). Against the highest-scoring other label ``r`` (ties go to the lowest
    index), ``m = s_y - s_r``; a mistake if ``m <= 0``; an update if ``m <= margin``, which
    promotes label ``y`` and demotes label ``r`` exactly as the binary rule promotes and
    demotes.
    """
    n_labels = u.shape[1]
    scores = np.empty(n_labels)
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        start, stop = column(indptr[i]), column(indptr[i + 1])
        scores[:] = 0.0
        for p in range(start, stop):
            j = column(indices[p])
            for k in range(n_labels):
                scores[k] += (u[j, k] - v[j, k]) * data[p]
        r = top_competitor(scores, yi)
        m = scores[yi] - scores[r]
        if m <= 0.0:
            mistakes += 1
        if m <= margin and stop > start:
            updates += 1
            for p in range(start, stop):
                j = column(indices[p])
                u[j, yi] = _scaled(u[j, yi], log_alpha, data[p])
                v[j, yi] = _scaled(v[j, yi], log_beta, data[p])
                u[j, r] = _scaled(u[j, r], log_beta, data[p])
                v[j, r] = _scaled(v[j, r], log_alpha, data[p])
    return mistakes, updates
