"""The numba side of :mod:`textcw._jit`: imported, with numba, when a kernel is first used.

It builds the numba functions of :class:`textcw._jit.Kernel` (the policy of :mod:`textcw._jit`),
and tells numba's typing what textcw's own objects are inside compiled code: a
:class:`~textcw._jit.Kernel` is the numba function it wraps (so a kernel calling another compiles,
and is cached, exactly as if the global were numba's own function), a
:class:`~textcw._jit.KernelRef` is a type named by its key, and :data:`textcw._jit.call` and
:data:`textcw._jit.prefetch` are the two intrinsics below.
"""

from __future__ import annotations

import contextlib
import os
import time

import numba
from llvmlite import ir
from numba.core import cgutils, sigutils, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.datamodel import models
from numba.core.imputils import lower_constant
from numba.core.typing import signature
from numba.core.typing.templates import builtin_registry
from numba.extending import NativeValue, intrinsic, register_model, typeof_impl, unbox

from textcw import _compile_notice
from textcw._jit import _REFERENCED, Kernel, KernelRef, _Intrinsic, call_in_python, prefetch_in_python

_compile_notice.attach()  # the command line's notice of a first run's compiling


def jit(fn, *, cache: bool):
    """``fn`` compiled under textcw's policy (:mod:`textcw._jit`); cached on disk if ``cache``, and
    then compiled by one process at a time (:func:`compile_lock`)."""
    dispatcher = numba.njit(cache=cache, nogil=True, fastmath=False, error_model="numpy")(fn)
    if cache:
        _compile_in_turn(dispatcher)
    return dispatcher


# ---------------------------------------------------------------- one compiler per kernel
# How long a process waits for another that is compiling the same kernel before compiling it
# itself: the largest kernel compiles in a few seconds on one core (under 15 s on a loaded
# machine), and a process that dies lets go; one that was stopped (Ctrl-Z) would hold the lock,
# and a command then waits this long, saying so (textcw._compile_notice.waiting), and compiles.
COMPILE_WAIT_SECONDS = 60.0
_held: dict[str, int] = {}  # the lock files this process holds, and how deep (a kernel's own recursion)
_held_fds: dict[str, int] = {}  # their descriptors


def _forget_locks_in_child() -> None:
    """In a process forked while a kernel compiled (another thread's fork), drop the inherited
    descriptors of the parent's lock files: a lock is held while any descriptor of it is open, so
    a long-lived child would otherwise keep every other process waiting after the parent is done.
    Closing, not unlocking: an unlock would free the parent's lock too."""
    for fd in _held_fds.values():
        with contextlib.suppress(OSError):
            os.close(fd)
    _held_fds.clear()
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_locks_in_child)


def _compile_in_turn(dispatcher) -> None:
    """Make ``dispatcher`` compile a new signature under its cache's lock file, so that processes
    starting on a cold cache at once (``--shards``, a service's replicas, a test runner's
    workers) compile each kernel once: the others wait, then numba's own first step of a
    compilation, the look into the disk cache, finds what the first one saved. Without the lock
    every such process compiled every kernel itself (measured: scikit-learn's estimator checks
    on two workers from an empty cache, 125 s of CPU against 93 s on one worker)."""
    alone = dispatcher.compile

    def compile(sig):
        args, _ = sigutils.normalize_signature(sig)
        if tuple(args) in dispatcher.overloads:  # nothing to compile (typing asks at every call site)
            return alone(sig)
        # numba's own lock first, as its compile takes it: a thread of this process waiting for
        # the file while another thread of it holds numba's lock could otherwise wait forever
        with global_compiler_lock, compile_lock(dispatcher):
            return alone(sig)

    dispatcher.compile = compile


def _lock_path(dispatcher) -> str | None:
    """The lock file beside ``dispatcher``'s cache index, or ``None`` when numba keeps no cache
    for it (or its cache is laid out otherwise than numba 0.60 to 0.68 lay it out)."""
    index = getattr(getattr(getattr(dispatcher, "_cache", None), "_cache_file", None), "_index_path", None)
    return index + ".lock" if isinstance(index, str) else None


@contextlib.contextmanager
def compile_lock(dispatcher, wait: float | None = None):
    """Hold ``dispatcher``'s lock file (``flock``) while the block runs, waiting up to ``wait``
    seconds (:data:`COMPILE_WAIT_SECONDS`) for another process that holds it; past that, or where
    there is no lock to take (no cache, a read-only cache folder, no ``flock``), the block runs
    without it: compiling twice is the worst that can happen. Re-entrant in a process."""
    path = _lock_path(dispatcher)
    if path is None:
        yield
        return
    if path in _held:  # this process holds it already: a kernel compiling itself for another signature
        _held[path] += 1
        try:
            yield
        finally:
            if path in _held:  # (a fork's child forgets the parent's locks)
                _held[path] -= 1
        return
    fd = _locked(path, COMPILE_WAIT_SECONDS if wait is None else wait)
    if fd is not None:
        _held[path], _held_fds[path] = 1, fd
    try:
        yield
    finally:
        if fd is not None and _held_fds.get(path) == fd:
            del _held[path], _held_fds[path]
            os.close(fd)  # releases the lock


def _locked(path: str, wait: float) -> int | None:
    """A descriptor of ``path`` (created if missing, never through a link) holding its exclusive
    lock, or ``None``."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): processes may compile a kernel twice
        return None
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
                     0o600)
    except OSError:  # a read-only cache folder, a link where the lock belongs
        return None
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                return None
            _compile_notice.waiting(wait)
            time.sleep(0.02)
        except OSError:  # a file system without locks
            os.close(fd)
            return None


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
