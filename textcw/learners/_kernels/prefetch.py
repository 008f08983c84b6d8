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
kept with the other numba code); the kernels use it through :func:`prefetch_ahead`. With
``NUMBA_DISABLE_JIT=1`` the hint is a Python no-op, so the kernels run unchanged as Python.
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


@kernel
def prefetch_ahead(indptr, indices, data, order, t, mu, s):
    """The hints for step ``t`` of an epoch over ``order``: the ``indices`` and ``data`` lines of
    the row ``ROWS_AHEAD`` steps ahead, and ``mu[j]``, ``s[j]`` (every line of rows ``j`` if 2-d) for the features
    of the row ``FEATURES_AHEAD`` steps ahead. One function, not three: each compiled function
    adds to the first fit's compile time. ``s`` may be ``None`` when ``s[j]`` shares ``mu[j]``'s
    cache line (an interleaved state, :mod:`textcw.learners.interleaved`): one hint per feature
    then does."""
    n = order.shape[0]
    if t + ROWS_AHEAD < n:
        i = order[t + ROWS_AHEAD]
        start = column(indptr[i])
        stop = column(indptr[i + 1])
        if stop > start:
            for p in range(start, stop, column(_LINE // data.itemsize)):
                prefetch(data, p, 0)
            prefetch(data, stop - _ONE, 0)  # the last line, when the row does not start on a line
            for p in range(start, stop, column(_LINE // indices.itemsize)):
                prefetch(indices, p, 0)
            prefetch(indices, stop - _ONE, 0)
    if t + FEATURES_AHEAD < n:
        i = order[t + FEATURES_AHEAD]
        labels = mu.size // mu.shape[0] if mu.shape[0] > 0 else 0  # K for (d, K) blocks, 1 for (d,)
        step = _LINE // mu.itemsize
        for p in range(column(indptr[i]), column(indptr[i + 1])):
            j = column(indices[p])
            for k in range(0, labels, step):  # every line of a feature's row of K labels
                prefetch(mu, j, k)
                if s is not None:  # pruned when compiled for None
                    prefetch(s, j, k)


@kernel
def interleaved(mu, s):
    """Whether ``s[j]`` is stored right after ``mu[j]`` for every ``j`` (the two columns of one
    ``(n_rows, 2)`` array, :mod:`textcw.learners.interleaved`), so a feature's mean and variance
    share one cache line."""
    return (mu.ndim == 1 and s.ndim == 1 and mu.strides[0] == 2 * mu.itemsize
            and s.strides[0] == mu.strides[0] and s.ctypes.data == mu.ctypes.data + mu.itemsize)
