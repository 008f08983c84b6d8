"""Modules imported on first use rather than when a dependency imports them.

scikit-learn's ``sklearn.utils.fixes`` runs ``import scipy.stats`` when ``sklearn.base`` is
imported, but reads it only inside functions that a fitted textcw pipeline never calls to
predict (``scipy.stats.mode`` ...). In SciPy 1.17 that import costs about a third of a second
of CPU, most of it re-parsing some 470 docstrings at import time, which is a large part of a
one-line ``textcw predict``. :func:`defer` adds an import finder for it: when something first
imports ``scipy.stats``, it gets a stand-in module instead, so the import statement succeeds at
once; the first attribute read from it (``scipy.stats.mode``, ``from scipy.stats import
rankdata``, or a submodule's import) imports the real module, which then replaces the stand-in.
So any code that does use ``scipy.stats`` (textcw's McNemar and mean-rank evaluators,
scikit-learn's fitting code) gets the real module, unchanged, and a command that never imports
scikit-learn (``--help``) does not even import SciPy. (The standard library's
``importlib.util.LazyLoader`` cannot serve here: before Python 3.12 the import statement itself
reads the module's ``__spec__``, which makes a lazy module load at once.)

Only the ``textcw`` command calls it, first thing: a library should not change how its
dependencies load in a user's own program.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ["DEFERRED", "defer"]

DEFERRED = ("scipy.stats",)
_pending: set[str] = set()  # deferred names not imported yet


class _StandIn(types.ModuleType):
    """Imports the real module the first time an attribute it does not have is read."""

    def __getattr__(self, attr: str):
        # dunders are asked by import machinery and introspection: no reason to load; __path__
        # is, since importing a submodule asks for it and the package's own __init__ must run first
        if attr.startswith("__") and attr.endswith("__") and (attr != "__path__" or not self.__dict__.get("_ready")):
            raise AttributeError(attr)  # (the import system asks for __path__ while it sets the module up)
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)  # later reads through this object are direct
        return getattr(real, attr)


class _StandInLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return _StandIn(spec.name)

    def exec_module(self, module) -> None:
        module.__dict__["_ready"] = True


class _Finder(importlib.abc.MetaPathFinder):
    """Answers the first import of a deferred name with a stand-in; later imports (the real one
    that the stand-in makes) go to the usual finders."""

    def find_spec(self, fullname, path, target=None):
        if fullname not in _pending:
            return None
        _pending.discard(fullname)
        return importlib.machinery.ModuleSpec(fullname, _StandInLoader())


def defer(names: tuple[str, ...] = DEFERRED) -> None:
    """Answer the first import of each module of ``names`` that is not imported yet with a
    stand-in (see the module docstring). Imports nothing itself."""
    _pending.update(name for name in names if name not in sys.modules)
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
