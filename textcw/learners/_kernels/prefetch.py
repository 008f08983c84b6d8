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
    """``llvm.prefetch(&arr[idx, 0, ...], read, high locality, data cache)``."""
    aryty = sig.args[0]
    ary = context.make_array(aryty)(context, builder, args[0])
    zero = context.get_constant(types.intp, 0)
    index = context.cast(builder, args[1], sig.args[1], types.intp)
    ptr = cgutils.get_item_pointer2(
        context, builder, data=ary.data, shape=cgutils.unpack_tuple(builder, ary.shape),
        strides=cgutils.unpack_tuple(builder, ary.strides), layout=aryty.layout,
        inds=[index] + [zero] * (aryty.ndim - 1), wraparound=False, boundscheck=False,
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
    def prefetch(arr, idx):
        """No-op without the JIT (the hint only matters to compiled code)."""
else:
    @intrinsic
    def prefetch(typingctx, arr, idx):
        """Hint the CPU to bring the cache line of ``arr[idx]`` (row ``idx`` of a 2-d array) in."""
        if isinstance(arr, types.Array) and isinstance(idx, types.Integer):
            return types.none(arr, idx), _prefetch_codegen
        return None


@kernel
def prefetch_ahead(indptr, indices, data, order, t, mu, s):
    """The hints for step ``t`` of an epoch over ``order``: the ``indices`` and ``data`` lines of
    the row ``ROWS_AHEAD`` steps ahead, and ``mu[j]``, ``s[j]`` (rows ``j`` if 2-d) for the features
    of the row ``FEATURES_AHEAD`` steps ahead. One function, not three: each compiled function
    adds to the first fit's compile time."""
    n = order.shape[0]
    if t + ROWS_AHEAD < n:
        i = order[t + ROWS_AHEAD]
        start = column(indptr[i])
        stop = column(indptr[i + 1])
        if stop > start:
            for p in range(start, stop, column(_LINE // data.itemsize)):
                prefetch(data, p)
            prefetch(data, stop - _ONE)  # the last line, when the row does not start on a line
            for p in range(start, stop, column(_LINE // indices.itemsize)):
                prefetch(indices, p)
            prefetch(indices, stop - _ONE)
    if t + FEATURES_AHEAD < n:
        i = order[t + FEATURES_AHEAD]
        for p in range(column(indptr[i]), column(indptr[i + 1])):
            j = column(indices[p])
            prefetch(mu, j)
            prefetch(s, j)
