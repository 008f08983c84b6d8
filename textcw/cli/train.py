"""``textcw train``: corpus -> featurizer -> learner, accuracy on the test split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from textcw.cli.output import print_json, progress_bar
from textcw.errors import ParameterError


def parse_params(items: list[str] | None, option: str = "--param") -> dict:
    """``["eta=0.9", "covariance=diag-l2"]`` -> ``{"eta": 0.9, "covariance": "diag-l2"}``.

    Values are read as JSON when they parse (numbers, true/false, null, lists), else kept as text.
    """
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"{option} {item!r} is not KEY=VALUE (e.g. {option} eta=0.9)")
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value
    return params


def register(app: typer.Typer) -> None:
    @app.command()
    def train(
        corpus: Annotated[str, typer.Option("--corpus", help="Corpus and task, e.g. newsgroups or newsgroups:comp")],
        learner: Annotated[str, typer.Option("--learner", help="Learner name (see `textcw list learners`)")],
        featurizer: Annotated[str | None, typer.Option("--featurizer", help="Featurizer name (default: the corpus's)")] = None,
        param: Annotated[list[str] | None, typer.Option("--param", help="Learner parameter KEY=VALUE (repeatable)")] = None,
        featurizer_param: Annotated[list[str] | None, typer.Option("--featurizer-param", help="Featurizer parameter KEY=VALUE (repeatable)")] = None,
        epochs: Annotated[int | None, typer.Option("--epochs", help="Passes over the training data")] = None,
        seed: Annotated[int, typer.Option("--seed", help="Seed of the shuffling")] = 0,
        out: Annotated[Path | None, typer.Option("--out", help="Save the fitted pipeline here (joblib + .json manifest)")] = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object")] = False,
    ) -> None:
        """Train a learner on a corpus's training split and report test accuracy."""
        from textcw.persist import save
        from textcw.pipeline import train as run_train

        with progress_bar() as report:
            result = run_train(
                corpus, learner, featurizer=featurizer, params=parse_params(param),
                featurizer_params=parse_params(featurizer_param, "--featurizer-param"),
                epochs=epochs, seed=seed, progress=report,
            )
        summary = result.to_dict()
        if out is not None:
            save(result.model, out, info={k: summary[k] for k in ("corpus", "accuracy", "n_train", "n_test")})
            summary["model"] = str(out)
        if as_json:
            print_json(summary)
            return
        typer.echo(
            f"{result.corpus}  {result.learner}  accuracy {result.accuracy:.4f}  "
            f"(train {result.n_train} docs, test {result.n_test}, {result.n_features} features; "
            f"featurize {result.featurize_seconds:.1f} s, train {result.train_seconds:.2f} s)"
        )
        if out is not None:
            typer.echo(f"saved {out} and {out}.json")
