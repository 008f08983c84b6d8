"""The plugin manager: loading plugins, checking their hooks, calling them, reporting the broken.

Why this is apart from the registries and the commands: every other part of
:mod:`textcw.plugins` calls hooks through :func:`call_hook` and reports through :func:`skip`, so
that an installed plugin's failure is handled one way wherever it happens (at start, or later,
when a plugin is imported on first use). The rules are in the docstring of :mod:`textcw.plugins`.
"""

from __future__ import annotations

import importlib
import logging
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pluggy

from textcw import hookspecs
from textcw.errors import PluginError
from textcw.untrusted import safe_text

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
#: An installed plugin whose import (or hook) takes longer than this many seconds is named on
#: stderr. Read here when the timer starts, so a test may change it in this module.
SLOW_IMPORT_SECONDS = 3.0
_MAX_REASON = 300  # characters of an exception message kept in the one-line report

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
    """pluggy's plugin manager, plus the installed plugins found broken (:attr:`broken`) and, for
    the process-wide manager, the installed plugins not imported yet (:attr:`lazy`, a
    :class:`textcw.plugins.lazy.LazyPlugins`, or None when every plugin is loaded)."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self.broken: list[BrokenPlugin] = []
        self.lazy: Any = None


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
        load_entry_points(pm)
    for plugin in extra:
        pm.register(plugin)
    check_hooks(pm)
    return pm


def load_entry_points(pm: PluginManager, names: Iterable[str] | None = None) -> list[str]:
    """Load each plugin of the entry-point group (or only those named ``names``) on its own, so
    that one failure skips one plugin; the names of those loaded without error."""
    import importlib.metadata  # here: a start that loads no plugin does not pay for it

    wanted = None if names is None else set(names)
    seen: set[str] = set()
    loaded = []
    for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT):
        if ep.name in seen or (wanted is not None and ep.name not in wanted):
            continue
        seen.add(ep.name)  # pluggy loads the first of several plugins with one name
        if _load_one(pm, ep):
            loaded.append(ep.name)
    return loaded


def _load_one(pm: PluginManager, ep) -> bool:
    registered_before = pm.has_plugin(ep.name)
    watch = _slow_notice(f"still importing plugin {safe_text(ep.name, 80)}", _dist_name(ep.dist))
    try:
        # pluggy's own loader, one name at a time: it records the distribution of each plugin
        pm.load_setuptools_entrypoints(hookspecs.PROJECT, name=ep.name)
        return True
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit too: a plugin must not end textcw
        if not registered_before and pm.has_plugin(ep.name):
            pm.unregister(name=ep.name)
        dist = ep.dist
        report(pm, BrokenPlugin(ep.name, _dist_name(dist), getattr(dist, "version", "") or "",
                                f"loading {ep.value} {describe(exc)}"))
        return False
    finally:
        watch.cancel()


def _slow_notice(what: str, distribution: str) -> threading.Timer:
    """A started timer that says ``what`` on stderr after :data:`SLOW_IMPORT_SECONDS` (cancel it
    when the plugin's import or hook returns): a command that hangs in a plugin then names the
    plugin and what it is doing, instead of hanging silently."""
    source = f" (from {safe_text(distribution, 80)})" if distribution else ""

    def say() -> None:
        try:
            sys.stderr.write(f"{what}{source}... (set {NO_PLUGINS_VAR}=1 to run textcw without installed "
                             "plugins)\n")
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
    installed = installed_ids(pm)
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
            skip(pm, impl.plugin, reason)
    pm.check_pending()


def installed_ids(pm: pluggy.PluginManager) -> dict[int, Any]:
    """``id(plugin) -> distribution`` of the plugins loaded from entry points."""
    return {id(p): d for p, d in pm.list_plugin_distinfo()}


def _dist_name(dist) -> str:
    if dist is None:
        return ""
    metadata = getattr(dist, "metadata", None)
    name = metadata["Name"] if metadata is not None else None
    return safe_text(name or getattr(dist, "project_name", "") or "", 100)


def describe(exc: BaseException) -> str:
    """What an exception says, on one bounded line, as a verb phrase ("raised ValueError: ...")."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    text = safe_text(" ".join(str(exc).split()), _MAX_REASON)
    kind = safe_text(type(exc).__name__, 80)
    return f"raised {kind}: {text}" if text else f"raised {kind}"


def skip(pm: pluggy.PluginManager, plugin: object, reason: str) -> None:
    """Unregister the installed ``plugin`` and report it."""
    dist = installed_ids(pm).get(id(plugin))
    name = pm.get_name(plugin) or provider_name(pm, plugin)
    if pm.is_registered(plugin):
        pm.unregister(plugin)
    report(pm, BrokenPlugin(name, getattr(dist, "project_name", "") or "",
                            getattr(dist, "version", "") or "", reason))


def report(pm: pluggy.PluginManager, broken: BrokenPlugin) -> None:
    """Record ``broken`` and log its one ``WARNING`` line."""
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

    Import failures are known once the plugin is imported (at once, or on first use of one of
    its names); a failing hook only once the hook has run (:func:`build_registries`,
    :func:`register_commands`)."""
    return list(getattr(pm, "broken", ()))


def call_hook(pm: pluggy.PluginManager, impl, installed: dict[int, Any], hook: str, **kwargs: Any) -> bool:
    """Call one hook implementation as pluggy would; an installed plugin's failure skips the
    plugin (False), any other plugin's failure propagates."""
    args = [kwargs[name] for name in impl.argnames]
    if id(impl.plugin) not in installed:
        impl.function(*args)
        return True
    watch = _slow_notice(f"plugin {safe_text(pm.get_name(impl.plugin) or '?', 80)} is still running its hook {hook}",
                         provider_name(pm, impl.plugin))
    try:
        impl.function(*args)
        return True
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit too
        skip(pm, impl.plugin, f"its hook {hook} {describe(exc)}")
        return False
    finally:
        watch.cancel()


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
