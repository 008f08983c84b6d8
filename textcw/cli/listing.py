"""``textcw list``: registered names with summaries and providers; corpora with their tasks."""

from __future__ import annotations

from typing import Annotated

import typer

from textcw.cli.output import print_json, print_table
from textcw.errors import UnknownNameError
from textcw.registry import KINDS


def _size(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def register(app: typer.Typer) -> None:
    @app.command("list")
    def list_(
        kind: Annotated[str, typer.Argument(help="learners, featurizers, corpora or evaluators")],
        as_json: Annotated[bool, typer.Option("--json", help="Print JSON")] = False,
        sizes: Annotated[bool, typer.Option(
            "--sizes/--no-sizes",
            help="Corpora: load every task to show its train/test size and classes (reads the "
                 "local archives; never downloads)")] = True,
    ) -> None:
        """List registered learners, featurizers, corpora (with tasks and sizes) or evaluators."""
        from textcw.corpus.catalogue import task_rows
        from textcw.plugins import default_registries

        if kind not in KINDS:
            raise UnknownNameError("kind", kind, KINDS)
        entries = list(default_registries()[kind])
        if kind != "corpora":
            rows = [{"name": e.name, "summary": e.summary, "provider": e.provider} for e in entries]
            if as_json:
                print_json(rows)
            else:
                print_table(["name", "summary", "provider"],
                            [[r["name"], r["summary"], r["provider"]] for r in rows])
            return

        corpora = [(e, task_rows(e, sizes=sizes)) for e in entries]
        if as_json:
            print_json([{"name": e.name, "summary": e.summary, "provider": e.provider,
                         "featurizer": e.extra.get("featurizer", "binary-bow"),
                         "tasks": [t.to_dict() for t in tasks]} for e, tasks in corpora])
            return
        table = []
        for entry, tasks in corpora:
            problems = {t.problem for t in tasks if t.problem}
            # The same problem for every task (usually a missing file) is said once.
            shared = problems.pop() if len(problems) == 1 and all(t.problem for t in tasks) else None
            summary = f"{entry.summary}. Sizes unknown: {shared}" if shared else entry.summary
            table.append([entry.name, "", "", "", summary, entry.provider])
            for t in tasks:
                note = t.summary if t.problem is None or shared else f"{t.summary} ({t.problem})"
                table.append([f"  {t.name}", _size(t.train), _size(t.test), _size(t.classes), note, ""])
        print_table(["corpus / task", "train", "test", "classes", "summary", "provider"], table)
