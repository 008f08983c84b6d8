"""The kernels' decorators and references; numba itself is imported on a kernel's first use.

Policy: kernels are compiled ahead of first use and cached on disk (``cache=True``), release the
GIL (``nogil=True``) so shard training can use threads, and never use ``fastmath``: the update
rules divide by small margin variances, and reassociating those sums would make the kernels
disagree with their plain-numpy twins beyond 1e-12.

Loaded when used: importing numba costs about 0.3 s of one core, and loading its first cached
kernel initialises the compiler on top, which a one-line ``textcw predict`` (the model's modules
imported to unpickle it, then a few words featurized by scikit-learn's own code) never needs.
So :func:`kernel` returns a :class:`Kernel`, which builds the numba function only when it is
first called, compiled into another kernel, or asked for one of numba's attributes
(``signatures``, ``stats``); importing a module full of kernels imports no numba.
:mod:`textcw._jit_numba` is the numba side (the types and intrinsics below are typed there), and
tells numba that a :class:`Kernel` is the function it wraps, so a kernel calling a kernel
compiles, and is cached, exactly as with numba's own functions. With ``NUMBA_DISABLE_JIT=1`` in
the environment the decorators return the plain functions, as numba's would.

Several processes starting on a cold cache at once (``--shards``, a service's replicas, a test
runner's workers) compile each kernel once: :mod:`textcw._jit_numba` has a kernel compiled under
a lock file beside its cache index, so the others wait for the first and load what it saved.

For developers: numba invalidates a cached kernel only when the source file that defines it
changes, not when a kernel it calls in another module does, so after editing, say,
``learners/_kernels/common.py`` the kernels of ``gaussian_diag.py`` would silently run their
stale machine code from ``__pycache__``. ``python3 dev.py`` (``train``, ``test``, ``docs``)
therefore runs everything with ``NUMBA_CACHE_DIR`` set to ``build/numba-cache/<digest>``,
named by the sha256 of every kernel module's source (this one, ``_jit_numba.py``,
``_csr_kernel.py``, ``learners/_kernels/*.py`` and the first-party plugins' kernel modules): any
kernel change starts a fresh cache, and an unchanged tree reuses its folder, so warm runs stay
warm. Running ``pytest`` by hand uses numba's default cache; after changing a kernel that others
call, set ``NUMBA_CACHE_DIR`` yourself or delete the ``__pycache__/*.nbi`` and ``*.nbc`` files.

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

import functools
import hashlib
import importlib
import itertools
import os
import sys
import threading
import uuid
from collections.abc import Iterable, Iterator

__all__ = ["Kernel", "KernelRef", "call", "closure_kernel", "dispatchers_in", "kernel", "kernels_loaded", "prefetch", "uncached"]


def _jit_disabled() -> bool:
    """numba's own reading of ``NUMBA_DISABLE_JIT`` (an integer; anything else means 0)."""
    try:
        return int(os.environ.get("NUMBA_DISABLE_JIT", "0")) != 0
    except ValueError:
        return False


DISABLED = _jit_disabled()  # plain Python kernels: the decorators return the functions themselves
_BUILDING = threading.Lock()


def kernels_loaded() -> bool:
    """Whether a kernel has been used in this process (numba is then imported and initialised):
    from then on the compiled path of a small input costs no more than a Python one."""
    return "textcw._jit_numba" in sys.modules


def _numba_side():
    """:mod:`textcw._jit_numba`, imported (with numba) on the first use of a kernel."""
    return importlib.import_module("textcw._jit_numba")


class Kernel:
    """A textcw kernel: ``py_func``, compiled by numba on first use (module docstring).

    Calling it calls the compiled function; numba's attributes (``signatures``, ``stats``,
    ``overloads`` ...) are the compiled function's. ``dispatcher`` is that numba function, built
    when first asked for; ``loaded`` says whether it has been.
    """

    def __init__(self, fn, *, cache: bool):
        functools.update_wrapper(self, fn)
        self.py_func = fn
        self._cache = cache
        self._dispatcher = None

    @property
    def dispatcher(self):
        if self._dispatcher is None:
            with _BUILDING:  # threads starting on the same kernel share one numba function
                if self._dispatcher is None:
                    self._dispatcher = _numba_side().jit(self.py_func, cache=self._cache)
        return self._dispatcher

    @property
    def loaded(self) -> bool:
        return self._dispatcher is not None

    def __call__(self, *args, **kwargs):
        return (self._dispatcher or self.dispatcher)(*args, **kwargs)

    def __getattr__(self, name: str):
        # only for names the instance does not have: numba's public attributes of the compiled
        # function; a private name (what inspect and copy probe for) does not compile anything
        if name.startswith("_") or name == "py_func":
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __reduce__(self):
        # by reference where its name reaches it, as a function pickles; a kernel built inside a
        # function pickles as its numba function does (numba serialises the code)
        try:
            if _kernel_named(self.__module__, self.__qualname__) is self:
                return _kernel_named, (self.__module__, self.__qualname__)
        except (ImportError, AttributeError):
            pass
        return _rebuilt, (self.dispatcher, self._cache)

    def __repr__(self) -> str:
        return f"<textcw kernel {self.__module__}.{self.__qualname__}>"


def _rebuilt(dispatcher, cache: bool) -> Kernel:
    built = Kernel(dispatcher.py_func, cache=cache)
    built._dispatcher = dispatcher
    return built


def _kernel_named(module: str, qualname: str):
    found = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def kernel(fn):
    """Compile ``fn`` as a textcw kernel (no Python objects, cached, GIL released), on first use."""
    return fn if DISABLED else Kernel(fn, cache=True)


def closure_kernel(fn):
    """:func:`kernel`'s policy for a function built inside a factory, which numba cannot cache
    on disk: it is compiled on first call in each process."""
    return fn if DISABLED else Kernel(fn, cache=False)


def uncached(dispatcher):
    """A twin of the kernel ``dispatcher`` that is never cached: for loops called with a
    :class:`KernelRef` that is not ``cacheable``."""
    return closure_kernel(getattr(dispatcher, "py_func", dispatcher))


def dispatchers_in(values: Iterable) -> Iterator:
    """The numba functions among ``values`` (a module's attributes): those of the kernels that
    have been loaded, and numba functions made elsewhere."""
    numba = sys.modules.get("numba")
    if numba is None:
        return
    from numba.core.dispatcher import Dispatcher

    for value in values:
        if isinstance(value, Kernel):
            if value.loaded and isinstance(value.dispatcher, Dispatcher):
                yield value.dispatcher
        elif isinstance(value, Dispatcher):
            yield value


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


class _Intrinsic:
    """A function of :mod:`textcw._jit_numba` that kernels call (an LLVM intrinsic there), named
    here without importing numba: numba types it as that function."""

    def __init__(self, name: str, doc: str):
        self.name = name
        self.__doc__ = doc

    @property
    def target(self):
        return getattr(_numba_side(), self.name)

    def __call__(self, *args):
        return self.target(*args)

    def __repr__(self) -> str:
        return f"<textcw kernel intrinsic {self.name}>"


def call_in_python(ref, *args):
    """``ref``'s function called with ``args`` (:class:`KernelRef`): :data:`call` without the JIT."""
    return ref.function(*args)


def prefetch_in_python(arr, i, k):
    """:data:`prefetch` without the JIT: a no-op (the hint only matters to compiled code)."""


if DISABLED:
    call, prefetch = call_in_python, prefetch_in_python
else:
    call = _Intrinsic("call", "``ref``'s function called with ``args``: in compiled code, a direct "
                              "call of that function's compilation for these arguments (:class:`KernelRef`).")
    prefetch = _Intrinsic("prefetch", "Hint the CPU to bring the cache line of ``arr[i, k]`` in (of "
                                      "``arr[i]`` if ``arr`` is 1-d: ``k`` is then ignored).")


def __getattr__(name: str):
    # numba's cache index pickles the type of a KernelRef argument by its module and name: an
    # index written when the type lived here still finds it
    if name == "KernelRefType":
        return _numba_side().KernelRefType
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
