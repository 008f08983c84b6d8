"""Filling the registries from the plugins' registration hooks, one plugin at a time.

Why one plugin at a time: an installed plugin is registered all or nothing (a failing hook or a
name already taken leaves nothing of it behind), and the process-wide registries add a plugin
imported on first use (:mod:`textcw.plugins.lazy`) the same way they add one loaded at start.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pluggy

from textcw.errors import PluginError
from textcw.plugins.manager import call_hook, installed_ids, provider_name, skip
from textcw.registry import KINDS, Registries
from textcw.untrusted import check_printable, safe_text


def build_registries(pm: pluggy.PluginManager, *, record: dict[str, dict[str, list[str]]] | None = None) -> Registries:
    """Call every registration hook of every plugin, recording which plugin provided each name.

    Plugins are called in registration order (built-ins, installed plugins, extras). An
    installed plugin registers into a scratch table first and its names are added only if all
    its hooks succeed and none of its names is taken, so a broken plugin leaves nothing behind.
    ``record``, when given, receives ``{plugin name: {kind: [names]}}`` of each installed plugin
    kept (the plugin index, :mod:`textcw.plugins.index`, is made of it).
    """
    registries = Registries()
    installed = installed_ids(pm)
    for name, plugin in list(pm.list_name_plugin()):
        names = register_plugin(pm, plugin, registries, installed)
        if record is not None and names is not None and id(plugin) in installed:
            record[name] = names
    return registries


def register_plugin(pm: pluggy.PluginManager, plugin: object, registries: Registries,
                    installed: dict[int, Any] | None = None, *,
                    before_merge: Callable[[list[str]], None] | None = None) -> dict[str, list[str]] | None:
    """Call ``plugin``'s registration hooks into ``registries``: ``{kind: [names]}`` it added (for
    a built-in or in-process plugin, ``{}``), or None when it was skipped as broken or is not
    registered. ``before_merge(kinds)`` is called before an installed plugin's names of those
    kinds are added (the process-wide registries fill those kinds with the built-ins first)."""
    installed = installed_ids(pm) if installed is None else installed
    if plugin is None or not pm.is_registered(plugin):  # a blocked name, or skipped meanwhile
        return None
    if id(plugin) not in installed:
        for kind in KINDS:
            register_kind(pm, plugin, registries, kind, installed)
        return {}
    staged = Registries()
    for kind in KINDS:
        register_kind(pm, plugin, staged, kind, installed)
        if not pm.is_registered(plugin):
            return None
    names = {kind: [entry.name for entry in staged[kind]] for kind in KINDS if len(staged[kind])}
    if before_merge is not None:
        before_merge(list(names))
    return names if _merge(pm, plugin, registries, staged) else None


def register_kind(pm: pluggy.PluginManager, plugin: object, registries: Registries, kind: str,
                  installed: dict[int, Any]) -> None:
    """Call ``plugin``'s ``register_<kind>`` hook into ``registries`` (an installed plugin whose
    hook fails is skipped: :func:`~textcw.plugins.manager.call_hook`)."""
    provider = provider_name(pm, plugin)
    hook = f"register_{kind}"
    for impl in getattr(pm.hook, hook).get_hookimpls():
        if impl.plugin is plugin and not (impl.wrapper or impl.hookwrapper):
            if not call_hook(pm, impl, installed, hook, register=registries.register_callable(kind, provider)):
                return


def _merge(pm: pluggy.PluginManager, plugin: object, registries: Registries, staged: Registries) -> bool:
    """Add an installed plugin's names, all or none: a name already taken, or one that holds a
    control character, skips the plugin; summaries are kept escaped (module docstring)."""
    from textcw.errors import DuplicateNameError

    try:
        for kind in KINDS:
            for entry in staged[kind]:
                check_printable([entry.name, *_task_names(entry)],
                                f"the {staged[kind].singular} name {safe_text(entry.name, 60)!r}", error=PluginError)
                if registries[kind].has(entry.name):
                    registries[kind].add(entry)  # raises, naming both providers
    except (DuplicateNameError, PluginError) as exc:
        skip(pm, plugin, str(exc))
        return False
    for kind in KINDS:
        for entry in staged[kind]:
            registries[kind].add(_escaped(entry))
    return True


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
