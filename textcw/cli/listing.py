"""``textcw list``: registered names with summaries and providers."""

from __future__ import annotations

from typing import Annotated

import typer

from textcw.cli.output import print_json, print_table
from textcw.errors import UnknownNameError
from textcw.registry import KINDS


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_(
        kind: Annotated[str, typer.Argument(help="learners, featurizers, corpora or evaluators")],
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
    ) -> None:
        """List registered learners, featurizers, corpora (with tasks) or evaluators."""
        from textcw.plugins import default_registries

        if kind not in KINDS:
            raise UnknownNameError("kind", kind, KINDS)
        rows = []
        for entry in default_registries()[kind]:
            row = {"name": entry.name, "summary": entry.summary, "provider": entry.provider}
            if kind == "corpora":
                row["tasks"] = {f"{entry.name}:{t}": s for t, s in entry.extra.get("tasks", {}).items()}
            rows.append(row)
        if as_json:
            print_json(rows)
            return
        if kind == "corpora":
            table = []
            for row in rows:
                table.append([row["name"], row["summary"], row["provider"]])
                table += [[f"  {t}", s, ""] for t, s in row["tasks"].items()]
            print_table(["name", "summary", "provider"], table)
        else:
            print_table(["name", "summary", "provider"], [[r["name"], r["summary"], r["provider"]] for r in rows])
