"""One epoch loop for every variant whose state is per-feature vectors: the variant gives its
step, textcw the loop.

:func:`per_feature_kernels` is the non-Gaussian sibling of
:func:`.diagonal_loop.diagonal_gaussian_kernels`. The state is one or more arrays shaped like the
weights (``w[d]`` binary, ``W[d, K]`` multi-class, C-contiguous), e.g. Balanced Winnow's two
positive vectors ``u`` and ``v``, and the variant writes three numba functions over it. Each
reaches an entry of every state array through a *cell* ``c``: the feature ``j`` in a binary
problem, ``j * K + k`` (feature ``j``, label ``k``) in a multi-class one, an index into the
state arrays flattened in C order, so one function serves both problems:

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

``params`` is the tuple of the variant's parameters (floats), in the order the kernels were
built with. The loop applies textcw's guards, so that a variant cannot leave one out: a mistake
is counted before the update and a tie (``m == 0``) counts as a mistake; an empty document
makes no update and its step is not called; a ``tau`` that is not finite (e.g. a step that
divides by a ``q`` that underflowed to 0) or not positive makes no update. The binary margin is
``m = y (score - threshold)`` with the optional ``threshold`` parameter (a linear threshold
unit's ``theta``; 0 without one). Multi-class problems use the top-1 reduction: ``m = s_y - s_r``
against the best other label ``r`` (ties to the lowest index), and an update moves label ``y``'s
cells with ``+tau`` and label ``r``'s with ``-tau``; ``threshold`` shifts every label equally
and plays no part there.

The built kernels take ``(indptr, indices, data, y, order, *state, *params)``: the state arrays
and the parameters *by the names the kernels were built with*, so that a learner binds them by
name like any kernel (:func:`textcw.learners.protocol.bind_kernel`) and a plain call reads like
one of a hand-written kernel. They are compiled when first called, once per process (numba
caches functions defined at module level only).
"""

from __future__ import annotations

import keyword
import math
from typing import Callable, NamedTuple

import numpy as np

from textcw._jit import closure_kernel, kernel
from textcw.learners._kernels.common import column, top_competitor

# The arguments every epoch kernel takes first (textcw.learners.protocol.DATA_ARGUMENTS, which
# sits a layer above the kernels; a test holds the two equal).
DATA_ARGUMENTS = ("indptr", "indices", "data", "y", "order")
# Names the generated entry points use besides the arguments (see the end of per_feature_kernels).
_ENTRY_NAMES = ("binary_loop", "top1_loop", "arrays", "float")


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
    for a in range(len(arrays)):
        saved[a, slot] = arrays[a][c]


@kernel
def _restore(arrays, c, saved, slot):
    for a in range(len(arrays)):
        arrays[a][c] = saved[a, slot]


@kernel
def _finite(arrays, c):
    for a in range(len(arrays)):
        if not math.isfinite(arrays[a][c]):
            return False
    return True


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


def per_feature_kernels(weight, step, update, *, state, params,
                        threshold: str | None = None) -> PerFeatureKernels:
    """The binary and top-1 multi-class epoch kernels of a variant whose state is per-feature
    vectors named ``state``, whose update is ``weight``, ``step`` and ``update`` (numba
    functions, see the module docstring) and whose parameters are named ``params``;
    ``threshold``, one of ``params``, is subtracted from binary scores."""
    state = _names("state", state, DATA_ARGUMENTS + _ENTRY_NAMES)
    params = _names("params", params, DATA_ARGUMENTS + _ENTRY_NAMES + state)
    if threshold is not None and threshold not in params:
        raise TypeError(f"threshold must be one of params {params}; got {threshold!r}")
    at = params.index(threshold) if threshold is not None else -1

    def binary_loop(indptr, indices, data, y, order, arrays, values):
        mistakes = 0
        updates = 0
        bias = values[at] if at >= 0 else 0.0
        saved = np.empty((len(arrays), _widest_row(indptr, order)))
        for t in range(order.shape[0]):
            i = order[t]
            start, stop = column(indptr[i]), column(indptr[i + 1])
            score = 0.0
            q = 0.0
            for p in range(start, stop):
                j = column(indices[p])
                score += weight(arrays, j) * data[p]
                q += data[p] * data[p]
            m = y[i] * (score - bias)
            if not m > 0.0:  # before the update; a tie is a mistake, and so is a NaN margin
                mistakes += 1
            if stop > start:
                tau = step(m, q, values)
                if tau > 0.0 and math.isfinite(tau):
                    updates += 1
                    g = y[i] * tau
                    for p in range(start, stop):
                        _save(arrays, column(indices[p]), saved, p - start)
                    for p in range(start, stop):
                        update(arrays, column(indices[p]), data[p], g, values)
                    for p in range(start, stop):
                        if not _finite(arrays, column(indices[p])):
                            for back in range(stop - 1, start - 1, -1):
                                _restore(arrays, column(indices[back]), saved, back - start)
                            raise FloatingPointError(NON_FINITE_MESSAGE)
        return mistakes, updates

    def top1_loop(indptr, indices, data, y, order, arrays, n_labels, values):
        mistakes = 0
        updates = 0
        scores = np.empty(n_labels)
        saved = np.empty((len(arrays), 2 * _widest_row(indptr, order)))
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
                    scores[k] += weight(arrays, column(base + k)) * data[p]
                q += data[p] * data[p]
            r = top_competitor(scores, yi)
            m = scores[yi] - scores[r]
            if not m > 0.0:  # a tie is a mistake, and so is a NaN margin
                mistakes += 1
            if stop > start:
                tau = step(m, 2.0 * q, values)
                if tau > 0.0 and math.isfinite(tau):
                    updates += 1
                    for p in range(start, stop):
                        base = indices[p] * n_labels
                        _save(arrays, column(base + yi), saved, 2 * (p - start))
                        _save(arrays, column(base + r), saved, 2 * (p - start) + 1)
                    for p in range(start, stop):
                        base = indices[p] * n_labels
                        update(arrays, column(base + yi), data[p], tau, values)
                        update(arrays, column(base + r), data[p], -tau, values)
                    for p in range(start, stop):
                        base = indices[p] * n_labels
                        if not (_finite(arrays, column(base + yi)) and _finite(arrays, column(base + r))):
                            for back in range(stop - 1, start - 1, -1):
                                base = indices[back] * n_labels
                                _restore(arrays, column(base + r), saved, 2 * (back - start) + 1)
                                _restore(arrays, column(base + yi), saved, 2 * (back - start))
                            raise FloatingPointError(NON_FINITE_MESSAGE)
        return mistakes, updates

    binary_loop = closure_kernel(binary_loop)
    top1_loop = closure_kernel(top1_loop)

    # numba compiles functions of a fixed arity, and textcw binds state arrays and parameters to
    # a kernel by its parameter names; so each kernel is a thin entry point with exactly the
    # variant's names, generated from them (identifiers, checked above), that packs the arrays
    # and the parameters into the tuples the loops take. It checks the arrays' shapes, which
    # the loops index without bounds checks, and flattens the multi-class ones (a view: a
    # C-contiguous reshape; numba refuses another layout rather than copy).
    name = getattr(step, "__name__", "")
    name = name if name.isidentifier() and not keyword.iskeyword(name) else "step"
    signature = ", ".join((*DATA_ARGUMENTS, *state, *params))
    first = state[0]
    same = " or ".join(f"{a}.shape != {first}.shape" for a in state[1:]) or "False"
    packed_params = "".join(f"float({p}), " for p in params)
    source = f"""
def {name}_binary_epoch({signature}):
    if {first}.ndim != 1 or {same}:
        raise ValueError("the state arrays must all have the shape (n_rows,) in a binary problem")
    return binary_loop(indptr, indices, data, y, order, ({", ".join(state)},), ({packed_params}))

def {name}_top1_epoch({signature}):
    if {first}.ndim != 2 or {same}:
        raise ValueError("the state arrays must all have the shape (n_rows, n_labels) in a multi-class problem")
    arrays = ({"".join(f"{a}.reshape({a}.size), " for a in state)})
    return top1_loop(indptr, indices, data, y, order, arrays, {first}.shape[1], ({packed_params}))
"""
    namespace = {"binary_loop": binary_loop, "top1_loop": top1_loop}
    exec(compile(source, f"<per_feature_kernels {name}>", "exec"), namespace)  # noqa: S102
    return PerFeatureKernels(closure_kernel(namespace[f"{name}_binary_epoch"]),
                             closure_kernel(namespace[f"{name}_top1_epoch"]), state, params)
