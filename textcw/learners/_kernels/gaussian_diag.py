"""Gaussian learners with a diagonal covariance (mean ``mu``, variances ``s``).

One pair of kernels serves every rule of :mod:`.gaussian_rules` (CW var and stdev, AROW,
SCW-I/II) and both diagonalisations of docs/algorithms.md "Covariance forms":

- ``diag-kl`` ("project", ICML 2008): ``1/s_j += c x_j^2``;
- ``diag-l2`` ("drop"): ``s_j -= beta (s_j x_j)^2``.

The mean moves with the variances from before the update: ``mu_j += alpha y s_j x_j``. The rules
are a step of the diagonal loop (:mod:`.diagonal_loop`), which runs their binary and top-1 epochs
as it runs a plugin's variant: :func:`rule_steps` and :func:`rule_variance` (:func:`.diagonal_variance.diagonal_variance`) with the parameters
``(rule, phi, C, r)``, and :func:`example_params` for weighted examples.

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
their features' ``mu`` and ``s`` (:mod:`.prefetch`); a shuffled epoch otherwise
waits on main memory at the start of every row. The hints change no result. A binary learner's
``mu`` and ``s`` are the two columns of one array (:mod:`textcw.learners.interleaved`): one
cache line per feature, where two arrays take two.
"""

from __future__ import annotations

from textcw._jit import KernelRef, kernel
from textcw.learners._kernels.constants import DIAG_KL, DIAG_L2
from textcw.learners._kernels.diagonal_loop import binary_loop, top1_loop
from textcw.learners._kernels.diagonal_variance import diagonal_variance as rule_variance
from textcw.learners._kernels.gaussian_rules import _rule_steps

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
def rule_steps(m, v, params):
    """``(alpha, beta, c)`` of the rule ``params[0]``: :func:`.gaussian_rules.steps` without its
    guards (a normal ``v``, finite steps), which the loop applies itself."""
    rule, phi, C, r = params
    return _rule_steps(rule, m, v, phi, C, r)


@kernel
def example_params(params, weight, lag):
    """``C -> s C`` and ``r -> r / s`` for an example of weight ``s`` (module docstring)."""
    rule, phi, C, r = params
    return rule, phi, weight * C, r / weight


STEP, VARIANCE, EXAMPLE = KernelRef(rule_steps), KernelRef(rule_variance), KernelRef(example_params)


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, s, rule, covariance, phi, C, r, floor,
                 counts=None, weights=None, u=None, count=None):
    """One epoch of binary updates; returns ``(mistakes, updates)``.

    ``counts`` (optional, int64 of length ``N_COUNTS``): ``counts[COUNT_FLOORED]`` is increased by
    the updates after which a variance they changed sat at the floor. ``u`` and ``count``
    (optional) keep the running average of the mean (:func:`.common.move_mean`).
    """
    if covariance != DIAG_KL and covariance != DIAG_L2:  # before the epoch, not at its first update
        raise ValueError(UNKNOWN_FORM)
    return binary_loop(indptr, indices, data, y, order, mu, s, STEP, VARIANCE, EXAMPLE,
                       (rule, float(phi), float(C), float(r)), covariance, floor, counts, weights, u, count)


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, s, rule, covariance, phi, C, r, floor,
                          counts=None, weights=None, u=None, count=None):
    """Top-1 multi-class update (EMNLP 2009; MLJ 2013 section 3.3): one binary update on
    ``f(x, y) - f(x, r)``: ``m = mu_y . x - mu_r . x``, ``v = x' Sigma_y x + x' Sigma_r x``;
    both blocks move and both get the binary covariance update with ``x``. ``counts``, ``u`` and
    ``count`` as for :func:`binary_epoch`.
    """
    if covariance != DIAG_KL and covariance != DIAG_L2:
        raise ValueError(UNKNOWN_FORM)
    return top1_loop(indptr, indices, data, y, order, mu, s, STEP, VARIANCE, EXAMPLE,
                     (rule, float(phi), float(C), float(r)), covariance, floor, counts, weights, u, count)
