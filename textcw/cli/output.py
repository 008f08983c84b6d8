"""Printing helpers shared by the commands: JSON, tables, progress bars and status lines.

Results go to stdout. ``--json`` means one thing in every command: print the result as JSON on
stdout instead of text; ``--json-out PATH`` writes the same JSON to a file (atomically) and
leaves the text output as it is. Status lines ("saved m.textcw-model") go to stderr through the
``textcw`` logger, so ``--quiet`` silences them and a pipe of stdout gets only results.
"""

from __future__ import annotations

import json
import logging
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table


log = logging.getLogger("textcw.cli")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout instead of text")]
JsonOut = Annotated[Path | None, typer.Option("--json-out", metavar="PATH",
                                              help="Also write the result as JSON to this file")]


def json_text(obj) -> str:
    return json.dumps(obj, indent=2, sort_keys=True, default=str)


def print_json(obj) -> None:
    sys.stdout.write(json_text(obj) + "\n")


def write_json(obj, path: Path) -> None:
    """``obj`` as JSON in ``path``, atomically, and a status line saying so."""
    from textcw._atomic import atomic_write_text

    atomic_write_text(path, json_text(obj) + "\n")
    log.info("wrote %s", path)


def print_table(columns: list[str], rows: list[list], title: str | None = None, *,
                keep: tuple[int, ...] = (0,)) -> None:
    """A table that fits a terminal by wrapping its prose columns (the columns in ``keep``, names a
    user must type, are never wrapped or cut); logs and files get the whole table, never squeezed
    below its content's width."""
    from rich.text import Text

    table = Table(title=title, show_lines=False)
    for k, col in enumerate(columns):
        if k in keep:
            width = max([len(str(row[k])) for row in rows] + [len(col)])
            table.add_column(col, no_wrap=True, min_width=width)
        else:
            table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*[str(v) for v in row])
    console = Console()
    if not console.is_terminal:
        widths = [max([len(Text.from_markup(str(r[k])).plain) for r in rows] + [len(c)])
                  for k, c in enumerate(columns)]
        console = Console(width=max(80, sum(widths) + 3 * len(widths) + 1))
    console.print(table)


@contextmanager
def progress_bar():
    """A ``report(stage, done, total)`` callback drawing a bar on a terminal, silent otherwise."""
    console = Console(stderr=True)
    if not console.is_terminal:  # no bar at all (older rich prints a blank line for a disabled one)
        yield lambda stage, done, total: None
        return
    with Progress(
        TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=console, transient=True,
    ) as progress:
        tasks: dict[str, int] = {}

        def report(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = progress.add_task(stage, total=total)
            progress.update(tasks[stage], completed=done, total=total)

        yield report
