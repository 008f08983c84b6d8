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

from textcw.atomic import atomic_write_text


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
    atomic_write_text(path, json_text(obj) + "\n")
    log.info("wrote %s", path)


def print_table(columns: list[str], rows: list[list], title: str | None = None, *,
                keep: tuple[int, ...] = (0,)) -> None:
    """A table that fits a terminal by wrapping its prose columns (the columns in ``keep``, names a
    user must type, are never wrapped or cut). Off a terminal (a pipe, a file) the same table is
    plain tab-separated text (:func:`table_lines`), one line per row, for ``cut``, ``grep`` and
    ``sort``."""
    from rich.markup import escape

    console = Console()
    if not console.is_terminal:
        sys.stdout.write("".join(line + "\n" for line in table_lines(columns, rows, title)))
        return
    table = Table(title=escape(title) if title else None, show_lines=False)
    for k, col in enumerate(columns):
        if k in keep:
            width = max([len(str(row[k])) for row in rows] + [len(col)])
            table.add_column(escape(col), no_wrap=True, min_width=width)
        else:
            table.add_column(escape(col), overflow="fold")
    for row in rows:
        table.add_row(*[str(v) for v in row])
    console.print(table)


def plain_cell(value, markup: bool = True) -> str:
    """A cell as plain text on one line: rich markup removed (cells may hold it; column names
    and titles are plain), tabs and line breaks made spaces, the indentation of nested rows
    dropped."""
    from rich.text import Text

    text = Text.from_markup(str(value)).plain if markup and "[" in str(value) else str(value)
    return " ".join(text.replace("\t", " ").splitlines()).strip()


def table_lines(columns: list[str], rows: list[list], title: str | None = None) -> list[str]:
    """The lines of a table as tab-separated text: ``# title`` if any, the column names, then
    one line per row with exactly one field per column (stable for scripts). Cells may hold rich
    markup (escape literal brackets with :func:`rich.markup.escape`)."""
    lines = [f"# {plain_cell(title, markup=False)}"] if title else []
    lines.append("\t".join(plain_cell(c, markup=False) for c in columns))
    lines += ["\t".join(plain_cell(v) for v in row) for row in rows]
    return lines


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
