"""The epoch loop of every diagonal Gaussian learner: a variant gives its step, textcw the loop.

Built-in rules (CW var and stdev, AROW, SCW with ``covariance="diag-kl"`` or ``"diag-l2"``,
:mod:`.gaussian_diag`) and plugin variants (:func:`diagonal_gaussian_kernels`) run on the same two
loops, :func:`binary_loop` and :func:`top1_loop`, as scikit-learn's SGD runs every loss on one
loop that takes the loss object. A variant is two numba functions, defined at module level:

- ``step(m, v, params) -> (alpha, beta, c)``: the mean step ``alpha`` (``mu += alpha y Sigma x``)
  and the two numbers the variance update reads, from the margin ``m`` and the margin variance
  ``v = x' Sigma x`` (both before the update); ``alpha <= 0`` means no update;
- ``variance(s_j, x_j, beta, c, params, covariance, floor) -> s_j'``: one variance after the
  update; optional: without one, textcw's own update of the forms ``diag-kl`` and ``diag-l2``
  (:func:`.diagonal_variance.diagonal_variance`) is used, and a variant with its own declares the
  forms it handles (``forms=``), which its class's ``covariances`` must stay within.

``params`` is the tuple of the variant's step parameters. A variant with a weighted update adds
``example(params, weight, lag) -> params``, the parameters for an example of weight ``s > 0``
(AROW's ``r -> r / s``, SCW's ``C -> s C``; docs/algorithms.md "Weighted examples").

The loops apply textcw's guards (docs/algorithms.md "Numerics"), so that a variant cannot leave
one out: a mistake is counted before the update, and a tie counts as one (the test is ``m <= 0``,
as in every built-in kernel, so a NaN margin is not counted); a document whose ``v`` is below the
smallest normal double (an empty one, or an underflow) or whose steps are not finite makes no
update; every changed variance is kept at or above ``floor`` (``a *
VARIANCE_FLOOR``), and an update where the floor stood in is counted in
``counts[COUNT_FLOORED]``. The mean moves with ``Sigma`` from before the update, as
``alpha * (s_j x_j)`` (:mod:`.gaussian_diag` says why this grouping). Multi-class problems use
the top-1 reduction (EMNLP 2009; MLJ 2013 section 3.3: the update on ``f(x, y) - f(x, r)``
against the best other label ``r``, ties to the lowest index; both label blocks move and get the
variance update). With ``u`` and ``count`` the loops keep the running average of the mean
(:func:`.common.move_mean`); each step first hints the cache lines of the rows ahead
(:mod:`.prefetch`, whose pieces the compiler inlines into the loops).

The state's layout is the caller's: ``mu`` and ``s`` are indexed as vectors (``d x K`` blocks
multi-class) of any stride. A binary learner keeps them as the two columns of one ``(d, 2)``
array (:mod:`textcw.learners.interleaved`), so that a feature's mean and variance are fetched in
one cache line; the binary loop then hints one line per feature instead of two
(:func:`.prefetch.interleaved`). Layout changes no value.

A 32-bit state (``mu`` and ``s`` float32, the learners' ``dtype="float32"``) runs on the same loops,
compiled once more for those array types: numba specialises a loop per argument type, so a
64-bit user compiles and loads nothing of it. Only the stored values are 32-bit: the margin and
the margin variance are summed in doubles (``score``, ``v``, ``scores``), and the steps, the new
mean and variance are computed in doubles and rounded once, when stored; a variant's ``step``
and ``variance`` are handed doubles only, so the same functions serve both states.

The loops take the variant's functions as :class:`textcw._jit.KernelRef` arguments, so numba
caches their compiled code for each variant on disk: a plugin's variant is compiled once, not
in every process. :func:`diagonal_gaussian_kernels` builds a variant's epoch kernels, which take
``(indptr, indices, data, y, order, mu, s, covariance, floor, params, counts=None)``
(:mod:`textcw.kernels`).
"""

from __future__ import annotations

import math
from typing import Callable, NamedTuple

import numpy as np

from textcw._jit import KernelRef, call, closure_kernel, kernel, uncached
from textcw.learners._kernels.common import (
    add_examples,
    column,
    examples_seen,
    move_mean,
    row_scores,
    top_competitor,
)
from textcw.learners._kernels.constants import COUNT_FLOORED, SMALLEST_NORMAL
from textcw.learners._kernels.diagonal_variance import FORMS as TEXTCW_FORMS, diagonal_variance
from textcw.learners._kernels.prefetch import (
    FEATURES_AHEAD,
    ROWS_AHEAD,
    hint_features,
    hint_lines,
    interleaved,
    line_step,
    row_ahead,
)


# The two helpers that take a variant's functions are not cached on their own (closure_kernel):
# their code is cached inside each loop compiled for a variant, and a variant of closures (a
# name unique to its process) must not add entries no later process can read to their caches.
@closure_kernel
def guarded_steps(step, m, v, params):
    """The variant's ``(alpha, beta, c)``, or zeros where the loop's guards allow no update."""
    if not v >= SMALLEST_NORMAL:  # an empty document, or an underflowed variance (NaN too)
        return 0.0, 0.0, 0.0
    alpha, beta, c = call(step, m, v, params)
    if alpha > 0.0 and math.isfinite(alpha) and math.isfinite(beta) and math.isfinite(c):
        return alpha, beta, c
    return 0.0, 0.0, 0.0


@closure_kernel
def floored_variance(variance, s_j, x_j, beta, c, params, covariance, floor):
    """``(s_j', hit)``: the variant's new variance kept at or above ``floor``, and whether the
    floor stood in."""
    new = call(variance, s_j, x_j, beta, c, params, covariance, floor)
    return (new if new > floor else floor), new <= floor


@kernel
def binary_loop(indptr, indices, data, y, order, mu, s, step, variance, example, params, covariance,
                floor, counts, weights, u, count):
    """One epoch of binary updates; returns ``(mistakes, updates)``. ``example`` is called only
    with ``weights`` (and may then be ``None``); ``counts``, ``weights``, ``u`` and ``count`` may
    each be ``None``."""
    seen = examples_seen(count)
    mistakes = 0
    updates = 0
    paired = interleaved(mu, s)  # fixed for the epoch: the test is made once
    index_step, data_step, state_step = line_step(indices), line_step(data), line_step(mu)
    for t in range(order.shape[0]):
        start, stop = row_ahead(indptr, order, t, ROWS_AHEAD)
        hint_lines(indices, start, stop, index_step)
        hint_lines(data, start, stop, data_step)
        start, stop = row_ahead(indptr, order, t, FEATURES_AHEAD)
        hint_features(mu, indices, start, stop, state_step)
        if not paired:  # else s[j] is in mu[j]'s cache line: one hint per feature
            hint_features(s, indices, start, stop, state_step)
        if u is not None:  # the running average's accumulator, written with mu
            hint_features(u, indices, start, stop, state_step)
        i = order[t]
        start, stop = column(indptr[i]), column(indptr[i + 1])
        # Doubles even for a 32-bit state: a 32-bit sum over a long document rounds at every
        # term (about 1e-7 of the running total each), and m and v decide the update and its size.
        score = 0.0
        v = 0.0
        for p in range(start, stop):
            j = column(indices[p])
            xj = data[p]  # a double: each product below is formed in double precision
            score += mu[j] * xj
            v += s[j] * xj * xj
        m = y[i] * score
        if m <= 0.0:  # before the update; a tie is a mistake
            mistakes += 1
        at = params if weights is None else call(example, params, weights[i], seen + t)
        alpha, beta, c = guarded_steps(step, m, v, at)
        if alpha > 0.0:
            updates += 1
            hit = False  # did the floor stand in for a variance of this update?
            ay = alpha * y[i]
            for p in range(start, stop):
                j = column(indices[p])
                xj = data[p]
                sj = np.float64(s[j])  # the variant's functions see doubles, whatever the state
                move_mean(mu, u, j, ay * (sj * xj), seen + t)  # Sigma from before the update
                s[j], floored = floored_variance(variance, sj, xj, beta, c, at, covariance, floor)
                hit |= floored  # without a branch per non-zero
            if hit and counts is not None:
                counts[COUNT_FLOORED] += 1
    add_examples(count, seen, order.shape[0])
    return mistakes, updates


@kernel
def top1_loop(indptr, indices, data, y, order, mu, s, step, variance, example, params, covariance,
              floor, counts, weights, u, count):
    """One epoch of top-1 multi-class updates (``mu``, ``s``: ``d x K``): ``m = mu_y . x - mu_r . x``,
    ``v = x' Sigma_y x + x' Sigma_r x``; arguments as for :func:`binary_loop`."""
    seen = examples_seen(count)
    mistakes = 0
    updates = 0
    scores = np.empty(mu.shape[1])  # float64 whatever mu's dtype: summed in doubles
    index_step, data_step, state_step = line_step(indices), line_step(data), line_step(mu)
    for t in range(order.shape[0]):
        start, stop = row_ahead(indptr, order, t, ROWS_AHEAD)
        hint_lines(indices, start, stop, index_step)
        hint_lines(data, start, stop, data_step)
        start, stop = row_ahead(indptr, order, t, FEATURES_AHEAD)
        hint_features(mu, indices, start, stop, state_step)  # every line of each row of K labels
        hint_features(s, indices, start, stop, state_step)
        if u is not None:
            hint_features(u, indices, start, stop, state_step)
        i = order[t]
        yi = y[i]
        start, stop = column(indptr[i]), column(indptr[i + 1])
        row_scores(indptr, indices, data, i, mu, scores)
        rc = top_competitor(scores, yi)
        m = scores[yi] - scores[rc]
        if m <= 0.0:
            mistakes += 1
        v = 0.0
        for p in range(start, stop):
            j = column(indices[p])
            # the two variances added as doubles (a no-op for a 64-bit state): with float32
            # arrays their sum would be rounded to 32 bits first
            v += (np.float64(s[j, yi]) + s[j, rc]) * data[p] * data[p]
        at = params if weights is None else call(example, params, weights[i], seen + t)
        alpha, beta, c = guarded_steps(step, m, v, at)
        if alpha > 0.0:
            updates += 1
            hit = False
            for p in range(start, stop):
                j = column(indices[p])
                xj = data[p]
                sy = np.float64(s[j, yi])
                sr = np.float64(s[j, rc])
                move_mean(mu, u, (j, yi), alpha * (sy * xj), seen + t)
                move_mean(mu, u, (j, rc), -(alpha * (sr * xj)), seen + t)
                s[j, yi], floored_y = floored_variance(variance, sy, xj, beta, c, at, covariance, floor)
                s[j, rc], floored_r = floored_variance(variance, sr, xj, beta, c, at, covariance, floor)
                hit |= floored_y | floored_r
            if hit and counts is not None:
                counts[COUNT_FLOORED] += 1
    add_examples(count, seen, order.shape[0])
    return mistakes, updates


# ---------------------------------------------------------------- a plugin variant's kernels
class DiagonalKernels(NamedTuple):
    """The epoch kernels of one diagonal Gaussian variant (:func:`diagonal_gaussian_kernels`)."""

    binary: Callable
    top1: Callable
    params: tuple[str, ...]  # the step parameters, in the order of ``params``
    forms: tuple[str, ...] = TEXTCW_FORMS  # the covariance forms the variance update handles


def _checked(mu, s, ndim: int, what: str) -> None:
    # the loops index without bounds checks: the two arrays must agree (textcw checks them
    # against the data before every call)
    if mu.ndim != ndim or s.shape != mu.shape:
        raise ValueError(f"mu and s must both have the shape {what}; got {mu.shape} and {s.shape}")


def diagonal_gaussian_kernels(step, variance=None, params: tuple[str, ...] = (), *,
                              forms: tuple[str, ...] | None = None) -> DiagonalKernels:
    """The binary and top-1 multi-class epoch kernels of a diagonal Gaussian variant whose
    update is ``step`` and ``variance`` (numba functions, see the module docstring) with the
    step parameters named ``params``.

    Without ``variance``, textcw's own variance update of ``diag-kl`` and ``diag-l2`` is used.
    A ``variance`` of the variant's own must say which covariance forms (the names its class's
    ``covariances`` uses) it computes, ``forms=("diag-kl", "diag-l2")`` say: a function that
    ignores ``covariance`` would otherwise compute one form when the user asks for another.
    The learner class is refused when its ``covariances`` names a form outside ``forms``.

    The kernels are plain Python functions that call the loops: the loops' code for this
    variant is compiled on first use and cached on disk when both functions are defined at
    module level (:class:`textcw._jit.KernelRef`), else compiled once per process.
    """
    params = tuple(params)
    if not params or not all(isinstance(p, str) and p.isidentifier() for p in params):
        raise TypeError(f"params must name the step parameters (identifiers); got {params!r}")
    if variance is None:
        if forms is not None and tuple(forms) != TEXTCW_FORMS:
            raise TypeError(f"forms={forms!r}: without a variance function of its own a variant gets "
                            f"textcw's, which computes the forms {TEXTCW_FORMS}; declare forms only "
                            "with your own variance function")
        variance, forms = diagonal_variance, TEXTCW_FORMS
    elif forms is None:
        raise TypeError("a variant with its own variance function must declare the covariance forms it "
                        "computes, e.g. forms=('diag-kl', 'diag-l2'); or leave variance out to get textcw's "
                        "update of those two forms")
    forms = tuple(forms)
    if not forms or not all(isinstance(f, str) and f for f in forms):
        raise TypeError(f"forms must name one or more covariance forms (e.g. 'diag-kl'); got {forms!r}")
    refs = KernelRef(step), KernelRef(variance)
    cacheable = all(ref.cacheable for ref in refs)
    binary = binary_loop if cacheable else uncached(binary_loop)
    top1 = top1_loop if cacheable else uncached(top1_loop)
    step_ref, variance_ref = refs

    def binary_epoch(indptr, indices, data, y, order, mu, s, covariance, floor, params, counts=None):
        _checked(mu, s, 1, "(n_rows,) in a binary problem")
        return binary(indptr, indices, data, y, order, mu, s, step_ref, variance_ref, None, params,
                      covariance, floor, counts, None, None, None)

    def top1_epoch(indptr, indices, data, y, order, mu, s, covariance, floor, params, counts=None):
        _checked(mu, s, 2, "(n_rows, n_labels) in a multi-class problem")
        return top1(indptr, indices, data, y, order, mu, s, step_ref, variance_ref, None, params,
                    covariance, floor, counts, None, None, None)

    name = getattr(step, "__name__", "step")
    binary_epoch.__name__ = binary_epoch.__qualname__ = f"{name}_binary_epoch"
    top1_epoch.__name__ = top1_epoch.__qualname__ = f"{name}_top1_epoch"
    return DiagonalKernels(binary_epoch, top1_epoch, params, forms)
