"""``textcw suggest``: the unlabelled documents whose labels would teach a model most."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from textcw.cli.output import JsonFlag, log, print_json
from textcw.cli.predict import check_model, read_documents
from textcw.cli.usage import typed
from textcw.errors import InputError, ParameterError, SpecError, UnknownNameError, UsageError
from textcw.untrusted import one_line, safe_text

EXCERPT_CHARS = 80  # of a document's text, in the text output
JSON_EXCERPT_CHARS = 300


def suggest(
    model: Annotated[Path, typer.Argument(help="A model saved by `textcw train --out` (a pickle: load only models from people you trust)")],
    files: Annotated[list[Path] | None, typer.Argument(help="Documents, one per file (default: one per stdin line); none with --input")] = None,
    table: Annotated[str | None, typer.Option("--input", metavar="FORMAT:PATH[?OPTIONS]", help="Rank the rows of a table of unlabelled text, e.g. csv:pool.csv?text=body (csv, tsv, jsonl, parquet; - for stdin)")] = None,
    top: Annotated[int, typer.Option("--top", metavar="N", help="How many documents to suggest, most informative first")] = 10,
    strategy: Annotated[str, typer.Option("--strategy", help="mistake: the probability of a mistake under the learner's weight distribution (cw-var, cw-stdev, arow, scw1, scw2); margin: the smallest gap between the two most probable labels (any learner); random: a seeded draw")] = "mistake",
    seed: Annotated[int, typer.Option("--seed", help="Seed of --strategy random")] = 0,
    as_json: JsonFlag = False,
    chunk_size: Annotated[int, typer.Option("--chunk-size", help="Documents scored at a time")] = 10_000,
) -> None:
    """Rank unlabelled documents by how informative their labels would be and print the best
    N: `ROW<TAB>SCORE<TAB>TEXT` per document (ROW: the table's row of data counted from 1, the
    file, or the stdin line), most informative first. SCORE is the strategy's number: the
    probability of a mistake (higher first), the probability gap (lower first) or the draw."""
    # deferred (start-up): loads SciPy
    from textcw.suggest import STRATEGIES, Ranker

    if strategy not in STRATEGIES:
        raise UnknownNameError("strategy", strategy, STRATEGIES)
    if top < 1:
        raise ParameterError(f"--top {top} is invalid; give how many documents to suggest (1 or more)")
    if chunk_size < 1:
        raise ParameterError(f"--chunk-size {chunk_size} is invalid; give at least 1 document")
    spec = _table_spec(table, files) if table is not None else None
    # deferred (start-up): loads scikit-learn
    from textcw.persist import load

    pipeline = load(model)
    check_model(pipeline, model)
    ranker = Ranker(pipeline, strategy, top, seed=seed)  # refuses 'mistake' for a learner without variances
    if spec is None:
        seen = _rank_documents(ranker, files, chunk_size)
    else:
        seen = _rank_table(ranker, spec, chunk_size)
    suggestions = ranker.result()
    if as_json:
        print_json({"strategy": strategy, "documents": seen, "suggestions": [
            {"rank": k, "row": s.item[0], "score": s.score, "text": safe_text(one_line(s.item[1]), JSON_EXCERPT_CHARS)}
            for k, s in enumerate(suggestions, 1)]})
        return
    if suggestions:
        typer.echo("\n".join(f"{safe_text(s.item[0], limit=None)}\t{s.score:.6f}\t"
                             f"{safe_text(one_line(s.item[1]), EXCERPT_CHARS)}" for s in suggestions))


def _table_spec(table: str, files):
    # deferred (start-up): loads NumPy
    from textcw.corpus.base import split_task_name
    from textcw.corpus.tabular import FORMATS, parse_spec

    if files:
        raise UsageError("--input ranks the rows of a table: give no document files with it")
    fmt, task = split_task_name(table)
    if fmt not in FORMATS:
        raise SpecError(f"--input {table!r}: give FORMAT:PATH with a format among {', '.join(FORMATS)}, "
                        "e.g. csv:pool.csv?text=body")
    with typed():
        spec = parse_spec(fmt, task)
    if spec.test is not None:
        raise SpecError(f"--input {table!r}: give one file of documents to rank (no TEST_PATH)")
    return fmt, spec


def _rank_documents(ranker, files, chunk_size: int) -> int:
    docs = read_documents(files)
    rows = [str(f) for f in files] if files else list(range(1, len(docs) + 1))
    for start in range(0, len(docs), chunk_size):
        part = slice(start, start + chunk_size)
        ranker.add(docs[part], list(zip(rows[part], docs[part])))
    return len(docs)


def _rank_table(ranker, table, chunk_size: int) -> int:
    """Score the table's rows chunk by chunk (memory: one chunk and the N best)."""
    # deferred (start-up): loads NumPy
    from textcw.corpus.tabular import read_rows

    fmt, spec = table
    _, rows = read_rows(spec, spec.train)
    chunk, seen, skipped, first = [], 0, 0, None
    for row in rows:
        if row.problem is not None:
            where = f"row {row.line}" if fmt == "parquet" else f"line {row.line}"
            if not spec.skip_bad:
                raise InputError(f"{safe_text(spec.train, limit=None)} {where}: {row.problem}; fix the row, or "
                                 f"skip bad rows with {fmt}:{spec.train}?bad_rows=skip")
            skipped += 1
            first = first or f"{where}: {row.problem}"
            continue
        chunk.append((row.row + 1, row.text))
        if len(chunk) == chunk_size:
            ranker.add([text for _, text in chunk], chunk)
            seen, chunk = seen + len(chunk), []
    if chunk:
        ranker.add([text for _, text in chunk], chunk)
        seen += len(chunk)
    if skipped:
        log.warning("skipped %d bad row%s of %s (first: %s)", skipped, "s" if skipped != 1 else "",
                    safe_text(spec.train, limit=None), first)
    return seen


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command()(suggest)
