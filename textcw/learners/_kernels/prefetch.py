"""Cache prefetch hints for the hot loops: fetch the rows a kernel visits a few steps ahead.

A shuffled epoch visits CSR rows in random order, so every row starts at a random place in
``indices`` and ``data`` and its first cache lines come from main memory; the hardware prefetcher
only follows a row once it is under way. Measured on a 200,000 x 1,000,000 text-shaped matrix,
reading the rows in random order made the margin pass of a diagonal CW epoch five times slower
than reading them in storage order, with the same arithmetic. A prefetch hint for the row a few
positions ahead in ``order`` (and for its features' means and variances, once its indices are in
cache) lets those loads overlap with the work on the current row. A hint never changes a result:
it only moves memory into cache, and it cannot fault (an address out of range is ignored).

The hint itself is :func:`textcw._jit.prefetch` (the one LLVM intrinsic numba does not provide,
kept with the other numba code). An epoch loop hints, at every step ``t``, every line of the
``indices`` and ``data`` of the row :data:`ROWS_AHEAD` steps ahead (:func:`hint_lines`) and the
state of the features of the row :data:`FEATURES_AHEAD` steps ahead (:func:`hint_features`),
whose positions :func:`row_ahead` gives.

Why small pieces the loops put together, not one function per step: a compiled function that
takes arrays increments and decrements the reference count of each array it is given (atomic
operations) on every call unless the compiler inlines it into its caller, and LLVM inlines only
small functions with few arguments. The earlier single function of the three hints took six
arrays and was never inlined: its calls cost about 175 ns per row in a bare loop, and about a
sixth of a diagonal AROW epoch's kernel time on the benchmark's rows (docs/benchmarks.md
"Inlined prefetch hints"). Each piece here takes one
or two arrays and is inlined, so a step's hints cost only the prefetch instructions; their
loops count by adding a step computed once per epoch (:func:`line_step`), never by a division.

With ``NUMBA_DISABLE_JIT=1`` the hint is a Python no-op, so the kernels run unchanged as Python.
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel, prefetch
from textcw.learners._kernels.common import column

#: Rows ahead in ``order`` whose ``indices`` and ``data`` are fetched; their features' state is
#: fetched half as far ahead, when the row's indices have arrived (both chosen by measuring 2..16).
ROWS_AHEAD = 4
FEATURES_AHEAD = 2
_LINE = 64  # bytes per cache line on x86-64 and most ARM cores; a hint per line suffices
_ONE = np.uint64(1)  # unsigned, as the positions are (numba types unsigned-minus-signed as float)
_NONE = np.uint64(0)


@kernel
def line_step(a):
    """The entries of ``a`` per cache line (along its last axis): the step of a loop that hints
    every line once. Computed once per epoch: a loop of hints then adds it, with no division."""
    return column(max(1, _LINE // a.itemsize))


@kernel
def row_ahead(indptr, order, t, ahead):
    """``(start, stop)``: the positions in ``indices`` and ``data`` of the row ``ahead`` steps
    after step ``t`` of ``order``; an empty range past the end of ``order``."""
    if t + ahead < order.shape[0]:
        i = order[t + ahead]
        return column(indptr[i]), column(indptr[i + 1])
    return _NONE, _NONE


@kernel
def hint_lines(a, start, stop, step):
    """Hint every cache line of the 1-d ``a[start:stop]``, ``step`` entries per line
    (:func:`line_step`), the last one included when the range does not start on a line."""
    if stop > start:
        p = start
        while p < stop:
            prefetch(a, p, 0)
            p += step
        prefetch(a, stop - _ONE, 0)


@kernel
def hint_features(a, indices, start, stop, step):
    """Hint ``a[j]`` for the features ``j`` of ``indices[start:stop]``; for a ``(d, K)`` array
    one hint per line's worth of the row ``a[j, :]`` from its start (``step`` entries per line,
    :func:`line_step`)."""
    for p in range(start, stop):
        j = column(indices[p])
        if a.ndim == 1:
            prefetch(a, j, 0)
        else:
            k = _NONE
            while k < column(a.shape[1]):
                prefetch(a, j, k)
                k += step


@kernel
def interleaved(mu, s):
    """Whether ``s[j]`` is stored right after ``mu[j]`` for every ``j`` (the two columns of one
    ``(n_rows, 2)`` array, :mod:`textcw.learners.interleaved`), so a feature's mean and variance
    share one cache line."""
    return (mu.ndim == 1 and s.ndim == 1 and mu.strides[0] == 2 * mu.itemsize
            and s.strides[0] == mu.strides[0] and s.ctypes.data == mu.ctypes.data + mu.itemsize)
