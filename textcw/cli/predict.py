"""``textcw predict``: label documents with a saved model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from textcw.atomic import atomic_output, check_output_path
from textcw.cli.output import log
from textcw.cli.usage import typed
from textcw.errors import InputError, ParameterError, SpecError, UsageError
from textcw.untrusted import safe_text


def read_documents(files: list[Path] | None) -> list[str]:
    """The documents to label: one per file, else one per stdin line.

    Bytes are decoded as ``folder:PATH`` decodes its files (UTF-8, else Latin-1), so a file
    gets the same words, and so the same features, here as it did in training; left to the
    featurizer, bytes that are not UTF-8 would become U+FFFD and split or lose words.
    """
    # deferred (start-up): loads SciPy
    from textcw.corpus.folder import decode

    if files:
        raw = []
        for f in files:
            try:
                raw.append(f.read_bytes())
            except OSError as exc:
                hint = "give a file, one per document" if f.is_dir() else "check the path"
                raise InputError(f"cannot read document {safe_text(f, limit=None)}: {exc.strerror}; "
                                 f"{hint}") from None
    else:
        if sys.stdin is None:  # started with stdin closed
            raise InputError("no documents: give document files, or one document per line on stdin")
        try:
            raw = [line.rstrip(b"\r\n") for line in sys.stdin.buffer]
        except OSError as exc:
            raise InputError(f"cannot read the documents on stdin: {exc.strerror or exc}; give "
                             "document files instead") from None
    return [decode(doc)[0] for doc in raw]


def check_model(pipeline, path: Path) -> None:
    """Refuse, before reading any document, a model that cannot label text."""
    from sklearn.pipeline import Pipeline

    # deferred (start-up): loads scikit-learn
    from textcw.features.precomputed import Precomputed

    if not isinstance(pipeline, Pipeline):
        raise InputError(
            f"{safe_text(path, limit=None)} holds a {type(pipeline).__name__}, not a pipeline with a "
            "featurizer, so it cannot label text; save models with `textcw train --out`"
        )
    if isinstance(pipeline.steps[0][1], Precomputed):
        # Its featurizer would say "got text" about documents the user never called vectors.
        raise InputError(
            f"{safe_text(path, limit=None)} was trained on feature vectors (an svmlight or other "
            "precomputed corpus) and cannot label text documents; label vectors from Python with "
            "textcw.load(path).predict(X), or train on text to use `textcw predict`"
        )


def output_lines(labels, best, files: list[Path] | None) -> list[str]:
    """``[PATH<TAB>]label[<TAB>p]`` per document: the path when documents came from files (so a
    script can join the answer to its input), the probability when asked for. Paths that hold
    tabs, line breaks or other unprintable characters are printed escaped, so each document
    stays on one line of exactly these columns. (Labels need no escaping: a label with a control
    character or a line break is refused when a model is trained, saved or imported.)"""

    columns = [[safe_text(f, limit=None) for f in files]] if files else []
    columns.append([str(label) for label in labels])
    if best is not None:
        columns.append([f"{q:.6f}" for q in best])
    return ["\t".join(row) for row in zip(*columns)]


def predict(
    model: Annotated[Path | None, typer.Argument(help="A model saved by `textcw train --out` (a pickle: load only models from people you trust; share with `textcw export`); none with --url")] = None,
    files: Annotated[list[Path] | None, typer.Argument(help="Documents, one per file (default: one per stdin line)")] = None,
    proba: Annotated[bool, typer.Option("--proba", help="Also print the probability of the predicted label")] = False,
    url: Annotated[str | None, typer.Option("--url", help="Ask the `textcw serve` service at this address (http://HOST:PORT) instead of loading a model; every argument is then a document")] = None,
    table: Annotated[str | None, typer.Option("--input", metavar="FORMAT:PATH[?OPTIONS]", help="Label every row of a table, e.g. csv:new.csv?text=body (csv, tsv, jsonl, parquet; - for stdin): writes its rows with `predicted` and `probability` columns, as CSV/TSV/JSON lines (JSON lines for Parquet)")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="With --input: write the rows to this file (atomically) instead of stdout")] = None,
    chunk_size: Annotated[int, typer.Option("--chunk-size", help="With --input: rows labelled at a time")] = 10_000,
    top: Annotated[int | None, typer.Option("--top", metavar="K", help="The K best labels of each document, best first, each with its probability (`label<TAB>p` K times); with --input, columns top1, top1_probability, ... (JSON lines: a list `top`)")] = None,
    explain: Annotated[bool, typer.Option("--explain", help="After each document's line, the words that moved its prediction most: each one's contribution to the score difference between the predicted label and the runner-up (two labels: the score against 0), with its standard deviation for the Gaussian learners")] = False,
) -> None:
    """Print the predicted label of each document: `PATH<TAB>label` per file given, or one
    label per stdin line; `--proba` adds `<TAB>probability`. With `--input`, label the rows of a
    CSV, TSV, JSON-lines or Parquet file, streaming."""
    if explain and (table is not None or url is not None):
        raise UsageError("--explain explains documents given as files or stdin lines with a MODEL file, not "
                         "--input or --url; from Python, textcw.explain.explain(model, text) explains any text")
    if table is not None:
        return predict_table(model, table, files=files, out=out, url=url, chunk_size=chunk_size, top=top)
    if out is not None:
        raise UsageError("--out applies to --input (a table of rows); the labels of documents go to stdout")
    if url is not None:
        if top is not None:
            raise UsageError("--top needs a MODEL file, not --url; the service answers every label's "
                             "probability: ask it with textcw.client.Client")
        files = [model, *(files or [])] if model is not None else files
        return predict_with_service(url, files, proba)
    if model is None:
        raise UsageError("give a MODEL file, or --url of a running `textcw serve`")
    # deferred (start-up): loads scikit-learn, once the options are known to be right
    from textcw.persist import load

    pipeline = load(model)
    check_model(pipeline, model)
    print_labels(pipeline, files, proba=proba, top=top, explain=explain)


def print_labels(pipeline, files, *, proba: bool, top: int | None, explain: bool) -> None:
    """Print the label of each document of ``files`` (stdin lines without them) as ``predict``
    does: a set of tags for a multi-label model, the ``top`` best labels, the probability with
    ``proba``, an explanation after each line with ``explain``."""
    # deferred (start-up): textcw --help does not load it
    from textcw.cli.multilabel_output import check_options, is_multilabel_model, tag_lines

    multilabel = is_multilabel_model(pipeline)
    if multilabel:
        check_options(top=top, explain=explain)
    if top is not None:
        # deferred (start-up): loads SciPy
        from textcw.explain import check_k

        check_k(top, len(pipeline.classes_), "--top")
    docs = read_documents(files)
    if not docs:
        return
    if multilabel:  # a set of tags per document
        typer.echo("\n".join(tag_lines(pipeline, docs, files, proba)))
        return
    labels = pipeline.predict(docs)
    best = None
    if proba:
        if not hasattr(pipeline, "predict_proba"):
            raise UsageError("this model's learner defines no probabilities; drop --proba")
        import numpy as np  # here: the commands' help must not import NumPy (textcw.cli)

        p = pipeline.predict_proba(docs)
        best = p[np.arange(len(docs)), np.argmax(p, axis=1)]
    lines = output_lines(labels, best, files) if top is None else top_lines(pipeline, docs, top, files)
    typer.echo("\n".join(with_explanations(pipeline, docs, lines) if explain else lines))


def top_lines(pipeline, docs, k: int, files) -> list[str]:
    """``[PATH<TAB>]label<TAB>p`` for each of the ``k`` best labels of each document
    (:func:`textcw.explain.top_k`; the labels alone for a model without probabilities)."""
    # deferred (start-up): loads SciPy
    from textcw.explain import format_top, top_k

    ranked = top_k(pipeline, docs, k)
    paths = [safe_text(f, limit=None) for f in files] if files else None
    return ["\t".join([*([paths[i]] if paths else []), *format_top(ranked, i)]) for i in range(len(docs))]


def with_explanations(pipeline, docs, lines) -> list[str]:
    """Each document's line followed by its explanation (:func:`textcw.explain.explain`)."""
    # deferred (start-up): loads SciPy
    from textcw.explain import explain, format_explanation

    out = []
    for doc, line in zip(docs, lines):
        out += [line, *format_explanation(explain(pipeline, doc))]
    return out


LABEL_COLUMN, PROBABILITY_COLUMN = "predicted", "probability"


def predict_table(model: Path | None, spec_text: str, *, files, out: Path | None, url, chunk_size: int,
                  top: int | None = None) -> None:
    """``textcw predict MODEL --input FORMAT:PATH``: every row of the table with the predicted
    label and its probability appended, written as the rows are read, ``chunk_size`` at a time
    (so memory is one chunk whatever the length of the table)."""
    fmt, spec = _table_input(model, spec_text, files=files, out=out, url=url, chunk_size=chunk_size)
    # deferred (start-up): loads scikit-learn, once the options are known to be right
    from textcw.persist import load

    pipeline = load(model)
    check_model(pipeline, model)
    rows, writer, label = _table_output(pipeline, fmt, spec, top)
    options = dict(writer=writer, label=label, pipeline=pipeline, top=top, chunk_size=chunk_size, fmt=fmt, spec=spec)
    if out is None:
        skipped, first = _write_rows(sys.stdout.buffer, rows, **options)
        sys.stdout.buffer.flush()
    else:
        with atomic_output(out) as fh:
            skipped, first = _write_rows(fh, rows, **options)
        log.info("wrote %s", out)
    if skipped:
        log.warning("skipped %d bad row%s of %s (first: %s)", skipped, "s" if skipped != 1 else "",
                    safe_text(spec.train, limit=None), first)


def _table_input(model: Path | None, spec_text: str, *, files, out: Path | None, url, chunk_size: int):
    """``(format, TableSpec)`` of ``--input``, once the options that go with it are checked (and
    ``--out`` can be written), before the model is loaded."""
    # deferred (start-up): loads NumPy
    from textcw.corpus.base import split_task_name
    from textcw.corpus.tabular import FORMATS, parse_spec

    if url is not None or files:
        raise UsageError("--input labels a table with a MODEL file: give no document files and no --url")
    if model is None:
        raise UsageError("give a MODEL file: textcw predict MODEL --input csv:new.csv")
    if chunk_size < 1:
        raise ParameterError(f"--chunk-size {chunk_size} is invalid; give at least 1 row")
    fmt, task = split_task_name(spec_text)
    if fmt not in FORMATS:
        raise SpecError(f"--input {spec_text!r}: give FORMAT:PATH with a format among {', '.join(FORMATS)}, "
                         "e.g. csv:new.csv?text=body")
    with typed():
        spec = parse_spec(fmt, task)
    if spec.test is not None:
        raise SpecError(f"--input {spec_text!r}: give one file to label (no TEST_PATH)")
    if out is not None:
        check_output_path(out, "--out", not_same_as=spec.train if spec.train != "-" else None,
                          example="predictions.csv")
    return fmt, spec


def _table_output(pipeline, fmt: str, spec, top: int | None):
    """``(rows, writer, label)``: the rows of the table, the writer of its labelled rows, and the
    function that labels a chunk of rows; the options the model refuses are refused first."""
    # deferred (start-up): loads NumPy
    from textcw.cli.multilabel_output import MultiLabelRowWriter, check_options, is_multilabel_model
    from textcw.corpus.tabular import read_rows

    multilabel = is_multilabel_model(pipeline)
    if multilabel:
        check_options(top=top, explain=False)
    if top is not None:
        # deferred (start-up): loads SciPy
        from textcw.explain import check_k

        check_k(top, len(pipeline.classes_), "--top")
    names, rows = read_rows(spec, spec.train)
    writer = _RowWriter(fmt, spec, names, hasattr(pipeline, "predict_proba"), top)
    if multilabel:  # a set of tags per row
        writer = MultiLabelRowWriter(writer, (LABEL_COLUMN, PROBABILITY_COLUMN))
    taken = [n for n in (LABEL_COLUMN, PROBABILITY_COLUMN, *writer.top_names()) if n in names]
    if taken:
        raise InputError(f"the input already has a column {taken[0]!r}, where the prediction goes; rename "
                         "that column")
    return rows, writer, writer.label if multilabel else _label


def _write_rows(fh, rows, *, writer, label, pipeline, top: int | None, chunk_size: int, fmt: str,
                spec) -> tuple[int, str | None]:
    """Write every good row of ``rows`` to ``fh``, labelled ``chunk_size`` rows at a time;
    ``(bad rows skipped, where the first was)``. A bad row is an error unless the table skips them."""
    probabilities = hasattr(pipeline, "predict_proba")
    skipped, first = 0, None
    writer.start(fh)
    try:
        chunk = []
        for row in rows:
            if row.problem is not None:
                where = f"row {row.line}" if fmt == "parquet" else f"line {row.line}"
                if not spec.skip_bad:
                    raise InputError(f"{safe_text(spec.train, limit=None)} {where}: {row.problem}; fix the "
                                     f"row, or skip bad rows with {fmt}:{spec.train}?bad_rows=skip")
                skipped += 1
                first = first or f"{where}: {row.problem}"
                continue
            chunk.append(row)
            if len(chunk) == chunk_size:
                writer.write(fh, chunk, *label(pipeline, chunk, probabilities), _top(pipeline, chunk, top))
                chunk = []
        if chunk:
            writer.write(fh, chunk, *label(pipeline, chunk, probabilities), _top(pipeline, chunk, top))
    finally:  # also on an error: the stream stays open for its owner
        writer.finish()
    return skipped, first


def _label(pipeline, rows, probabilities: bool):
    docs = [row.text for row in rows]
    labels = pipeline.predict(docs)
    if not probabilities:
        return labels, None
    import numpy as np

    p = pipeline.predict_proba(docs)
    return labels, p[np.arange(len(docs)), np.argmax(p, axis=1)]


def _top(pipeline, rows, k: int | None):
    # deferred (start-up): loads SciPy
    from textcw.explain import top_k

    return None if k is None else top_k(pipeline, [row.text for row in rows], k)


class _RowWriter:
    """Rows out as they came in, plus the two columns (and with ``top``, a label and probability
    column per rank): CSV/TSV with the input's delimiter (and a header if it had one), else JSON
    lines (the ranks as a list ``top``)."""

    def __init__(self, fmt: str, spec, names: list[str], probabilities: bool, top: int | None = None):
        self.tabular = fmt in ("csv", "tsv")
        self.spec, self.names, self.probabilities, self.top = spec, names, probabilities, top

    def top_names(self) -> list[str]:
        if self.top is None:
            return []
        if not self.tabular:
            return ["top"]
        return [name for r in range(1, self.top + 1)
                for name in (f"top{r}", *([f"top{r}_probability"] if self.probabilities else []))]

    def start(self, fh) -> None:
        import io

        if self.tabular:
            self.text = io.TextIOWrapper(fh, encoding="utf-8", newline="", write_through=True)
            import csv

            self.csv = csv.writer(self.text, delimiter=self.spec.delimiter, lineterminator="\n")
            if self.spec.header:
                self.csv.writerow([*self.names, LABEL_COLUMN,
                                   *([PROBABILITY_COLUMN] if self.probabilities else []), *self.top_names()])

    def write(self, fh, rows, labels, best, ranked=None) -> None:
        import json

        if self.tabular:
            if ranked is not None:
                # deferred (start-up): loads SciPy
                from textcw.explain import format_top
            self.csv.writerows([*row.raw, str(label), *([f"{q:.6f}"] if best is not None else []),
                                *(format_top(ranked, k) if ranked is not None else [])]
                               for k, (row, label, q) in enumerate(zip(rows, labels, best if best is not None else labels)))
            return
        lines = []
        for k, (row, label) in enumerate(zip(rows, labels)):
            record = {**{key: value for key, value in row.raw.items()}, LABEL_COLUMN: str(label)}
            if best is not None:
                record[PROBABILITY_COLUMN] = round(float(best[k]), 6)
            if ranked is not None:
                record["top"] = [{"label": str(label), **({"probability": round(float(ranked.probabilities[k, r]), 6)}
                                                          if ranked.probabilities is not None else {})}
                                 for r, label in enumerate(ranked.labels[k])]
            lines.append(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        fh.write("".join(lines).encode("utf-8"))

    def finish(self) -> None:
        text = getattr(self, "text", None)
        if text is not None:
            text.flush()
            text.detach()  # leave the binary stream to its owner
            self.text = None


def predict_with_service(url: str, files: list[Path] | None, proba: bool) -> None:
    """``textcw predict --url``: the same lines, from a running ``textcw serve``."""
    # deferred (start-up): loads the HTTP client
    from textcw.client import Client

    docs = read_documents(files)
    if not docs:
        return
    rows = Client(url).predict_all(docs)
    best = None
    if proba:
        if rows[0]["probabilities"] is None:
            raise UsageError("this service's model defines no probabilities; drop --proba")
        best = [row["probabilities"][str(row["label"])] for row in rows]
    typer.echo("\n".join(output_lines([row["label"] for row in rows], best, files)))


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command()(predict)
