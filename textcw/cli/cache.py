"""``textcw cache info|clear``: where the cache of parsed corpora and featurized matrices is,
what it holds, and emptying it (see :mod:`textcw.corpus.cache`)."""

from __future__ import annotations

from typing import Annotated

import typer

from textcw.cli.output import JsonFlag, print_json
from textcw.errors import UnknownNameError

ACTIONS = ("info", "clear")


def cache(
    action: Annotated[str, typer.Argument(help="info (where the cache is and what it holds) or clear (delete it)")],
    as_json: JsonFlag = False,
) -> None:
    """Show or clear the cache of parsed corpora and featurized matrices."""
    # deferred (start-up): loads NumPy
    from textcw.corpus import cache as corpus_cache

    if action not in ACTIONS:
        raise UnknownNameError("cache action", action, ACTIONS)
    folder, why = corpus_cache.location()
    problem = corpus_cache.problem()
    if action == "clear":
        files, nbytes = corpus_cache.clear()
        if as_json:
            print_json({"folder": str(folder), "removed_files": files, "removed_bytes": nbytes, "problem": problem})
        else:
            typer.echo(f"removed {files} file{'s' if files != 1 else ''} ({_size(nbytes)}) "
                       f"from {folder}" + (f"; not cleared, {problem}" if problem else ""))
        return
    entries = corpus_cache.entries()
    summary = {"folder": str(folder), "chosen_as": why, "enabled": corpus_cache.enabled(),
               "exists": folder.is_dir(), "problem": problem,
               "entries": entries, "total_bytes": sum(e["bytes"] for e in entries)}
    if as_json:
        print_json(summary)
        return
    state = "" if summary["enabled"] else f" (off: {corpus_cache.NO_CACHE_VAR}=1)"
    typer.echo(f"cache folder: {folder}{state}")
    typer.echo(f"chosen as: {why}")
    if problem:
        typer.echo(f"not used: {problem}")
    typer.echo(f"{len(entries)} file{'s' if len(entries) != 1 else ''}, {_size(summary['total_bytes'])}")
    for e in entries:
        typer.echo(f"  {e['kind']:<8}  {e['name']:<24}  {_size(e['bytes']):>9}  {e['path']}")


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command("cache")(cache)


def _size(nbytes: int) -> str:
    return f"{nbytes / 1e6:.1f} MB" if nbytes >= 100_000 else f"{nbytes} bytes"
