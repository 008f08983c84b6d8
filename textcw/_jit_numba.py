"""The numba side of :mod:`textcw._jit`: imported, with numba, when a kernel is first used.

It builds the numba functions of :class:`textcw._jit.Kernel` (the policy of :mod:`textcw._jit`),
and tells numba's typing what textcw's own objects are inside compiled code: a
:class:`~textcw._jit.Kernel` is the numba function it wraps (so a kernel calling another compiles,
and is cached, exactly as if the global were numba's own function), a
:class:`~textcw._jit.KernelRef` is a type named by its key, and :data:`textcw._jit.call` and
:data:`textcw._jit.prefetch` are the two intrinsics below.
"""

from __future__ import annotations

import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models
from numba.core.imputils import lower_constant
from numba.core.typing import signature
from numba.core.typing.templates import builtin_registry
from numba.extending import NativeValue, intrinsic, register_model, typeof_impl, unbox

from textcw import _compile_notice
from textcw._jit import _REFERENCED, Kernel, KernelRef, _Intrinsic, call_in_python, prefetch_in_python

_compile_notice.attach()  # the command line's notice of a first run's compiling


def jit(fn, *, cache: bool):
    """``fn`` compiled under textcw's policy (:mod:`textcw._jit`); cached on disk if ``cache``."""
    return numba.njit(cache=cache, nogil=True, fastmath=False, error_model="numpy")(fn)


@typeof_impl.register(Kernel)
def _typeof_kernel(value, context):
    target = value.dispatcher
    return types.Dispatcher(target) if isinstance(target, numba.core.dispatcher.Dispatcher) else None


class KernelRefType(types.Dummy):
    """numba's type of a :class:`KernelRef`: its name and nothing else, so that it pickles into
    the cache index and compares equal across processes."""

    def __init__(self, key: str):
        self.ref_key = key
        super().__init__(f"kernel_ref[{key}]")


register_model(KernelRefType)(models.OpaqueModel)


@typeof_impl.register(KernelRef)
def _typeof_kernel_ref(value, context):
    _REFERENCED[value.key] = value.function
    return KernelRefType(value.key)


@unbox(KernelRefType)
def _unbox_kernel_ref(typ, obj, c):
    return NativeValue(c.context.get_dummy_value())  # the type says everything


@lower_constant(KernelRefType)
def _constant_kernel_ref(context, builder, typ, value):
    return context.get_dummy_value()  # a KernelRef global of a kernel


def _call_codegen(function, inner):
    def codegen(context, builder, sig, llargs):
        args = cgutils.unpack_tuple(builder, llargs[1])
        return context.get_function(function, inner)(builder, args)
    return codegen


if numba.config.DISABLE_JIT:  # set by a config file rather than the environment
    call = call_in_python
else:
    @intrinsic
    def call(typingctx, ref, *args):
        """``ref``'s function called with ``args``: in compiled code, a direct call of that
        function's compilation for these arguments (:class:`KernelRef`)."""
        if not isinstance(ref, KernelRefType):
            return None
        function = typingctx.resolve_value_type(_REFERENCED[ref.ref_key])
        inner = typingctx.resolve_function_type(function, args, {})
        if inner is None:
            return None
        return signature(inner.return_type, ref, types.StarArgTuple(args)), _call_codegen(function, inner)


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
    prefetch = prefetch_in_python
else:
    @intrinsic
    def prefetch(typingctx, arr, i, k):
        """Hint the CPU to bring the cache line of ``arr[i, k]`` in (of ``arr[i]`` if ``arr`` is
        1-d: ``k`` is then ignored, so one kernel serves vectors and matrices)."""
        if (isinstance(arr, types.Array) and arr.ndim in (1, 2) and isinstance(i, types.Integer)
                and isinstance(k, types.Integer)):
            return types.none(arr, i, k), _prefetch_codegen
        return None


_INTRINSIC_TYPES: dict[str, object] = {}


@typeof_impl.register(_Intrinsic)
def _typeof_intrinsic(value, context):
    """The type numba registered for the intrinsic the name stands for."""
    if value.name not in _INTRINSIC_TYPES:
        target = globals()[value.name]
        for registered, typ in builtin_registry.globals:
            if registered is target:
                _INTRINSIC_TYPES[value.name] = typ
                break
        else:
            return None
    return _INTRINSIC_TYPES[value.name]
