"""The only module that imports numba.

Policy: kernels are compiled ahead of first use and cached on disk (``cache=True``), release the
GIL (``nogil=True``) so shard training can use threads, and never use ``fastmath``: the update
rules divide by small margin variances, and reassociating those sums would make the kernels
disagree with their plain-numpy twins beyond 1e-12.

For developers: numba invalidates a cached kernel only when the source file that defines it
changes, not when a kernel it calls in another module does, so after editing, say,
``learners/_kernels/common.py`` the kernels of ``gaussian_diag.py`` would silently run their
stale machine code from ``__pycache__``. ``python3 dev.py`` (``train``, ``test``, ``docs``)
therefore runs everything with ``NUMBA_CACHE_DIR`` set to ``build/numba-cache/<digest>``,
named by the sha256 of every kernel module's source (this one, ``_csr_kernel.py``,
``learners/_kernels/*.py`` and the first-party plugins' kernel modules): any kernel change
starts a fresh cache, and an unchanged tree reuses its folder, so warm runs stay warm. Running
``pytest`` by hand uses numba's default cache; after changing a kernel that others call, set
``NUMBA_CACHE_DIR`` yourself or delete the ``__pycache__/*.nbi`` and ``*.nbc`` files.
"""

from __future__ import annotations

import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from textcw import _compile_notice

_compile_notice.attach()  # the command line's notice of a first run's compiling


def kernel(fn):
    """Compile ``fn`` as a textcw kernel (no Python objects, cached, GIL released)."""
    return numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")(fn)


def closure_kernel(fn):
    """:func:`kernel`'s policy for a function built inside a factory, which numba cannot cache
    on disk: it is compiled on first call in each process."""
    return numba.njit(nogil=True, fastmath=False, error_model="numpy")(fn)


# ---------------------------------------------------------------- cache prefetch hint
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
