"""``textcw predict``: label documents with a saved model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from textcw.errors import InputError
from textcw.untrusted import safe_text


def read_documents(files: list[Path] | None) -> list[str]:
    """The documents to label: one per file, else one per stdin line.

    Bytes are decoded as ``folder:PATH`` decodes its files (UTF-8, else Latin-1), so a file
    gets the same words, and so the same features, here as it did in training; left to the
    featurizer, bytes that are not UTF-8 would become U+FFFD and split or lose words.
    """
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
) -> None:
    """Print the predicted label of each document: `PATH<TAB>label` per file given, or one
    label per stdin line; `--proba` adds `<TAB>probability`."""
    from textcw.persist import load

    if url is not None:
        files = [model, *(files or [])] if model is not None else files
        return predict_with_service(url, files, proba)
    if model is None:
        raise InputError("give a MODEL file, or --url of a running `textcw serve`")
    pipeline = load(model)
    check_model(pipeline, model)
    docs = read_documents(files)
    if not docs:
        return
    labels = pipeline.predict(docs)
    best = None
    if proba:
        if not hasattr(pipeline, "predict_proba"):
            raise InputError("this model's learner defines no probabilities; drop --proba")
        p = pipeline.predict_proba(docs)
        best = p[np.arange(len(docs)), np.argmax(p, axis=1)]
    typer.echo("\n".join(output_lines(labels, best, files)))


def predict_with_service(url: str, files: list[Path] | None, proba: bool) -> None:
    """``textcw predict --url``: the same lines, from a running ``textcw serve``."""
    from textcw.client import Client

    docs = read_documents(files)
    if not docs:
        return
    rows = Client(url).predict_all(docs)
    best = None
    if proba:
        if rows[0]["probabilities"] is None:
            raise InputError("this service's model defines no probabilities; drop --proba")
        best = [row["probabilities"][str(row["label"])] for row in rows]
    typer.echo("\n".join(output_lines([row["label"] for row in rows], best, files)))


def register(app: typer.Typer) -> None:
    """Add this module's command(s) to ``app`` (called by :mod:`textcw.default_plugins.commands`)."""
    app.command()(predict)
