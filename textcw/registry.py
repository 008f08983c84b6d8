"""Name -> factory tables, filled by the plugins' registration hooks.

Each registry kind (learners, featurizers, corpora, evaluators, metrics, comparisons) maps the names users type to an
:class:`Entry`. Registering a name twice is an error that names both providers, so two plugins
can never silently shadow each other.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from textcw.errors import DuplicateNameError, PluginError, UnknownNameError

KINDS = ("learners", "featurizers", "corpora", "evaluators", "metrics", "comparisons")
DEFAULT_FEATURIZER = "tfidf"  # docs/guide/text-features.md says why


@dataclass(frozen=True)
class Entry:
    """One registered name (featurizers and evaluators declare nothing more).

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

    Notes
    -----
    The kinds that declare more subclass it with keyword-only fields (:class:`LearnerEntry`,
    :class:`CorpusEntry`): ``register(..., **fields)`` builds one, so a misspelled keyword is an
    error naming the plugin instead of a value nothing reads.
    """

    name: str
    target: Callable[..., Any] | str
    summary: str = ""
    provider: str = ""

    @property
    def factory(self) -> Callable[..., Any]:
        """Called with keyword parameters to build the object (a reference is imported now)."""
        if isinstance(self.target, str):
            object.__setattr__(self, "target", resolve_reference(self.target, self.provider, self.name))
        return self.target


def declared_fields(entry_type: type[Entry]) -> list[str]:
    """The keyword-only fields an entry type adds to :class:`Entry`, in declaration order."""
    base = {f.name for f in fields(Entry)}
    return [f.name for f in fields(entry_type) if f.name not in base]



@dataclass(frozen=True, kw_only=True)
class LearnerEntry(Entry):
    """A learner: the fields a ``register_learners`` hook may pass to ``register``.

    Attributes
    ----------
    online : bool
        The learner learns one document at a time: it has ``partial_fit`` and its ``fit``
        takes ``progress(done, total)`` (every subclass of
        :class:`textcw.learners.base.OnlineLinearClassifier` does, and must declare it:
        :func:`textcw.testing.check_plugin` checks). ``textcw train`` then shows a progress
        bar and, like :func:`textcw.make_pipeline`, calibrates its probabilities by default,
        and ``textcw evaluate --plot`` draws its cumulative mistakes.
    """

    online: bool = False


@dataclass(frozen=True, kw_only=True)
class CorpusEntry(Entry):
    """A corpus: the fields a ``register_corpora`` hook may pass to ``register``.

    Attributes
    ----------
    tasks : dict
        ``{task: one-line summary}``; users name a task as ``corpus:task``.
    featurizer : str
        The featurizer used when the user names none; corpora that ship feature vectors name
        ``precomputed``.
    task_check : callable, optional
        ``task_check(task) -> bool``, for corpora whose task names are patterns (``usps:AvB``,
        ``folder:PATH``): ``True`` accepts a name outside ``tasks``, ``False`` refuses it as
        unknown, and a textcw error it raises says what is wrong with it; any other return
        value is an error (:func:`textcw.corpus.base.check_task`).
    task_patterns : dict
        ``{pattern: summary}`` describing those names for ``textcw list corpora``.
    takes_path : bool
        The task is a file path, which may hold a comma (``svmlight:TRAIN,TEST``), so a comma
        after it in ``textcw evaluate --corpus`` does not start a new task.
    takes_download : bool
        The factory takes ``download=False`` (read the local files only, a textcw error when
        they are absent), so ``textcw list corpora`` may load each task to show its sizes.
    stream : callable, optional
        ``stream(task=, split=, *, start=0, stop=None, chunk_size=...)`` yields documents
        ``[start, stop)`` as consecutive ``Dataset`` chunks without loading the whole split.
    size : callable, optional
        ``size(task=, split=) -> int``: the number of documents, without reading them.
    """

    tasks: Mapping[str, str] = field(default_factory=dict)
    featurizer: str = DEFAULT_FEATURIZER
    task_check: Callable[[str], Any] | None = None
    task_patterns: Mapping[str, str] = field(default_factory=dict)
    takes_path: bool = False
    takes_download: bool = False
    stream: Callable[..., Any] | None = None
    size: Callable[..., int] | None = None


ENTRY_TYPES: dict[str, type[Entry]] = {
    "learners": LearnerEntry, "featurizers": Entry, "corpora": CorpusEntry, "evaluators": Entry,
    "metrics": Entry, "comparisons": Entry,  # their contract is declared on the class (textcw.evaluation.contract)
}


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
    """A name -> :class:`Entry` table for one kind of component.

    Its :attr:`loader`, when set, is called before a lookup that would miss and before the
    table is listed: the process-wide registries register a kind's built-ins when the kind is
    first used, and import an installed plugin only when one of its names is asked for
    (:mod:`textcw.plugins.lazy`), so that a command pays only for what it uses. :meth:`has`
    looks at what is registered now, without loading.
    """

    def __init__(self, kind: str):
        self.kind = kind
        self._entries: dict[str, Entry] = {}
        #: ``loader(kind, name)`` loads what may register ``name`` (``None``: every name of the kind).
        self.loader: Callable[[str, str | None], None] | None = None

    def _load(self, name: str | None) -> None:
        loader = self.loader  # once: another thread may unset it when everything is loaded
        if loader is not None:
            loader(self.kind, name)

    def __getstate__(self) -> dict:
        """A copy or pickle holds every name, and no loader (which holds the plugin manager)."""
        self._load(None)
        return {**self.__dict__, "loader": None}

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
        if name not in self._entries:
            self._load(name)
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.singular, name, self._entries) from None

    def has(self, name: object) -> bool:
        """Whether ``name`` is registered now (no plugin is loaded to find it)."""
        return name in self._entries

    def names(self) -> list[str]:
        self._load(None)
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        if name not in self._entries and isinstance(name, str):
            self._load(name)
        return name in self._entries

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries[n] for n in self.names())

    def __len__(self) -> int:
        self._load(None)
        return len(self._entries)


class Registries:
    """The registries of one plugin manager, one per kind of :data:`KINDS`."""

    def __init__(self) -> None:
        self.learners = Registry("learners")
        self.featurizers = Registry("featurizers")
        self.corpora = Registry("corpora")
        self.evaluators = Registry("evaluators")
        self.metrics = Registry("metrics")
        self.comparisons = Registry("comparisons")

    def __getitem__(self, kind: str) -> Registry:
        if kind not in KINDS:
            raise UnknownNameError("registry kind", kind, KINDS)
        return getattr(self, kind)

    def register_callable(self, kind: str, provider: str) -> Callable[..., None]:
        """The ``register`` function handed to one plugin's hook.

        ``register(name, factory, summary="", **fields)``: ``fields`` are the keyword-only
        fields of the kind's entry type (:data:`ENTRY_TYPES`); any other keyword is a
        :class:`~textcw.errors.PluginError` naming the plugin and the valid keywords.
        """
        registry = self[kind]
        entry_type = ENTRY_TYPES[kind]
        valid = declared_fields(entry_type)

        def register(name: str, factory: Callable[..., Any] | str, summary: str = "", **declared: Any) -> None:
            if not callable(factory) and not is_reference(factory):
                raise TypeError(f"{provider}: factory for {registry.singular} {name!r} is not callable "
                                "(nor a 'package.module:attribute' reference)")
            unknown = sorted(set(declared) - set(valid))
            if unknown:
                raise PluginError(
                    f"{provider} registered {registry.singular} {name!r} with unknown keyword(s) "
                    f"{', '.join(map(repr, unknown))}; a {registry.singular} takes "
                    f"{', '.join(valid) if valid else 'no keyword beyond name, factory and summary'}")
            registry.add(entry_type(name, factory, summary.strip().splitlines()[0] if summary else "",
                                    provider, **declared))

        return register
