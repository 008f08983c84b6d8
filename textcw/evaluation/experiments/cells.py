"""One computation per result cell, shared by every reproduction that asks for it.

JMLR 2012 Tables 2-5 run one protocol (section 7.6: a single randomised tuning run, then
cross-validation with the chosen settings) over the same tasks and partly the same learners:
Table 3's four diagonal CW columns are Table 2's KL and L2 columns and Table 4's CW columns, and
Table 5 tunes the learners of Tables 2-4 again before timing them. :data:`CELLS` keeps, for the
life of the process, each tuning result and each cross-validated cell the reproductions compute,
and hands a copy to every later table that asks for the same one, so that ``textcw reproduce``
run for several tables in one process (and the quick runs the tests check) computes each once.

A result is only reused for exactly the same computation. Its key is the full description of
what was computed, never a label: the task (its spec: corpus, protocol, sample, featurizer and
its parameters, label; the seed it was loaded and split with; its labels in pool order), the
learner spec (registered name, fixed parameters, label), the tuning grid or the chosen
parameters and passes, the folds, the noise rates, what the cell records (curves,
probabilities), plus the registries in use (a plugin registering another learner under the same
name is another computation) and the data home the corpora are read from. Values are keyed with
their types (``1``, ``1.0`` and ``True`` are three keys), so two different cells never share an
entry. Entries are stored and returned as deep copies: a caller that edits its result cannot
change what the next table gets.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

__all__ = ["CELLS", "CellCache", "canonical"]


def canonical(value: Any) -> Any:
    """A hashable, type-tagged form of ``value``: equal only for values that describe the same
    computation (mappings by their items in any order, dataclasses by class and fields, numbers
    with their type, arrays by dtype, shape and bytes)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        return ("dataclass", f"{cls.__module__}.{cls.__qualname__}",
                tuple((f.name, canonical(getattr(value, f.name))) for f in dataclasses.fields(value)))
    if isinstance(value, Mapping):
        items = [(canonical(k), canonical(v)) for k, v in value.items()]
        return ("mapping", tuple(sorted(items, key=repr)))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(canonical(v) for v in value))
    if isinstance(value, np.ndarray):
        return ("ndarray", str(value.dtype), value.shape, value.tobytes())
    if isinstance(value, np.generic):
        return (type(value).__name__, canonical(value.item()))
    if isinstance(value, float):
        return ("float", value.hex())  # exact: 0.1 and 0.1000000000000001 are two keys
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return (type(value).__name__, value)
    # Anything else (a class or a function given as a parameter): its type, repr and identity,
    # so that it only ever matches itself.
    return (f"{type(value).__module__}.{type(value).__qualname__}", repr(value), id(value))


class CellCache:
    """Results of the reproductions' computations, by the full description of each.

    ``key(kind, **parts)`` builds the key (adding the registries in use and the data home);
    ``get(key)`` returns a copy of the stored result or None, counting ``hits`` and ``misses``;
    ``put(key, value)`` stores a copy. The registries are keyed by identity, and held so that
    their token is never reused by another registries object.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple, Any] = {}
        self._held: list[Any] = []
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def _token(self, obj: Any) -> int:
        for number, held in enumerate(self._held):
            if held is obj:
                return number
        self._held.append(obj)
        return len(self._held) - 1

    def key(self, kind: str, **parts: Any) -> tuple:
        """The key of one ``kind`` of result (``"tuning"``, ``"cells"``) described by ``parts``."""
        from textcw.corpus.remote import data_home
        from textcw.plugins import current_registries

        with self._lock:
            registries = self._token(current_registries())
        return (kind, registries, str(data_home().resolve()),
                tuple((name, canonical(value)) for name, value in sorted(parts.items())))

    def get(self, key: tuple) -> Any:
        with self._lock:
            if key not in self._entries:
                self.misses += 1
                return None
            self.hits += 1
            return copy.deepcopy(self._entries[key])

    def put(self, key: tuple, value: Any) -> None:
        with self._lock:
            self._entries[key] = copy.deepcopy(value)

    def clear(self) -> None:
        """Forget every result and reset the counts."""
        with self._lock:
            self._entries.clear()
            self._held.clear()
            self.hits = self.misses = 0


# The process-wide cache the reproductions share (table.py, jmlr_table5.py, arow_noise.py).
CELLS = CellCache()
