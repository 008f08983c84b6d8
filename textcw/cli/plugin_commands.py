"""Commands of plugins not imported yet: listed in ``textcw --help`` from the plugin index, and
imported when one of them runs.

Why: importing every installed plugin so that ``textcw --help`` can list ``textcw serve`` cost
every command the plugins' imports. A :class:`PluginCommand` stands for a command of a pending
plugin (:func:`textcw.plugins.lazy.pending_commands`) with the name and help the index recorded;
the root group (:class:`PluginGroup`) swaps it for the real command, built by the plugin's
``register_commands`` hook as at a full start, just before it runs, is completed, or shows
its own help.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup

from textcw.cli.metavars import fix_metavars
from textcw.errors import PluginError
from textcw.plugins.lazy import load_commands


class PluginCommand(TyperCommand):
    """A pending plugin's command, as the index describes it (help only: it never runs)."""

    def __init__(self, spec: dict[str, Any], *, plugin: str, pm, app: typer.Typer) -> None:
        super().__init__(spec["name"], help=spec["help"], short_help=spec["short_help"], hidden=spec["hidden"],
                         deprecated=spec["deprecated"], rich_help_panel=spec["panel"], add_help_option=False)
        self.plugin = plugin
        self.pm = pm
        self.app = app


class PluginGroup(TyperGroup):
    """The root group: a :class:`PluginCommand` is replaced by the real command when resolved."""

    def resolve_command(self, ctx, args):
        stub = self.commands.get(args[0]) if args else None
        if isinstance(stub, PluginCommand):
            self.import_command(stub)
        return super().resolve_command(ctx, args)

    def import_command(self, stub: PluginCommand) -> None:
        """Import ``stub``'s plugin and put its real commands in place of its stubs."""
        for name, command in list(self.commands.items()):
            if isinstance(command, PluginCommand) and command.plugin == stub.plugin:
                del self.commands[name]
        commands, groups = load_commands(stub.pm, stub.app, stub.plugin)
        scratch = typer.Typer()
        scratch.registered_commands, scratch.registered_groups = list(commands), list(groups)
        built = typer.main.get_group(scratch).commands if commands or groups else {}
        for name, command in built.items():
            fix_metavars(command)
            self.commands[name] = command
        if stub.name not in built:
            stub.pm.lazy.stale(f"plugin {stub.plugin!r} no longer adds the command {stub.name!r}")
            raise PluginError(f"the plugin {stub.plugin!r} no longer adds the command {stub.name!r}; run the "
                              "command again")
