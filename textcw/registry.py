"""Name -> factory tables, filled by the plugins' registration hooks.

Each registry kind (learners, featurizers, corpora, evaluators) maps the names users type to an
:class:`Entry`. Registering a name twice is an error that names both providers, so two plugins
can never silently shadow each other.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from textcw.errors import DuplicateNameError, PluginError, UnknownNameError

KINDS = ("learners", "featurizers", "corpora", "evaluators")


@dataclass(frozen=True)
class Entry:
    """One registered name.

    Attributes
    ----------
    name : str
        What users type (``cw-stdev``, ``binary-bow``, ``newsgroups``).
    target : callable or str
        What was registered: the factory, or a ``"package.module:attribute"`` reference to it,
        imported the first time :attr:`factory` is read (so that listing names, or starting a
        command that does not use them, imports nothing heavy).
    summary : str
        One line for ``textcw list``.
    provider : str
        The plugin that registered it (its distribution or module name).
    extra : dict
        Kind-specific details (a corpus lists its tasks here).
    """

    name: str
    target: Callable[..., Any] | str
    summary: str
    provider: str
    extra: dict = field(default_factory=dict)

    @property
    def factory(self) -> Callable[..., Any]:
        """Called with keyword parameters to build the object (a reference is imported now)."""
        if isinstance(self.target, str):
            object.__setattr__(self, "target", resolve_reference(self.target, self.provider, self.name))
        return self.target


def is_reference(value) -> bool:
    """``"package.module:attribute"``: a factory named rather than imported."""
    if not isinstance(value, str):
        return False
    module, sep, attribute = value.partition(":")
    return bool(sep) and all(part.isidentifier() for part in module.split(".")) and \
        all(part.isidentifier() for part in attribute.split("."))


def resolve_reference(reference: str, provider: str, name: str) -> Callable[..., Any]:
    """The object ``"package.module:attribute"`` names; a clear error naming the plugin if the
    module cannot be imported or holds no such callable."""
    module_name, _, attribute = reference.partition(":")
    try:
        value = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except Exception as exc:  # an import of plugin code: any error is the plugin's
        raise PluginError(f"{provider} registered {name!r} as {reference!r}, which cannot be loaded "
                          f"({type(exc).__name__}: {exc}); reinstall or update {provider}, or run "
                          "with TEXTCW_NO_PLUGINS=1") from None
    if not callable(value):
        raise PluginError(f"{provider} registered {name!r} as {reference!r}, which is not callable")
    return value


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

        def register(name: str, factory: Callable[..., Any] | str, summary: str = "", **extra: Any) -> None:
            if not callable(factory) and not is_reference(factory):
                raise TypeError(f"{provider}: factory for {registry.singular} {name!r} is not callable "
                                "(nor a 'package.module:attribute' reference)")
            registry.add(Entry(name, factory, summary.strip().splitlines()[0] if summary else "",
                               provider, dict(extra)))

        return register
