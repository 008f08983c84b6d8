"""The help options and metavars every command shows, the built-in ones and the plugins'.

Why a module of its own: the root application (:mod:`textcw.cli`) and the commands of plugins
imported on first use (:mod:`textcw.cli.plugin_commands`) both fix the metavars of the
commands they build, and neither imports the other to share it.
"""

from __future__ import annotations

import typer

__all__ = ["HELP_OPTIONS", "fix_metavars"]

HELP_OPTIONS = ["-h", "--help"]


def fix_metavars(command) -> None:
    """Give ``command`` and its sub-commands the usual help metavars (:func:`textcw.cli.build_command`)."""
    stack = [command]
    while stack:
        cmd = stack.pop()
        stack.extend(getattr(cmd, "commands", {}).values())
        help_option = cmd.get_help_option(typer.Context(cmd, info_name=cmd.name, help_option_names=HELP_OPTIONS))
        for param in [*cmd.params, *([help_option] if help_option is not None else [])]:
            if param.metavar is not None:
                continue
            if getattr(param, "is_flag", False) or getattr(param, "count", False):
                param.metavar = ""
            else:  # an option's value, or an argument: PATH rather than typer 0.29's {path}
                param.metavar = param.name.upper()
