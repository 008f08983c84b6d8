"""Building the plugin manager and the registries it fills, and the registries in use.

Nothing happens at import: :func:`get_plugin_manager` builds a fresh manager (tests build
isolated ones), and :func:`default_registries` builds the process-wide registries on first use.

The registries in use
---------------------
Every function that turns a name into a component reads :func:`current_registries`: the
process-wide registries, unless a :func:`use_registries` block (in the style of scikit-learn's
``config_context``, a :mod:`contextvars` variable, so threads and asyncio tasks each see their
own) says otherwise::

    with use_registries(make_registries(MyPlugin())):
        textcw.pipeline.train("toy", "my-learner")   # and everything it calls

The public entry points (:func:`textcw.make_learner`, :func:`textcw.pipeline.train`,
:func:`textcw.scale.train_sharded`, the evaluators...) still accept ``registries=`` as an
optional override for that one call (the same as a :func:`use_registries` block around it);
nothing passes registries from function to function any more.

Broken installed plugins
------------------------
An installed (entry-point) plugin is someone else's code, and one broken plugin must not take
every command down with it, ``textcw plugins`` and ``--help`` included. A plugin is *broken* when

- importing it raises anything but ``KeyboardInterrupt`` (``SystemExit`` included: a plugin
  that calls ``sys.exit`` at import does not end textcw), or pluggy refuses it (a hook function
  whose arguments do not match the hook);
- it implements a hook textcw does not have, usually a misspelling (``register_learner``): the
  rule of pluggy's ``check_pending``, applied plugin by plugin so that every such plugin is
  reported, not only the first (:func:`check_hooks`; a built-in or ``extra`` plugin breaking
  it is an :class:`UnknownHookError`);
- one of its hooks raises (:func:`build_registries`, :func:`register_commands`), or it registers
  a name another plugin already registered: a component name, or a command name (``textcw
  train`` cannot be replaced by a plugin; the report names both plugins);
- it registers a name (a component, a corpus task) that holds a control character or a line
  break, which would garble the terminal wherever the name is printed.

Plugins cannot impersonate
--------------------------
What an installed plugin says about itself is printed as text, never as terminal input:
summaries, task summaries, distribution names, versions and failure reasons are escaped
(:func:`textcw.untrusted.safe_text`: an escape sequence shows as ``\x1b``) and names with
control characters are refused. A plugin whose import takes more than
:data:`SLOW_IMPORT_SECONDS` is named on stderr while it runs (``still importing plugin X ...``,
from a timer thread), so a plugin that hangs at import names itself.

A broken plugin is unregistered, so none of its hooks runs again and nothing it registered is
kept; everything else works. Each one is reported once, as one ``WARNING`` line on the logger
``"textcw"`` (shown on stderr when the application has not configured logging) that names the
plugin, its distribution and the reason, and says that ``TEXTCW_NO_PLUGINS=1`` runs textcw
without installed plugins. :func:`broken_plugins` lists them and ``textcw plugins`` shows them.

The built-in plugins and those passed as ``extra`` (plugins under test) are not guarded: their
errors propagate, since hiding them would hide a bug in textcw or in the plugin being tested.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import importlib
import importlib.metadata
import dataclasses
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pluggy

from textcw import hookspecs
from textcw.errors import PluginError
from textcw.registry import KINDS, Registries
from textcw.untrusted import check_printable, safe_text

# The built-in catalogue, registered through the same hooks a third-party plugin uses.
BUILTIN_PLUGINS = (
    "textcw.default_plugins.learners",
    "textcw.default_plugins.featurizers",
    "textcw.default_plugins.corpora",
    "textcw.default_plugins.baselines",
    "textcw.default_plugins.scale",
    "textcw.default_plugins.evaluation",
    "textcw.default_plugins.commands",
)
BUILTIN_PROVIDER = "textcw"
NO_PLUGINS_VAR = "TEXTCW_NO_PLUGINS"
_MAX_REASON = 300  # characters of an exception message kept in the one-line report
#: An installed plugin whose import takes longer than this many seconds is named on stderr.
SLOW_IMPORT_SECONDS = 3.0

logger = logging.getLogger("textcw")


@dataclass(frozen=True)
class BrokenPlugin:
    """An installed plugin that was skipped.

    Attributes
    ----------
    name : str
        Its entry-point name.
    distribution, version : str
        The distribution that installed it ("" when unknown).
    reason : str
        What went wrong, on one line.
    """

    name: str
    distribution: str
    version: str
    reason: str


class PluginManager(pluggy.PluginManager):
    """pluggy's plugin manager, plus the installed plugins found broken (:attr:`broken`)."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self.broken: list[BrokenPlugin] = []


def get_plugin_manager(*, entry_points: bool = True, extra: Iterable[object] = ()) -> PluginManager:
    """Build a plugin manager with the built-ins, the installed plugins and ``extra``.

    Parameters
    ----------
    entry_points : bool
        Load third-party plugins declared in the entry-point group ``textcw``; a broken one is
        reported and skipped (see the module docstring).
    extra : iterable
        More plugin objects (modules or instances), e.g. a plugin under test.
    """
    pm = PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in BUILTIN_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    if entry_points:
        _load_entry_points(pm)
    for plugin in extra:
        pm.register(plugin)
    check_hooks(pm)
    return pm


def _load_entry_points(pm: PluginManager) -> None:
    """Load each plugin of the entry-point group on its own, so that one failure skips one plugin."""
    seen: set[str] = set()
    for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT):
        if ep.name in seen:  # pluggy loads the first of several plugins with one name
            continue
        seen.add(ep.name)
        registered_before = pm.has_plugin(ep.name)
        watch = _slow_import_notice(ep.name, _dist_name(ep.dist))
        try:
            # pluggy's own loader, one name at a time: it records the distribution of each plugin
            pm.load_setuptools_entrypoints(hookspecs.PROJECT, name=ep.name)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: a plugin must not end textcw
            if not registered_before and pm.has_plugin(ep.name):
                pm.unregister(name=ep.name)
            dist = ep.dist
            _report(pm, BrokenPlugin(ep.name, _dist_name(dist), getattr(dist, "version", "") or "",
                                     f"loading {ep.value} {_describe(exc)}"))
        finally:
            watch.cancel()


def _slow_import_notice(name: str, distribution: str) -> threading.Timer:
    """A started timer that says on stderr, after :data:`SLOW_IMPORT_SECONDS`, which plugin is
    still being imported (cancel it when the import ends): a hang then names its cause."""
    source = f" (from {safe_text(distribution, 80)})" if distribution else ""

    def say() -> None:
        try:
            sys.stderr.write(f"still importing plugin {safe_text(name, 80)}{source}... (set {NO_PLUGINS_VAR}=1 "
                             "to run textcw without installed plugins)\n")
            sys.stderr.flush()
        except (OSError, ValueError):  # stderr closed: nothing to tell
            pass

    timer = threading.Timer(SLOW_IMPORT_SECONDS, say)
    timer.daemon = True  # never keeps textcw alive
    timer.start()
    return timer


class UnknownHookError(PluginError, pluggy.PluginValidationError):
    """A built-in or in-process plugin implements a hook textcw does not have (pluggy's
    ``check_pending`` rule); an installed plugin doing so is skipped instead."""

    def __init__(self, plugin: object, message: str) -> None:
        pluggy.PluginValidationError.__init__(self, plugin, message)


def check_hooks(pm: PluginManager) -> None:
    """Apply pluggy's ``check_pending`` rule (every hook implementation has a spec, unless
    marked ``optionalhook``) to every plugin.

    An installed plugin that breaks it is skipped and reported like any broken plugin, each one
    (not only the first); a built-in or ``extra`` plugin that does is an
    :class:`UnknownHookError`. :meth:`pluggy.PluginManager.check_pending` then has nothing left
    to refuse.
    """
    installed = _installed(pm)
    known = sorted(n for n, c in vars(pm.hook).items() if not n.startswith("_") and c.has_spec())
    for name, caller in list(vars(pm.hook).items()):
        if name.startswith("_") or caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if impl.optionalhook or not pm.is_registered(impl.plugin):
                continue
            reason = (f"it implements {name!r}, which is not a textcw hook (misspelled?); "
                      f"textcw's hooks are: {', '.join(known)}")
            if id(impl.plugin) not in installed:
                raise UnknownHookError(impl.plugin, f"plugin {provider_name(pm, impl.plugin)}: {reason}")
            _skip(pm, impl.plugin, reason)
    pm.check_pending()


def _installed(pm: pluggy.PluginManager) -> dict[int, Any]:
    """``id(plugin) -> distribution`` of the plugins loaded from entry points."""
    return {id(p): d for p, d in pm.list_plugin_distinfo()}


def _dist_name(dist) -> str:
    if dist is None:
        return ""
    metadata = getattr(dist, "metadata", None)
    name = metadata["Name"] if metadata is not None else None
    return safe_text(name or getattr(dist, "project_name", "") or "", 100)


def _describe(exc: BaseException) -> str:
    """What an exception says, on one bounded line, as a verb phrase ("raised ValueError: ...")."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    text = safe_text(" ".join(str(exc).split()), _MAX_REASON)
    return f"raised {safe_text(type(exc).__name__, 80)}: {text}" if text else f"raised {safe_text(type(exc).__name__, 80)}"


def _skip(pm: pluggy.PluginManager, plugin: object, reason: str) -> None:
    """Unregister the installed ``plugin`` and report it."""
    dist = _installed(pm).get(id(plugin))
    name = pm.get_name(plugin) or provider_name(pm, plugin)
    if pm.is_registered(plugin):
        pm.unregister(plugin)
    _report(pm, BrokenPlugin(name, getattr(dist, "project_name", "") or "",
                             getattr(dist, "version", "") or "", reason))


def _report(pm: pluggy.PluginManager, broken: BrokenPlugin) -> None:
    # what a plugin says about itself is shown as text, never as terminal input
    broken = BrokenPlugin(*(safe_text(v, 600) for v in (broken.name, broken.distribution, broken.version,
                                                        broken.reason)))
    if isinstance(pm, PluginManager):
        pm.broken.append(broken)
    dist = " ".join(part for part in (broken.distribution, broken.version) if part)
    source = f" ({dist})" if dist else ""
    logger.warning("skipping the broken textcw plugin %r%s: %s; set %s=1 to run textcw without "
                   "installed plugins", broken.name, source, broken.reason, NO_PLUGINS_VAR)


def broken_plugins(pm: pluggy.PluginManager) -> list[BrokenPlugin]:
    """The installed plugins skipped so far because they are broken (see the module docstring).

    Import failures are known once the manager is built; a failing hook only once the hook has
    run (:func:`build_registries`, :func:`register_commands`)."""
    return list(getattr(pm, "broken", ()))


def _call(pm: pluggy.PluginManager, impl, installed: dict[int, Any], hook: str, **kwargs: Any) -> bool:
    """Call one hook implementation as pluggy would; an installed plugin's failure skips the
    plugin (False), any other plugin's failure propagates."""
    args = [kwargs[name] for name in impl.argnames]
    if id(impl.plugin) not in installed:
        impl.function(*args)
        return True
    try:
        impl.function(*args)
        return True
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit too
        _skip(pm, impl.plugin, f"its hook {hook} {_describe(exc)}")
        return False


def register_commands(pm: pluggy.PluginManager, app) -> None:
    """Let every plugin add its commands to the typer ``app`` (the ``register_commands`` hook).

    Use this instead of ``pm.hook.register_commands(app=app)``: an installed plugin whose hook
    raises is skipped with a report, and the commands it added before failing are removed. A
    command name that another plugin (textcw's built-ins first) already added is an error naming
    both: an installed plugin is skipped with its commands, a built-in or in-process plugin
    raises :class:`~textcw.errors.PluginError`. So no plugin can replace ``textcw train``.
    """
    installed = _installed(pm)
    owners: dict[str, str] = {name: "textcw" for name in command_names(app, 0, 0)}
    # pluggy calls the last registered implementation first; keep that order for the help text
    for impl in reversed(pm.hook.register_commands.get_hookimpls()):
        if impl.wrapper or impl.hookwrapper or not pm.is_registered(impl.plugin):
            continue
        counts = {attr: len(getattr(app, attr, ())) for attr in ("registered_commands", "registered_groups")}
        if not _call(pm, impl, installed, "register_commands", app=app):
            for attr, count in counts.items():
                del getattr(app, attr)[count:]
            continue
        provider = provider_name(pm, impl.plugin)
        added = command_names(app, counts["registered_commands"], counts["registered_groups"], unique=False)
        clash = _command_clash(added, owners, provider)
        if clash is None:
            owners.update(dict.fromkeys(added, provider))
            continue
        for attr, count in counts.items():
            del getattr(app, attr)[count:]
        if id(impl.plugin) not in installed:
            raise PluginError(f"plugin {provider}: {clash}")
        _skip(pm, impl.plugin, clash)


def _command_clash(added: list[str], owners: dict[str, str], provider: str) -> str | None:
    """Why the commands ``added`` by ``provider`` cannot be kept, or None."""
    seen: set[str] = set()
    for name in added:
        shown = safe_text(name, 60)
        if name in owners:
            return (f"its command {shown!r} clashes with the command {shown!r} of {owners[name]}; "
                    f"a command name belongs to one plugin: uninstall {provider} or {owners[name]}")
        if name in seen:
            return f"it adds the command {shown!r} twice"
        seen.add(name)
        bad = next((c for c in name if not c.isprintable() or c.isspace()), None)
        if bad is not None or not name:
            return f"its command name {shown!r} is empty or holds a space or a control character"
    return None


def command_names(app, first_command: int = 0, first_group: int = 0, *, unique: bool = True) -> list[str]:
    """The names of ``app``'s commands and command groups from the given positions on, as typer
    derives them (an unnamed command is named after its function, ``_`` made ``-``)."""
    names = []
    for info in list(getattr(app, "registered_commands", ()))[first_command:]:
        callback = getattr(info, "callback", None)
        names.append(info.name or getattr(callback, "__name__", "").lower().replace("_", "-"))
    for info in list(getattr(app, "registered_groups", ()))[first_group:]:
        name = info.name or getattr(getattr(info.typer_instance, "info", None), "name", None)
        if isinstance(name, str):
            names.append(name)
    return list(dict.fromkeys(names)) if unique else names


def provider_name(pm: pluggy.PluginManager, plugin: object) -> str:
    """The distribution that installed ``plugin`` ("textcw" for built-ins)."""
    for p, dist in pm.list_plugin_distinfo():
        if p is plugin:
            return safe_text(dist.project_name, 100)
    if pm.get_name(plugin) in BUILTIN_PLUGINS:
        return BUILTIN_PROVIDER
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    return getattr(plugin, "__name__", None) or type(plugin).__name__


def build_registries(pm: pluggy.PluginManager) -> Registries:
    """Call every registration hook of every plugin, recording which plugin provided each name.

    Plugins are called in registration order (built-ins, installed plugins, extras). An
    installed plugin registers into a scratch table first and its names are added only if all
    its hooks succeed and none of its names is taken, so a broken plugin leaves nothing behind.
    """
    registries = Registries()
    installed = _installed(pm)
    for _, plugin in list(pm.list_name_plugin()):
        if plugin is None or not pm.is_registered(plugin):  # a blocked name, or skipped meanwhile
            continue
        provider = provider_name(pm, plugin)
        target = Registries() if id(plugin) in installed else registries
        for kind in KINDS:
            hook = f"register_{kind}"
            for impl in getattr(pm.hook, hook).get_hookimpls():
                if impl.plugin is plugin and not (impl.wrapper or impl.hookwrapper):
                    if not _call(pm, impl, installed, hook, register=target.register_callable(kind, provider)):
                        break
            if not pm.is_registered(plugin):
                break
        if target is not registries and pm.is_registered(plugin):
            _merge(pm, plugin, registries, target)
    return registries


def _merge(pm: pluggy.PluginManager, plugin: object, registries: Registries, staged: Registries) -> None:
    """Add an installed plugin's names, all or none: a name already taken, or one that holds a
    control character, skips the plugin; summaries are kept escaped (module docstring)."""
    from textcw.errors import DuplicateNameError

    try:
        for kind in KINDS:
            for entry in staged[kind]:
                check_printable([entry.name, *_task_names(entry)],
                                f"the {staged[kind].singular} name {safe_text(entry.name, 60)!r}", error=PluginError)
                if entry.name in registries[kind]:
                    registries[kind].add(entry)  # raises, naming both providers
    except (DuplicateNameError, PluginError) as exc:
        _skip(pm, plugin, str(exc))
        return
    for kind in KINDS:
        for entry in staged[kind]:
            registries[kind].add(_escaped(entry))


def _task_names(entry) -> list[str]:
    return [str(t) for field in ("tasks", "task_patterns") for t in (getattr(entry, field, None) or {})]


def _escaped(entry):
    """``entry`` with its summaries as printable text (escape sequences shown, not sent)."""
    changes: dict[str, Any] = {"summary": safe_text(entry.summary, 300)}
    for field in ("tasks", "task_patterns"):
        table = getattr(entry, field, None)
        if isinstance(table, dict):
            changes[field] = {task: safe_text(summary, 300) for task, summary in table.items()}
    return dataclasses.replace(entry, **changes)


def installed_plugins(pm: pluggy.PluginManager) -> list[dict[str, str]]:
    """Each plugin module with the distribution and version that provided it.

    A broken installed plugin (:func:`broken_plugins`) is listed too, with the key ``"broken"``
    holding the reason it was skipped.
    """
    from textcw._version import __version__

    dists = _installed(pm)
    rows = []
    for name, plugin in pm.list_name_plugin():
        if plugin is None:
            continue
        dist = dists.get(id(plugin))
        if dist is not None:
            rows.append({"name": safe_text(name, 100), "distribution": safe_text(dist.project_name, 100),
                         "version": safe_text(dist.version, 100)})
        elif name in BUILTIN_PLUGINS:
            rows.append({"name": name, "distribution": BUILTIN_PROVIDER, "version": __version__})
        else:
            rows.append({"name": provider_name(pm, plugin), "distribution": "(registered in process)",
                         "version": ""})
    for broken in broken_plugins(pm):
        rows.append({"name": broken.name, "distribution": broken.distribution, "version": broken.version,
                     "broken": broken.reason})
    return rows


@functools.cache
def default_plugin_manager() -> PluginManager:
    """The process-wide manager (built-ins plus installed plugins), built on first use.

    ``TEXTCW_NO_PLUGINS=1`` leaves the installed plugins out (their code is not even imported):
    a way to run textcw with its built-in components only (``docs/security.md``).
    """
    return get_plugin_manager(entry_points=os.environ.get(NO_PLUGINS_VAR, "") != "1")


@functools.cache
def default_registries() -> Registries:
    """The process-wide registries, built on first use."""
    return build_registries(default_plugin_manager())


_IN_USE: contextvars.ContextVar[Registries | None] = contextvars.ContextVar("textcw_registries", default=None)


def current_registries() -> Registries:
    """The registries in use: those of the innermost :func:`use_registries` block, else
    :func:`default_registries`."""
    registries = _IN_USE.get()
    return registries if registries is not None else default_registries()


@contextlib.contextmanager
def use_registries(registries: Registries | None) -> Iterator[None]:
    """Within the block, :func:`current_registries` is ``registries`` (``None`` changes nothing,
    so that ``with use_registries(registries):`` serves an optional override)."""
    if registries is None:
        yield
        return
    if not isinstance(registries, Registries):
        raise TypeError(f"use_registries takes a textcw.registry.Registries, not {type(registries).__name__}")
    token = _IN_USE.set(registries)
    try:
        yield
    finally:
        _IN_USE.reset(token)


def in_registries(registries: Registries | None, function: Callable) -> Callable:
    """``function``, run within :func:`use_registries` ``(registries)`` when called: how an
    evaluator factory given ``registries=`` keeps them for the runner it returns."""
    if registries is None:
        return function

    @functools.wraps(function)
    def run(*args, **kwargs):
        with use_registries(registries):
            return function(*args, **kwargs)

    return run


def resolve_corpus(spec: str):
    """``(entry, task)`` for ``"corpus[:task]"`` in the registries in use, the task checked
    against the corpus's ``tasks`` and ``task_check`` (:class:`textcw.registry.CorpusEntry`);
    ``task`` is ``None`` for the corpus's default task."""
    from textcw.corpus.base import check_task, split_task_name

    corpus, task = split_task_name(spec)
    entry = current_registries().corpora.get(corpus)
    check_task(corpus, task, entry.tasks, entry.task_check)
    return entry, task
