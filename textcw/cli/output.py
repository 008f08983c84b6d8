"""Printing helpers shared by the commands: JSON, tables and progress bars."""

from __future__ import annotations

import json
import sys
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


def print_json(obj) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")


def print_table(columns: list[str], rows: list[list], title: str | None = None) -> None:
    table = Table(title=title, show_lines=False)
    for col in columns:
        table.add_column(col)
    for row in rows:
        table.add_row(*[str(v) for v in row])
    Console().print(table)


@contextmanager
def progress_bar():
    """A ``report(stage, done, total)`` callback drawing a bar on a terminal, silent otherwise."""
    console = Console(stderr=True)
    with Progress(
        TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, disable=not console.is_terminal, transient=True,
    ) as progress:
        tasks: dict[str, int] = {}

        def report(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=total)
            progress.update(tasks[stage], completed=done, total=total)

        yield report
