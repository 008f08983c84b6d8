"""The plugins' commands: adding them to the ``textcw`` application, and describing them for the
plugin index.

Why a plugin's commands can be described without importing the plugin at each start: the
plugin index (:mod:`textcw.plugins.index`) keeps each command's name and help, read from a
scratch application by :func:`describe_commands` when the index is made, so ``textcw --help``
lists the command and the plugin is imported only when the command runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pluggy

from textcw.errors import PluginError
from textcw.plugins.manager import call_hook, installed_ids, provider_name, skip
from textcw.untrusted import safe_text

#: The most characters of a command's help text the index keeps (a longer one is not indexed).
MAX_HELP = 20_000


def register_commands(pm: pluggy.PluginManager, app, *, plugins: Iterable[object] | None = None) -> None:
    """Let every plugin (or only those of ``plugins``) add its commands to the typer ``app``
    (the ``register_commands`` hook).

    Use this instead of ``pm.hook.register_commands(app=app)``: an installed plugin whose hook
    raises is skipped with a report, and the commands it added before failing are removed. A
    command name that another plugin (textcw's built-ins first) already added is an error naming
    both: an installed plugin is skipped with its commands, a built-in or in-process plugin
    raises :class:`~textcw.errors.PluginError`. So no plugin can replace ``textcw train``.
    """
    installed = installed_ids(pm)
    only = None if plugins is None else {id(p) for p in plugins}
    owners: dict[str, str] = {name: "textcw" for name in command_names(app, 0, 0)}
    # pluggy calls the last registered implementation first; keep that order for the help text
    for impl in reversed(pm.hook.register_commands.get_hookimpls()):
        if impl.wrapper or impl.hookwrapper or not pm.is_registered(impl.plugin):
            continue
        if only is not None and id(impl.plugin) not in only:
            continue
        counts = {attr: len(getattr(app, attr, ())) for attr in ("registered_commands", "registered_groups")}
        if not call_hook(pm, impl, installed, "register_commands", app=app):
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
        skip(pm, impl.plugin, clash)


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


def describe_commands(pm: pluggy.PluginManager) -> dict[str, list[dict[str, Any]]] | None:
    """``{plugin name: [command, ...]}`` for every installed plugin's commands, each command as
    the plugin index keeps it (name, help, short help, hidden, deprecated, help panel); None on
    any doubt (a hook that fails, two plugins with one command name, a name or help the index
    cannot hold), so that no index is written and every start loads every plugin, as before.

    Side-effect free: the hooks run on a scratch application and a failure is not reported here
    (the start that loads every plugin reports it, as it always did). A clash with a built-in
    command is left to the command line, which loads such a plugin at start and reports it.
    """
    import typer

    installed = installed_ids(pm)
    app = typer.Typer()
    owners: dict[str, str] = {}
    found: dict[str, list[str]] = {}
    for impl in reversed(pm.hook.register_commands.get_hookimpls()):
        if impl.wrapper or impl.hookwrapper or id(impl.plugin) not in installed or not pm.is_registered(impl.plugin):
            continue
        counts = (len(app.registered_commands), len(app.registered_groups))
        try:
            impl.function(*[{"app": app}[name] for name in impl.argnames])
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - reported by the start that loads every plugin
            return None
        added = command_names(app, *counts, unique=False)
        provider = provider_name(pm, impl.plugin)
        if _command_clash(added, owners, provider) is not None:
            return None
        owners.update(dict.fromkeys(added, provider))
        found.setdefault(pm.get_name(impl.plugin) or "", []).extend(added)
    if not any(found.values()):
        return {name: [] for name in found}
    try:
        built = typer.main.get_group(app).commands
        return {plugin: [_describe_command(built[name]) for name in names] for plugin, names in found.items()}
    except Exception:  # noqa: BLE001 - a command typer cannot build, or help too long: no index
        return None


def _describe_command(command) -> dict[str, Any]:
    panel = getattr(command, "rich_help_panel", None)  # typer's DefaultPlaceholder when not given
    texts = {"help": command.help, "short_help": command.short_help, "panel": panel if isinstance(panel, str) else None}
    for value in texts.values():
        if value is not None and (not isinstance(value, str) or len(value) > MAX_HELP):
            raise ValueError("help text the index cannot hold")
    return {"name": command.name, **texts, "hidden": bool(command.hidden),
            "deprecated": bool(getattr(command, "deprecated", False))}
