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

Kernels passed to kernels: the epoch loops (``learners/_kernels/diagonal_loop.py`` and
``feature_loop.py``) take a variant's update as functions, as scikit-learn's one SGD loop takes
its loss object. numba types a compiled function passed as an argument by the function object,
which is new in every process, so a loop compiled for it would be cached under a key no later
process finds. :class:`KernelRef` wraps the function and is typed by its *name* instead: module,
qualified name and a digest of its source file, the same in every process until that file
changes. A loop compiled for it is therefore cached once, in the loop's own cache, and loaded by
every later process (a plugin's variant starts as fast as a built-in rule); the loop calls it with
:func:`call`. A function no name reaches again (a closure, one defined inside a function) gets a
name unique to its process: ``cacheable`` is then false and the loops use their :func:`uncached`
twins, so nothing is written to the cache that no process could read.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import sys
import uuid

import numba
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.datamodel import models
from numba.core.imputils import lower_constant
from numba.core.typing import signature
from numba.extending import NativeValue, intrinsic, register_model, typeof_impl, unbox

from textcw import _compile_notice

_compile_notice.attach()  # the command line's notice of a first run's compiling


def kernel(fn):
    """Compile ``fn`` as a textcw kernel (no Python objects, cached, GIL released)."""
    return numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")(fn)


def closure_kernel(fn):
    """:func:`kernel`'s policy for a function built inside a factory, which numba cannot cache
    on disk: it is compiled on first call in each process."""
    return numba.njit(nogil=True, fastmath=False, error_model="numpy")(fn)


def uncached(dispatcher):
    """A twin of the kernel ``dispatcher`` that is never cached: for loops called with a
    :class:`KernelRef` that is not ``cacheable``."""
    return closure_kernel(getattr(dispatcher, "py_func", dispatcher))


# ---------------------------------------------------------------- kernels passed to kernels
_REFERENCED: dict[str, object] = {}  # KernelRef name -> its function, for call()'s compilation
_PROCESS = uuid.uuid4().hex[:12]  # in the names of references no other process can name
_SERIAL = itertools.count()
_DIGESTS: dict[str, str] = {}  # source file -> digest of its bytes


def _file_digest(path: str) -> str:
    if path not in _DIGESTS:
        with open(path, "rb") as source:
            _DIGESTS[path] = hashlib.sha256(source.read()).hexdigest()[:20]
    return _DIGESTS[path]


def _source_file(function) -> str | None:
    """The source file that defines ``function`` if its module reaches it by its qualified name
    (so its name means this function in every process), else ``None``."""
    py_func = getattr(function, "py_func", function)
    module = sys.modules.get(getattr(py_func, "__module__", None) or "")
    qualname = getattr(py_func, "__qualname__", "")
    if module is None or "<locals>" in qualname or getattr(py_func, "__closure__", None):
        return None
    found = module
    for part in qualname.split("."):
        found = getattr(found, part, None)
    path = getattr(module, "__file__", None)
    if found is not function or not path or not os.path.isfile(path):
        return None
    return path


class KernelRef:
    """A kernel passed to another kernel as an argument, typed by its name (module docstring).

    ``function`` is a kernel (a numba function; a plain function without the JIT). The name
    includes a digest of the function's source file, read when the name is first needed (a
    loop's first compilation), so editing the file compiles the loop anew.
    """

    __slots__ = ("function", "cacheable", "_path", "_key")

    def __init__(self, function):
        self.function = function
        self._path = _source_file(function)
        self.cacheable = self._path is not None
        py_func = getattr(function, "py_func", function)
        self._key = None if self.cacheable else (
            f"{getattr(py_func, '__module__', '?')}:{getattr(py_func, '__qualname__', '?')}"
            f"#{_PROCESS}-{next(_SERIAL)}")

    @property
    def key(self) -> str:
        if self._key is None:
            py_func = getattr(self.function, "py_func", self.function)
            self._key = f"{py_func.__module__}:{py_func.__qualname__}@{_file_digest(self._path)}"
        return self._key

    def __repr__(self) -> str:
        return f"KernelRef({self.key})"


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


if numba.config.DISABLE_JIT:
    def call(ref, *args):
        """``ref``'s function called with ``args`` (:class:`KernelRef`)."""
        return ref.function(*args)
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
