"""Modules imported on first use rather than when a dependency imports them.

scikit-learn's ``sklearn.utils.fixes`` runs ``import scipy.stats`` when ``sklearn.base`` is
imported, but reads it only inside functions that a fitted textcw pipeline never calls to
predict (``scipy.stats.mode`` ...). In SciPy 1.17 that import costs about a third of a second
of CPU, most of it re-parsing some 470 docstrings at import time, which is a large part of a
one-line ``textcw predict``. :func:`defer` puts a stand-in module under that name in
``sys.modules``: the import statement finds it and succeeds at once, and the first attribute read
from it (``scipy.stats.mode``, ``from scipy.stats import rankdata``) imports the real module,
which then replaces the stand-in, so any code that does use ``scipy.stats`` (textcw's McNemar and
mean-rank evaluators, scikit-learn's fitting code) gets the real module, unchanged. (The standard
library's ``importlib.util.LazyLoader`` cannot serve here: before Python 3.12 the import
statement itself reads the module's ``__spec__``, which makes a lazy module load at once.)

Only the ``textcw`` command calls it, first thing: a library should not change how its
dependencies load in a user's own program.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

__all__ = ["DEFERRED", "defer"]

DEFERRED = ("scipy.stats",)


class _StandIn(types.ModuleType):
    """Imports the real module the first time an attribute it does not have is read."""

    def __getattr__(self, attr: str):
        if attr.startswith("__") and attr.endswith("__") and attr != "__path__":
            raise AttributeError(attr)  # import machinery and introspection: not a reason to load
        # __path__ too: importing a submodule asks for it, and a package's submodules must be
        # imported by its own __init__, in its order
        if sys.modules.get(self.__name__) is self:
            del sys.modules[self.__name__]
        real = importlib.import_module(self.__name__)
        self.__dict__.update(real.__dict__)  # later reads through this object are direct
        return getattr(real, attr)


def defer(names: tuple[str, ...] = DEFERRED) -> None:
    """Put a stand-in for each module of ``names`` that is not imported yet (see the module
    docstring); one that cannot be found is left alone."""
    for name in names:
        if name in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        stand_in = _StandIn(name)
        stand_in.__spec__, stand_in.__file__, stand_in.__loader__ = spec, spec.origin, spec.loader
        stand_in.__package__ = name if spec.submodule_search_locations is not None else name.rpartition(".")[0]
        sys.modules[name] = stand_in
