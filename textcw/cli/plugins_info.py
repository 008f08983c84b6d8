"""``textcw plugins``: installed plugins with their versions, and the broken ones with the reason."""

from __future__ import annotations

from typing import Annotated

import typer

from textcw.cli.output import print_json, print_table
from textcw.plugins import default_plugin_manager, default_registries, installed_plugins


def plugins(as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False) -> None:
    """List installed plugins (built-ins and entry-point plugins) with versions; a broken
    plugin is listed with the reason it was skipped."""
    default_registries()  # runs the registration hooks, so a plugin whose hook fails shows as broken
    rows = installed_plugins(default_plugin_manager())
    if as_json:
        print_json(rows)
    else:
        print_table(["plugin", "distribution", "version", "status"],
                    [[r["name"], r["distribution"], r["version"],
                      f"broken: {r['broken']}" if "broken" in r else "ok"] for r in rows])


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command()(plugins)
