"""The epoch loop of every learner whose state is per-feature vectors: a variant gives its step,
textcw the loop.

The built-in perceptron and passive-aggressive learners (:mod:`.first_order`) and plugin variants
(:func:`per_feature_kernels`, e.g. Balanced Winnow's two positive vectors ``u`` and ``v``) run
on the same two loops, :func:`binary_loop` and :func:`top1_loop`, the non-Gaussian siblings of
:mod:`.diagonal_loop`. The state is one or more arrays shaped like the weights (``w[d]`` binary,
``W[d, K]`` multi-class, C-contiguous), and the variant writes three numba functions over it,
defined at module level. Each reaches an entry of every state array through a *cell* ``c``: the
feature ``j`` in a binary problem, ``j * K + k`` (feature ``j``, label ``k``) in a multi-class
one, an index into the state arrays flattened in C order, so one function serves both problems:

- ``weight(state, c) -> float``: the net weight of cell ``c`` (``state`` is the tuple of state
  arrays, flattened); the score of a document is ``sum_j weight(state, cell(j)) x_j``;
- ``step(m, q, params) -> tau``: the size of the update from the margin ``m`` (before the
  update) and the squared norm ``q`` of the update's direction in the space of all the cells:
  ``|x|^2`` binary, ``|f(x, y) - f(x, r)|^2 = 2 |x|^2`` multi-class (so a passive-aggressive
  step, ``loss / q``, is one function for both); ``tau <= 0`` means no update;
- ``update(state, c, x_j, g, params)``: update cell ``c`` in place for a non-zero ``x_j`` with
  the signed step ``g``: ``g = y tau`` for a binary document; in a multi-class one ``g = +tau``
  for the cells of the true label and ``g = -tau`` for those of the competitor (so ``g > 0``
  means "raise this cell's score", the sign of the margin's gradient).

``params`` is the tuple of the variant's parameters. A built-in variant with weighted examples or
a running average adds ``example(params, weight, lag) -> params``: the parameters for an example
of weight ``s > 0`` that is the ``lag``-th (0-based) of all the examples seen; the loops call it
only when given ``weights`` or ``count``.

The loops apply textcw's guards, so that a variant cannot leave one out: a mistake is counted
before the update, and a tie (``m == 0``) or a NaN margin counts as one; an empty document makes
no update and its step is not called; a ``tau`` that is not finite (e.g. a step that divides by
a ``q`` that underflowed to 0) or not positive makes no update; an update that leaves a state
value infinite or NaN (an overflow) is undone, every cell of the document back to its value
before it, and the loop raises ``FloatingPointError`` (:data:`NON_FINITE_MESSAGE`). The last
argument, ``checked``, is ``True`` for these guards (every plugin variant); the built-in
perceptron and PA rules pass ``None``, which keeps the test ``m <= 0`` for a mistake (a NaN
margin not counted) and leaves out the undo, as their own loops always did, so that their
results and their speed stay as they were. The binary
margin is ``m = y (score - threshold)`` with the optional threshold (a linear threshold unit's
``theta``; 0 without one). Multi-class problems use the top-1 reduction (JMLR 2006 section 7;
EMNLP 2009): ``m = s_y - s_r`` against the best other label ``r`` (ties to the lowest index), and
an update moves label ``y``'s cells with ``+tau`` and label ``r``'s with ``-tau``; the threshold
shifts every label equally and plays no part there. The binary loop hints the cache lines of the
rows ahead and of their cells in every state array (:mod:`.prefetch`).

The loops take the variant's functions as :class:`textcw._jit.KernelRef` arguments, so numba
caches their compiled code for each variant on disk. :func:`per_feature_kernels` builds a
variant's epoch kernels, which take ``(indptr, indices, data, y, order, *state, *params)``: the
state arrays and the parameters *by the names the kernels were built with*, so that a learner
binds them by name like any kernel (:func:`textcw.learners.protocol.bind_kernel`).
"""

from __future__ import annotations

import keyword
import math
from typing import Callable, NamedTuple

import numpy as np

from textcw._jit import KernelRef, call, closure_kernel, kernel, uncached
from textcw.learners._kernels.common import add_examples, column, examples_seen, top_competitor
from textcw.learners._kernels.prefetch import (
    FEATURES_AHEAD,
    ROWS_AHEAD,
    hint_features,
    hint_lines,
    line_step,
    row_ahead,
)

# The arguments every epoch kernel takes first (textcw.learners.protocol.DATA_ARGUMENTS, which
# sits a layer above the kernels; a test holds the two equal).
DATA_ARGUMENTS = ("indptr", "indices", "data", "y", "order")
# Names the generated entry points use besides the arguments (see the end of per_feature_kernels).
_ENTRY_NAMES = ("binary_loop", "top1_loop", "arrays", "float", "refs", "check")


# Raised by the loops when a variant's update left a state value that is not finite (an
# overflow); the document's update is undone first, so the state stays as it was before it.
NON_FINITE_MESSAGE = ("the variant's update made a state value infinite or NaN (an overflow); that "
                      "document's update was undone")


@kernel
def _widest_row(indptr, order):
    """The most non-zeros of a row in ``order``: the size of the buffer that saves a row's cells."""
    widest = 0
    for t in range(order.shape[0]):
        i = order[t]
        n = int(indptr[i + 1] - indptr[i])
        if n > widest:
            widest = n
    return widest


@kernel
def _save(arrays, c, saved, slot):
    n = len(arrays)
    for a in range(n):
        saved[slot * n + a] = arrays[a][c]


@kernel
def _restore(arrays, c, saved, slot):
    n = len(arrays)
    for a in range(n):
        arrays[a][c] = saved[slot * n + a]


@kernel
def _finite(arrays, c):
    """Whether every state value of cell ``c`` is finite. Without branches (``&``, not
    ``and``): the loops combine it over a document's cells and branch once per document."""
    finite = True
    for a in range(len(arrays)):
        finite &= math.isfinite(arrays[a][c])
    return finite


@kernel
def _span(start, stop):
    """``stop - start`` as a signed integer, to count down to -1 in (the unsigned positions of
    :func:`.common.column` would wrap around below 0 without the JIT)."""
    return np.int64(stop) - np.int64(start)


@kernel
def _mistake(m, checked):
    """Whether margin ``m`` is a mistake: ``m <= 0`` for the built-in rules (``checked`` is
    ``None``), as their own loops always counted; ``not m > 0`` (a NaN margin too) with the full
    guards."""
    if checked is None:
        return m <= 0.0
    return not m > 0.0


@closure_kernel  # not cached on its own, as diagonal_loop.guarded_steps (it takes a variant's function)
def _example_params(example, params, weights, i, count, lag):
    """The parameters of the example in row ``i`` (module docstring)."""
    if weights is None:
        if count is None:
            return params
        return call(example, params, 1.0, lag)
    return call(example, params, weights[i], lag)


@kernel
def binary_loop(indptr, indices, data, y, order, arrays, weight, step, update, example, params, bias,
                weights, count, checked):
    """One epoch of binary updates over the state ``arrays`` (a tuple of vectors); returns
    ``(mistakes, updates)``. ``bias`` is the threshold; ``example`` is called only with
    ``weights`` or ``count`` (and may then be ``None``); ``checked`` is ``True`` for the full
    guards, ``None`` for the built-in rules' (module docstring)."""
    seen = examples_seen(count)
    mistakes = 0
    updates = 0
    saved = np.empty(0 if checked is None else len(arrays) * _widest_row(indptr, order))
    index_step, data_step = line_step(indices), line_step(data)
    for t in range(order.shape[0]):
        start, stop = row_ahead(indptr, order, t, ROWS_AHEAD)
        hint_lines(indices, start, stop, index_step)
        hint_lines(data, start, stop, data_step)
        start, stop = row_ahead(indptr, order, t, FEATURES_AHEAD)
        for a in range(len(arrays)):
            hint_features(arrays[a], indices, start, stop, index_step)  # vectors: the step is unused
        i = order[t]
        start, stop = column(indptr[i]), column(indptr[i + 1])
        score = 0.0
        q = 0.0
        for p in range(start, stop):
            score += call(weight, arrays, column(indices[p])) * data[p]
            q += data[p] * data[p]
        m = y[i] * (score - bias)
        if _mistake(m, checked):  # before the update; a tie is a mistake
            mistakes += 1
        if stop > start:
            at = _example_params(example, params, weights, i, count, seen + t)
            tau = call(step, m, q, at)
            if tau > 0.0 and math.isfinite(tau):
                updates += 1
                g = y[i] * tau
                if checked is None:
                    for p in range(start, stop):
                        call(update, arrays, column(indices[p]), data[p], g, at)
                else:
                    finite = True
                    for p in range(start, stop):  # each cell saved, updated and checked while in cache
                        c = column(indices[p])
                        _save(arrays, c, saved, p - start)
                        call(update, arrays, c, data[p], g, at)
                        finite &= _finite(arrays, c)
                    if not finite:
                        for k in range(_span(start, stop) - 1, -1, -1):  # the last cell first
                            _restore(arrays, column(indices[np.int64(start) + k]), saved, k)
                        raise FloatingPointError(NON_FINITE_MESSAGE)
    add_examples(count, seen, order.shape[0])
    return mistakes, updates


@kernel
def top1_loop(indptr, indices, data, y, order, arrays, n_labels, weight, step, update, example, params,
              weights, count, checked):
    """One epoch of top-1 multi-class updates over the state ``arrays`` (a tuple of ``d x K``
    arrays flattened in C order, ``K = n_labels``); arguments as for :func:`binary_loop`."""
    seen = examples_seen(count)
    mistakes = 0
    updates = 0
    scores = np.empty(n_labels)
    saved = np.empty(0 if checked is None else len(arrays) * 2 * _widest_row(indptr, order))
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        start, stop = column(indptr[i]), column(indptr[i + 1])
        scores[:] = 0.0
        q = 0.0
        for p in range(start, stop):
            # the row's cells, in signed arithmetic (numba types unsigned-with-signed as
            # float), each made unsigned by column() to index without wraparound checks
            base = indices[p] * n_labels
            for k in range(n_labels):
                scores[k] += call(weight, arrays, column(base + k)) * data[p]
            q += data[p] * data[p]
        r = top_competitor(scores, yi)
        m = scores[yi] - scores[r]
        if _mistake(m, checked):
            mistakes += 1
        if stop > start:
            at = _example_params(example, params, weights, i, count, seen + t)
            tau = call(step, m, 2.0 * q, at)
            if tau > 0.0 and math.isfinite(tau):
                updates += 1
                if checked is None:
                    for p in range(start, stop):
                        base = indices[p] * n_labels
                        call(update, arrays, column(base + yi), data[p], tau, at)
                        call(update, arrays, column(base + r), data[p], -tau, at)
                else:
                    finite = True
                    for p in range(start, stop):
                        base = indices[p] * n_labels
                        cy, cr = column(base + yi), column(base + r)
                        _save(arrays, cy, saved, 2 * (p - start))
                        _save(arrays, cr, saved, 2 * (p - start) + 1)
                        call(update, arrays, cy, data[p], tau, at)
                        call(update, arrays, cr, data[p], -tau, at)
                        finite &= _finite(arrays, cy) & _finite(arrays, cr)
                    if not finite:
                        for k in range(_span(start, stop) - 1, -1, -1):
                            base = indices[np.int64(start) + k] * n_labels
                            _restore(arrays, column(base + r), saved, 2 * k + 1)
                            _restore(arrays, column(base + yi), saved, 2 * k)
                        raise FloatingPointError(NON_FINITE_MESSAGE)
    add_examples(count, seen, order.shape[0])
    return mistakes, updates


# ---------------------------------------------------------------- a plugin variant's kernels
class PerFeatureKernels(NamedTuple):
    """The epoch kernels of one per-feature variant (:func:`per_feature_kernels`)."""

    binary: Callable
    top1: Callable
    state: tuple[str, ...]  # the state arrays, in the order the kernels take them
    params: tuple[str, ...]  # the parameters, in the order of ``params``


def _names(what: str, names, taken: tuple[str, ...]) -> tuple[str, ...]:
    names = tuple(names) if isinstance(names, (tuple, list)) else names
    if (not isinstance(names, tuple) or not names
            or not all(isinstance(n, str) and n.isidentifier() and not keyword.iskeyword(n)
                       for n in names)):
        raise TypeError(f"{what} must be a non-empty tuple of identifiers; got {names!r}")
    clash = sorted((set(names) & set(taken)) | {n for n in names if names.count(n) > 1})
    if clash:
        raise TypeError(f"{what} {names!r}: {', '.join(map(repr, clash))} is used twice or is "
                        f"one of the kernel's other arguments {taken}")
    return names


def _check(arrays, ndim: int) -> None:
    """The loops index the state without bounds checks, and the multi-class loop reads it
    flattened: the arrays must share one shape of ``ndim`` dimensions and be C-contiguous (so
    flattening is a view, not a copy the updates would be lost in)."""
    first = arrays[0]
    if first.ndim != ndim or any(a.shape != first.shape for a in arrays):
        shape = "(n_rows,) in a binary problem" if ndim == 1 else "(n_rows, n_labels) in a multi-class problem"
        raise ValueError(f"the state arrays must all have the shape {shape}")
    if ndim == 2 and not all(a.flags.c_contiguous for a in arrays):
        raise ValueError("the state arrays of a multi-class problem must be C-contiguous")


def per_feature_kernels(weight, step, update, *, state, params,
                        threshold: str | None = None) -> PerFeatureKernels:
    """The binary and top-1 multi-class epoch kernels of a variant whose state is per-feature
    vectors named ``state``, whose update is ``weight``, ``step`` and ``update`` (numba
    functions, see the module docstring) and whose parameters are named ``params``;
    ``threshold``, one of ``params``, is subtracted from binary scores.

    The kernels are plain Python functions that call the loops: the loops' code for this
    variant is compiled on first use and cached on disk when the three functions are defined at
    module level (:class:`textcw._jit.KernelRef`), else compiled once per process.
    """
    state = _names("state", state, DATA_ARGUMENTS + _ENTRY_NAMES)
    params = _names("params", params, DATA_ARGUMENTS + _ENTRY_NAMES + state)
    if threshold is not None and threshold not in params:
        raise TypeError(f"threshold must be one of params {params}; got {threshold!r}")
    refs = KernelRef(weight), KernelRef(step), KernelRef(update)
    cacheable = all(ref.cacheable for ref in refs)

    # textcw binds state arrays and parameters to a kernel by its parameter names; so each
    # kernel is a thin entry point with exactly the variant's names, generated from them
    # (identifiers, checked above), that packs the arrays and the parameters into the tuples
    # the loops take.
    name = getattr(step, "__name__", "")
    name = name if name.isidentifier() and not keyword.iskeyword(name) else "step"
    signature = ", ".join((*DATA_ARGUMENTS, *state, *params))
    packed_params = "".join(f"float({p}), " for p in params)
    bias = f"float({threshold})" if threshold is not None else "0.0"
    source = f"""
def {name}_binary_epoch({signature}):
    arrays = ({"".join(f"{a}, " for a in state)})
    check(arrays, 1)
    return binary_loop(indptr, indices, data, y, order, arrays, *refs, None, ({packed_params}), {bias},
                       None, None, True)

def {name}_top1_epoch({signature}):
    arrays = ({"".join(f"{a}, " for a in state)})
    check(arrays, 2)
    return top1_loop(indptr, indices, data, y, order, tuple(a.reshape(a.size) for a in arrays),
                     {state[0]}.shape[1], *refs, None, ({packed_params}), None, None, True)
"""
    namespace = {"binary_loop": binary_loop if cacheable else uncached(binary_loop),
                 "top1_loop": top1_loop if cacheable else uncached(top1_loop),
                 "refs": refs, "check": _check}
    exec(compile(source, f"<per_feature_kernels {name}>", "exec"), namespace)  # noqa: S102
    return PerFeatureKernels(namespace[f"{name}_binary_epoch"], namespace[f"{name}_top1_epoch"],
                             state, params)
