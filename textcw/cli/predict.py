"""``textcw predict``: label documents with a saved model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import numpy as np
import typer

from textcw.errors import InputError


def register(app: typer.Typer) -> None:
    @app.command()
    def predict(
        model: Annotated[Path, typer.Argument(help="A model saved by `textcw train --out`")],
        files: Annotated[list[Path] | None, typer.Argument(help="Documents, one per file (default: one per stdin line)")] = None,
        proba: Annotated[bool, typer.Option("--proba", help="Also print the probability of the predicted label")] = False,
    ) -> None:
        """Print the predicted label of each document, one line each."""
        from textcw.persist import load

        pipeline = load(model)
        if files:
            docs = []
            for f in files:
                try:
                    docs.append(f.read_bytes())
                except OSError as exc:
                    raise InputError(f"cannot read document {f}: {exc.strerror}") from None
        else:
            docs = [line.rstrip(b"\r\n") for line in sys.stdin.buffer]
        if not docs:
            return
        labels = pipeline.predict(docs)
        if not proba:
            typer.echo("\n".join(str(label) for label in labels))
            return
        if not hasattr(pipeline, "predict_proba"):
            raise InputError("this model's learner defines no probabilities; drop --proba")
        p = pipeline.predict_proba(docs)
        best = p[np.arange(len(docs)), np.argmax(p, axis=1)]
        typer.echo("\n".join(f"{label}\t{q:.6f}" for label, q in zip(labels, best)))
