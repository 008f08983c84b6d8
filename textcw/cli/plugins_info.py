"""``textcw plugins``: installed plugins with their versions."""

from __future__ import annotations

from typing import Annotated

import typer

from textcw.cli.output import print_json, print_table


def register(app: typer.Typer) -> None:
    @app.command()
    def plugins(as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False) -> None:
        """List installed plugins (built-ins and entry-point plugins) with versions."""
        from textcw.plugins import default_plugin_manager, installed_plugins

        rows = installed_plugins(default_plugin_manager())
        if as_json:
            print_json(rows)
        else:
            print_table(["plugin", "distribution", "version"],
                        [[r["name"], r["distribution"], r["version"]] for r in rows])
