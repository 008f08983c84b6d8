"""Balanced Winnow's update as three numba functions: textcw's epoch loop does the rest.

:func:`textcw.kernels.per_feature_kernels` builds the epoch kernels from them (the loops, the
mistake counting, the top-1 competitor and the guards are textcw's). They follow textcw's kernel
conventions, so :class:`textcw.learners.base.OnlineLinearClassifier` can drive them:

- arguments ``(indptr, indices, data, y, order, u, v, log_alpha, log_beta, theta, margin)``:
  the CSR arrays (canonical: sorted, de-duplicated, int32 or int64 indices, float64 data), the
  labels, the rows to visit in order, the state arrays (``state_names``), then the
  hyperparameters, which :meth:`~textcw_example.winnow.BalancedWinnow.kernel_values` gives by
  these parameter names;
- binary ``y`` holds +1.0/-1.0 and ``u``, ``v`` are vectors of length ``d``; multi-class ``y``
  holds label indices and ``u``, ``v`` are ``d x K`` (feature-major);
- the return value is ``(mistakes, updates)``; a mistake is counted before the update, and a
  tie (margin exactly 0) is a mistake.

The rule (:mod:`textcw_example.winnow`): the net weight of a cell is ``u - v``; the binary
margin is ``y ((u - v) . x - theta)`` (``theta`` is the loop's ``threshold``), the multi-class
one ``s_y - s_r``; a document updates when its margin is at most ``margin`` (the step is 1, a
fixed-size update, else 0); the update promotes the cells to raise (``g > 0``: ``u_j`` times
``alpha ** x_j``, ``v_j`` times ``beta ** x_j``) and demotes the others (the factors swapped).

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

# textcw's kernel policy (compiled once and cached on disk, the GIL released so shards can train
# in threads, no fastmath, which would reorder sums and break agreement with the reference) and
# the loop that turns a per-feature update into epoch kernels. The functions are defined at module
# level, so the loop's code for them is cached too: a fresh process loads it instead of compiling.
from textcw.kernels import kernel, per_feature_kernels

WEIGHT_MIN = 1e-100
WEIGHT_MAX = 1e100

# the positions of the parameters in ``params`` (the order KERNELS is built with)
LOG_ALPHA, LOG_BETA, THETA, MARGIN = range(4)


@kernel
def _scaled(weight, log_factor, x):
    """``weight * exp(log_factor * x)``, clipped to ``[WEIGHT_MIN, WEIGHT_MAX]``."""
    return min(max(weight * math.exp(log_factor * x), WEIGHT_MIN), WEIGHT_MAX)


@kernel
def winnow_weight(state, c):
    """The net weight ``u_c - v_c``."""
    return state[0][c] - state[1][c]


@kernel
def winnow_step(m, q, params):
    """1 (update) when the margin is at most ``margin``, the thick threshold; else 0."""
    return 1.0 if m <= params[MARGIN] else 0.0


@kernel
def winnow_update(state, c, x, g, params):
    """Promotion (``g > 0``): ``u_c *= alpha ** x``, ``v_c *= beta ** x``; demotion swaps the
    factors. Both clipped to ``[WEIGHT_MIN, WEIGHT_MAX]``."""
    u, v = state
    if g > 0.0:
        log_up, log_down = params[LOG_ALPHA], params[LOG_BETA]
    else:
        log_up, log_down = params[LOG_BETA], params[LOG_ALPHA]
    u[c] = _scaled(u[c], log_up, x)
    v[c] = _scaled(v[c], log_down, x)


KERNELS = per_feature_kernels(winnow_weight, winnow_step, winnow_update, state=("u", "v"),
                              params=("log_alpha", "log_beta", "theta", "margin"),
                              threshold="theta")

# One pass of binary Balanced Winnow over the rows in ``order``:
# ``binary_epoch(indptr, indices, data, y, order, u, v, log_alpha, log_beta, theta, margin)``.
binary_epoch = KERNELS.binary
# One pass of multi-class Balanced Winnow, single-constraint top-1 update (``theta`` unused).
multiclass_epoch = KERNELS.top1
