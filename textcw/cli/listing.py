"""``textcw list``: registered names with summaries and providers; corpora with their tasks."""

from __future__ import annotations

from typing import Annotated

import typer

from textcw.cli.output import JsonFlag, print_json, print_table
from textcw.errors import ParameterError, UnknownNameError
from textcw.plugins import current_registries
from textcw.registry import KINDS


NOTE_WIDTH = 100


def _size(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def list_(
    kind: Annotated[str, typer.Argument(help="learners, featurizers, corpora, evaluators, metrics or comparisons")],
    name: Annotated[str | None, typer.Argument(help="Learners: one learner's parameters, with defaults, ranges and meanings")] = None,
    as_json: JsonFlag = False,
    sizes: Annotated[bool, typer.Option(
        "--sizes/--no-sizes",
        help="Corpora: load every task to show its train/test size and classes (reads the "
             "local archives; never downloads)")] = True,
) -> None:
    """List registered learners, featurizers, corpora (with tasks and sizes), evaluators (designs), metrics or comparisons."""
    if kind not in KINDS:
        raise UnknownNameError("kind", kind, KINDS)
    registry = current_registries()[kind]
    if name is not None:
        if kind != "learners":
            raise ParameterError(f"NAME applies to learners (their parameters); for {kind}, "
                                 f"run `textcw list {kind}`")
        show_learner(registry.get(name), as_json=as_json)
        return
    entries = list(registry)
    if kind == "corpora":
        show_corpora(entries, as_json=as_json, sizes=sizes)
        return
    rows = [{"name": e.name, "summary": e.summary, "provider": e.provider} for e in entries]
    if as_json:
        print_json(rows)
    else:
        print_table(["name", "summary", "provider"],
                    [[r["name"], r["summary"], r["provider"]] for r in rows])


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command("list")(list_)


def show_learner(entry, *, as_json: bool) -> None:
    """One learner: its summary, then every parameter with default, allowed values and meaning."""
    # deferred (start-up): textcw --help does not load it
    from textcw.cli.parameters import parameters

    rows = parameters(entry.factory)
    if as_json:
        print_json({"name": entry.name, "summary": entry.summary, "provider": entry.provider,
                    "parameters": [vars(p) for p in rows]})
        return
    typer.echo(f"{entry.name}: {entry.summary} (from {entry.provider})")
    print_table(["parameter", "default", "allowed", "meaning"],
                [[p.name, p.default, p.allowed, p.meaning] for p in rows], keep=(0, 1))


def show_corpora(entries, *, as_json: bool, sizes: bool) -> None:
    """Every corpus and its tasks, with sizes, and what its documents are: ``text`` (any text
    featurizer applies, and a model trained on it labels text) or ``vectors`` (precomputed
    feature vectors: a model trained on them labels vectors from Python, not text)."""
    # deferred (start-up): loads NumPy
    from textcw.corpus.catalogue import input_kind, task_rows

    corpora = [(e, task_rows(e, sizes=sizes)) for e in entries]
    if as_json:
        print_json([{"name": e.name, "summary": e.summary, "provider": e.provider,
                     "featurizer": e.featurizer, "input": input_kind(e),
                     "tasks": [t.to_dict() for t in tasks]} for e, tasks in corpora])
        return
    from rich.markup import escape

    table, notes = [], {}  # problem -> the names it applies to, said once below the table

    def note(problem: str, name: str) -> str:
        notes.setdefault(problem, []).append(name)
        return f"sizes unknown, see note {list(notes).index(problem) + 1} below"

    for entry, tasks in corpora:
        problems = {t.problem for t in tasks if t.problem}
        # The same problem for every task (usually a missing file) is said once.
        shared = problems.pop() if len(problems) == 1 and all(t.problem for t in tasks) else None
        summary = f"{entry.summary} [{entry.provider}]"
        summary = f"{summary}; {note(shared, entry.name)}" if shared else summary
        kind = input_kind(entry)
        table.append([entry.name, kind, "", "", "", escape(summary)])
        for t in tasks:
            text = t.summary if t.problem is None or shared else f"{t.summary} ({note(t.problem, t.name)})"
            table.append([f"  {t.name}", kind, _size(t.train), _size(t.test), _size(t.classes), escape(text)])
    print_table(["corpus / task", "input", "train", "test", "classes", "summary [provider]"], table,
                keep=(0, 1, 2, 3, 4))
    # The advice (where to put a missing file, often a few hundred characters) once each, on
    # stderr: the table's lines stay short, one row per line for a pipe, and a script reading
    # them gets no prose.
    for number, (problem, names) in enumerate(notes.items(), 1):
        typer.echo(wrapped(f"note {number} ({', '.join(names)}): {problem}"), err=True)


def wrapped(text: str, width: int = NOTE_WIDTH) -> str:
    """``text`` in lines of at most ``width`` characters where it has spaces (a path or an
    address is never cut), the lines after the first indented."""
    import textwrap

    return textwrap.fill(text, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
