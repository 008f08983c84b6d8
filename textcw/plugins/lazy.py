"""Installed plugins imported on first use: the process-wide manager and registries.

Why: a command should pay only for what it uses. With a usable plugin index
(:mod:`textcw.plugins.index`), the process-wide manager starts with the built-ins only and keeps
the installed plugins *pending*; a plugin is imported, checked and registered (exactly as at a
full start: broken plugins are reported and skipped, names are all or nothing) when

- one of its names is looked up in the process-wide registries (``registries.learners.get``,
  ``in``), or its kind is listed (``names()``, iteration, ``len``): the plugins that register
  names of that kind;
- a name the index does not know is looked up: every pending plugin (the index may be stale);
- one of its commands runs (:func:`load_commands`; the command line lists the commands from the
  index, :func:`pending_commands`);
- the installed plugins are listed (:func:`textcw.plugins.installed_plugins`, ``textcw plugins``).

Without a usable index (the first start in an environment, after any change to the installed
distributions, while a plugin is broken), every plugin is loaded at start as before, and the
index is written from what they registered, if none is broken.

The built-ins are registered kind by kind, when a kind is first looked up (the built-in corpora
import NumPy and SciPy to register, which ``textcw list learners`` need not pay), and before any
installed plugin's names of that kind, so that a clash is still reported as "by textcw and by
the plugin".
"""

from __future__ import annotations

import threading
from typing import Any

from textcw.plugins import index
from textcw.plugins.commands import command_names, describe_commands, register_commands
from textcw.plugins.manager import PluginManager, check_hooks, get_plugin_manager, installed_ids, load_entry_points
from textcw.plugins.registration import build_registries, register_kind, register_plugin
from textcw.errors import PluginError
from textcw.registry import KINDS, Registries


class LazyPlugins:
    """The process-wide registries' loader: fills each kind with the built-ins on first use, and
    imports the installed plugins not imported yet (``pending``, from the index) when needed.

    Why kinds too: the built-in corpora import NumPy and SciPy to register, which ``textcw list
    learners`` must not pay. Thread-safe: one thread fills or imports at a time; a lookup made
    while a plugin registers (from the same thread) does not start another import.
    """

    def __init__(self, pm: PluginManager, key: str | None, plugins: dict[str, dict[str, Any]]) -> None:
        self.pm = pm
        self.key = key
        self.pending = dict(plugins)
        self.registries: Registries | None = None
        self._filled: set[str] = set()
        self._unmerged: list[object] = []
        self._lock = threading.RLock()
        self._busy = False

    def attach(self, registries: Registries) -> None:
        """Fill the empty ``registries`` on demand: built-ins kind by kind, installed plugins
        already imported at the first lookup, pending ones as :meth:`load_for` says."""
        with self._lock:
            self.registries = registries
            self._unmerged = [p for p, _ in self.pm.list_plugin_distinfo() if self.pm.is_registered(p)]
            for kind in KINDS:
                registries[kind].loader = self.load_for

    def load_for(self, kind: str, name: str | None) -> None:
        """Make ``name`` of ``kind`` registered if any plugin has it (every name of ``kind``
        when ``name`` is None); a name the index does not know imports every pending plugin."""
        with self._lock:
            self._fill(kind)
            self._merge(self._unmerged)
            self._unmerged = []
            if name is None:
                self.load([p for p, info in list(self.pending.items()) if info["names"].get(kind)])
            else:
                registry = self.registries[kind] if self.registries is not None else None
                if registry is None or registry.has(name):
                    return
                self.load([p for p, info in list(self.pending.items()) if name in info["names"].get(kind, ())])
                if not registry.has(name) and self.pending:
                    self.load(list(self.pending))
                    if registry.has(name):
                        self.stale(f"{registry.singular} {name!r} is not in it")
            self._detach_when_done()

    def complete(self) -> None:
        """Import and register every installed plugin not imported or registered yet."""
        with self._lock:
            self.load(list(self.pending))
            self._merge(self._unmerged)
            self._unmerged = []
            self._detach_when_done()

    def load(self, names: list[str]) -> list[object]:
        """Import the pending plugins ``names`` and register them into the attached registries;
        the plugins that loaded without error (a broken one is reported and skipped)."""
        with self._lock:
            todo = [n for n in names if n in self.pending]
            if self._busy or not todo:
                return []
            self._busy = True
            try:
                expected = {n: self.pending.pop(n) for n in todo}
                loaded = load_entry_points(self.pm, todo)
                if set(loaded) != set(todo):
                    self.stale("a plugin in it is gone or broken")
                check_hooks(self.pm)
                plugins = {n: p for n in loaded
                           if (p := self.pm.get_plugin(n)) is not None and self.pm.is_registered(p)}
                if self.registries is not None:
                    registered = self._merge(list(plugins.values()))
                    for n, plugin in plugins.items():
                        if registered.get(id(plugin)) != expected[n]["names"]:
                            self.stale(f"plugin {n!r} registers other names")
                return [p for p in plugins.values() if self.pm.is_registered(p)]
            finally:
                self._busy = False
                self._detach_when_done()

    def _fill(self, kind: str) -> None:
        """Register the built-ins' (and in-process plugins') names of ``kind``, once."""
        if kind in self._filled or self.registries is None:
            return
        self._filled.add(kind)
        installed = installed_ids(self.pm)
        for _, plugin in self.pm.list_name_plugin():
            if plugin is not None and id(plugin) not in installed and self.pm.is_registered(plugin):
                register_kind(self.pm, plugin, self.registries, kind, installed)

    def _merge(self, plugins: list[object]) -> dict[int, dict[str, list[str]] | None]:
        """Register installed ``plugins`` (all or nothing each), the built-ins of the kinds they
        use first; ``{id(plugin): names}``."""
        if self.registries is None or not plugins:
            return {}
        installed = installed_ids(self.pm)

        def fill(kinds: list[str]) -> None:
            for kind in kinds:
                self._fill(kind)

        return {id(p): register_plugin(self.pm, p, self.registries, installed, before_merge=fill) for p in plugins}

    def _detach_when_done(self) -> None:
        if self.registries is not None and not self.pending and not self._unmerged and len(self._filled) == len(KINDS):
            for kind in KINDS:
                self.registries[kind].loader = None

    def stale(self, why: str) -> None:
        """The index no longer says what the plugins do: discard it (the next start rebuilds it)."""
        index.log.debug("the plugin index is stale (%s)", why)
        if self.key is not None:
            index.discard(self.key)


def attach(pm: PluginManager) -> Registries:
    """Empty registries for ``pm`` that fill themselves on use (:class:`LazyPlugins`)."""
    if getattr(pm, "lazy", None) is None:
        pm.lazy = LazyPlugins(pm, None, {})
    registries = Registries()
    pm.lazy.attach(registries)
    return registries


def start() -> tuple[PluginManager, Registries | None]:
    """The process-wide manager, and its registries when they were built already.

    With a usable index: the built-ins, and the installed plugins pending (:class:`LazyPlugins`
    as ``pm.lazy``). Otherwise every plugin loaded, as :func:`get_plugin_manager` does, and the
    index written (when no plugin is broken) from the registries built meanwhile, returned so
    that they are not built twice.
    """
    key = index.environment_key()
    known = index.read(key)
    if known is not None:
        pm = get_plugin_manager(entry_points=False)
        pm.lazy = LazyPlugins(pm, key, known)
        return pm, None
    pm = get_plugin_manager(entry_points=True)
    if pm.broken:  # reported at every start until fixed: no index
        return pm, None
    record: dict[str, dict[str, list[str]]] = {}
    registries = build_registries(pm, record=record)
    commands = describe_commands(pm) if not pm.broken else None
    if commands is not None:
        names = [pm.get_name(p) for p, _ in pm.list_plugin_distinfo()]
        index.write(key, {n: {"names": record.get(n, {}), "commands": commands.get(n, [])}
                          for n in names if n and pm.is_registered(pm.get_plugin(n))})
    return pm, registries


def pending_commands(pm: PluginManager, app) -> list[tuple[str, dict[str, Any]]]:
    """``(plugin name, command)`` of each command of a pending plugin, as the index describes it,
    for the command line to list (and import on use, :func:`load_commands`).

    A pending plugin whose command would take a name ``app`` already has (a built-in, or a stale
    index) is imported now and its commands added as at a full start, which reports the clash.
    """
    lazy = getattr(pm, "lazy", None)
    if lazy is None:
        return []
    taken = set(command_names(app))
    listed: list[tuple[str, dict[str, Any]]] = []
    clashing = []
    for plugin, info in list(lazy.pending.items()):
        names = [c["name"] for c in info["commands"]]
        if len(set(names)) != len(names) or taken & set(names):
            clashing.append(plugin)
            continue
        taken.update(names)
        listed.extend((plugin, command) for command in info["commands"])
    if clashing:
        register_commands(pm, app, plugins=lazy.load(clashing))
    return listed


def load_commands(pm: PluginManager, app, plugin: str) -> tuple[list, list]:
    """Import the pending ``plugin`` and add its commands to ``app``: the typer command and group
    infos it added. :class:`~textcw.errors.PluginError` when the plugin is broken (reported)."""
    lazy = getattr(pm, "lazy", None)
    loaded = lazy.load([plugin]) if lazy is not None else []
    if not loaded and pm.get_plugin(plugin) is not None and pm.is_registered(pm.get_plugin(plugin)):
        loaded = [pm.get_plugin(plugin)]  # imported meanwhile, for one of its names
    if not loaded:
        raise PluginError(f"the plugin {plugin!r} could not be loaded (see the warning above); reinstall "
                          "or update it, or run with TEXTCW_NO_PLUGINS=1")
    counts = (len(app.registered_commands), len(app.registered_groups))
    register_commands(pm, app, plugins=loaded)
    return app.registered_commands[counts[0]:], app.registered_groups[counts[1]:]
