"""Cache prefetch hints for the hot loops: fetch the rows a kernel visits a few steps ahead.

A shuffled epoch visits CSR rows in random order, so every row starts at a random place in
``indices`` and ``data`` and its first cache lines come from main memory; the hardware prefetcher
only follows a row once it is under way. Measured on a 200,000 x 1,000,000 text-shaped matrix,
reading the rows in random order made the margin pass of a diagonal CW epoch five times slower
than reading them in storage order, with the same arithmetic. A prefetch hint for the row a few
positions ahead in ``order`` (and for its features' means and variances, once its indices are in
cache) lets those loads overlap with the work on the current row. A hint never changes a result:
it only moves memory into cache, and it cannot fault (an address out of range is ignored).

This module imports numba for the one intrinsic numba does not provide (``llvm.prefetch``); the
kernels use it through :func:`prefetch_ahead`. With
``NUMBA_DISABLE_JIT=1`` the hint is a Python no-op, so the kernels run unchanged as Python.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from textcw._jit import kernel
from textcw.learners._kernels.common import column

#: Rows ahead in ``order`` whose ``indices`` and ``data`` are fetched; their features' state is
#: fetched half as far ahead, when the row's indices have arrived (both chosen by measuring 2..16).
ROWS_AHEAD = 4
FEATURES_AHEAD = 2
_LINE = 64  # bytes per cache line on x86-64 and most ARM cores; a hint per line suffices
_ONE = np.uint64(1)  # unsigned, as the positions are (numba types unsigned-minus-signed as float)


def _prefetch_codegen(context, builder, sig, args):
    """``llvm.prefetch(&arr[i, k], read, high locality, data cache)`` (``&arr[i]`` if 1-d)."""
    aryty = sig.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    inds = [context.cast(builder, value, kind, types.intp)
            for value, kind in zip(args[1:1 + aryty.ndim], sig.args[1:1 + aryty.ndim])]
    ptr = cgutils.get_item_pointer2(
        context, builder, data=ary.data, shape=cgutils.unpack_tuple(builder, ary.shape),
        strides=cgutils.unpack_tuple(builder, ary.strides), layout=aryty.layout,
        inds=inds, wraparound=False, boundscheck=False,
    )
    byte_ptr = ir.IntType(8).as_pointer()
    i32 = ir.IntType(32)
    hint = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr, i32, i32, i32]), "llvm.prefetch.p0"
    )
    builder.call(hint, [builder.bitcast(ptr, byte_ptr), ir.Constant(i32, 0), ir.Constant(i32, 3),
                        ir.Constant(i32, 1)])
    return context.get_dummy_value()


if numba.config.DISABLE_JIT:
    def prefetch(arr, i, k):
        """No-op without the JIT (the hint only matters to compiled code)."""
else:
    @intrinsic
    def prefetch(typingctx, arr, i, k):
        """Hint the CPU to bring the cache line of ``arr[i, k]`` in (of ``arr[i]`` if ``arr`` is
        1-d: ``k`` is then ignored, so one kernel serves vectors and matrices)."""
        if (isinstance(arr, types.Array) and arr.ndim in (1, 2) and isinstance(i, types.Integer)
                and isinstance(k, types.Integer)):
            return types.none(arr, i, k), _prefetch_codegen
        return None


@kernel
def prefetch_ahead(indptr, indices, data, order, t, mu, s):
    """The hints for step ``t`` of an epoch over ``order``: the ``indices`` and ``data`` lines of
    the row ``ROWS_AHEAD`` steps ahead, and ``mu[j]``, ``s[j]`` (every line of rows ``j`` if 2-d) for the features
    of the row ``FEATURES_AHEAD`` steps ahead. One function, not three: each compiled function
    adds to the first fit's compile time."""
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
                prefetch(s, j, k)
