"""Building the plugin manager and the registries it fills.

Nothing happens at import: :func:`get_plugin_manager` builds a fresh manager (tests build
isolated ones), and :func:`default_registries` builds the process-wide registries on first use.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Iterable
from types import ModuleType

import pluggy

from textcw import hookspecs
from textcw.registry import KINDS, Registries

# The built-in catalogue, registered through the same hooks a third-party plugin uses.
BUILTIN_PLUGINS = (
    "textcw.default_plugins.learners",
    "textcw.default_plugins.featurizers",
    "textcw.default_plugins.corpora",
    "textcw.default_plugins.evaluators",
    "textcw.default_plugins.baselines",
    "textcw.default_plugins.scale",
)
BUILTIN_PROVIDER = "textcw"


def get_plugin_manager(*, entry_points: bool = True, extra: Iterable[object] = ()) -> pluggy.PluginManager:
    """Build a plugin manager with the built-ins, the installed plugins and ``extra``.

    Parameters
    ----------
    entry_points : bool
        Load third-party plugins declared in the entry-point group ``textcw``.
    extra : iterable
        More plugin objects (modules or instances), e.g. a plugin under test.
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    for name in BUILTIN_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    if entry_points:
        pm.load_setuptools_entrypoints(hookspecs.PROJECT)
    for plugin in extra:
        pm.register(plugin)
    return pm


def provider_name(pm: pluggy.PluginManager, plugin: object) -> str:
    """The distribution that installed ``plugin`` ("textcw" for built-ins)."""
    for p, dist in pm.list_plugin_distinfo():
        if p is plugin:
            return dist.project_name
    if pm.get_name(plugin) in BUILTIN_PLUGINS:
        return BUILTIN_PROVIDER
    if isinstance(plugin, ModuleType):
        return plugin.__name__
    return getattr(plugin, "__name__", None) or type(plugin).__name__


def build_registries(pm: pluggy.PluginManager) -> Registries:
    """Call every registration hook of every plugin, recording which plugin provided each name."""
    registries = Registries()
    for kind in KINDS:
        caller = getattr(pm.hook, f"register_{kind}")
        # Call plugin by plugin (not the combined hook) so each name knows its provider.
        for impl in caller.get_hookimpls():  # registration order: built-ins, entry points, extras
            register = registries.register_callable(kind, provider_name(pm, impl.plugin))
            impl.function(register=register)
    return registries


def installed_plugins(pm: pluggy.PluginManager) -> list[dict[str, str]]:
    """Each plugin module with the distribution and version that provided it."""
    from textcw import __version__

    dists = {id(p): d for p, d in pm.list_plugin_distinfo()}
    rows = []
    for name, plugin in pm.list_name_plugin():
        dist = dists.get(id(plugin))
        if dist is not None:
            rows.append({"name": name, "distribution": dist.project_name, "version": dist.version})
        elif name in BUILTIN_PLUGINS:
            rows.append({"name": name, "distribution": BUILTIN_PROVIDER, "version": __version__})
        else:
            rows.append({"name": provider_name(pm, plugin), "distribution": "(registered in process)",
                         "version": ""})
    return rows


NO_PLUGINS_VAR = "TEXTCW_NO_PLUGINS"


@functools.cache
def default_plugin_manager() -> pluggy.PluginManager:
    """The process-wide manager (built-ins plus installed plugins), built on first use.

    ``TEXTCW_NO_PLUGINS=1`` leaves the installed plugins out (their code is not even imported):
    a way to run textcw with its built-in components only (``docs/security.md``).
    """
    return get_plugin_manager(entry_points=os.environ.get(NO_PLUGINS_VAR, "") != "1")


@functools.cache
def default_registries() -> Registries:
    """The process-wide registries, built on first use."""
    return build_registries(default_plugin_manager())
