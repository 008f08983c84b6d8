"""Name -> factory tables, filled by the plugins' registration hooks.

Each registry kind (learners, featurizers, corpora, evaluators) maps the names users type to an
:class:`Entry`. Registering a name twice is an error that names both providers, so two plugins
can never silently shadow each other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from textcw.errors import DuplicateNameError, UnknownNameError

KINDS = ("learners", "featurizers", "corpora", "evaluators")


@dataclass(frozen=True)
class Entry:
    """One registered name.

    Attributes
    ----------
    name : str
        What users type (``cw-stdev``, ``binary-bow``, ``newsgroups``).
    factory : callable
        Called with keyword parameters to build the object.
    summary : str
        One line for ``textcw list``.
    provider : str
        The plugin that registered it (its distribution or module name).
    extra : dict
        Kind-specific details (a corpus lists its tasks here).
    """

    name: str
    factory: Callable[..., Any]
    summary: str
    provider: str
    extra: dict = field(default_factory=dict)


class Registry:
    """A name -> :class:`Entry` table for one kind of component."""

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, Entry] = {}

    @property
    def singular(self) -> str:
        return {"corpora": "corpus"}.get(self.kind, self.kind.rstrip("s"))

    def add(self, entry: Entry) -> None:
        if not isinstance(entry.name, str) or not entry.name.strip():
            raise DuplicateNameError(
                f"{entry.provider} registered a {self.singular} with an empty or non-string name"
            )
        old = self._entries.get(entry.name)
        if old is not None:
            raise DuplicateNameError(
                f"{self.singular} {entry.name!r} is registered twice: by {old.provider} and by "
                f"{entry.provider}; uninstall one of them or rename the entry"
            )
        self._entries[entry.name] = entry

    def get(self, name: str) -> Entry:
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.singular, name, self._entries) from None

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries[n] for n in self.names())

    def __len__(self) -> int:
        return len(self._entries)


class Registries:
    """The four registries of one plugin manager."""

    def __init__(self) -> None:
        self.learners = Registry("learners")
        self.featurizers = Registry("featurizers")
        self.corpora = Registry("corpora")
        self.evaluators = Registry("evaluators")

    def __getitem__(self, kind: str) -> Registry:
        if kind not in KINDS:
            raise UnknownNameError("registry kind", kind, KINDS)
        return getattr(self, kind)

    def register_callable(self, kind: str, provider: str) -> Callable[..., None]:
        """The ``register`` function handed to one plugin's hook."""
        registry = self[kind]

        def register(name: str, factory: Callable[..., Any], summary: str = "", **extra: Any) -> None:
            if not callable(factory):
                raise TypeError(f"{provider}: factory for {registry.singular} {name!r} is not callable")
            registry.add(Entry(name, factory, summary.strip().splitlines()[0] if summary else "",
                               provider, dict(extra)))

        return register
