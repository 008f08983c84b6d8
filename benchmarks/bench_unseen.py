"""How the cross-fitted halves should score the other half's rows: with the words they never saw
kept, or dropped as a test document's are (``Calibrated(unseen=...)``,
:mod:`textcw.learners.unseen_features`), and in which margin.

For each task and learner, the final model is the one ``textcw train`` fits
(``make_pipeline("tfidf", LEARNER, train_defaults=True)``: the documents choose their n-grams,
the learner self-tunes); its features are reused, and two half-size clones with its self-tuned
values score the other half (``Calibrated``'s folds and seed), once with the rows as given
(``keep``) and once through :func:`~textcw.learners.unseen_features.as_unseen` (``drop``). Every
combination of ``keep``/``drop``, margin (``raw``, ``normalized``, ``standardized`` for the
Gaussian learners) and method (``temperature``, ``top-bias``) is fitted to those scores and
applied to the same final model's test scores; a row gives the test ECE and the mean probability
of the predicted label minus the accuracy (points). ``default`` is the pipeline's own
calibration (the rule of docs/quality.md "Short documents scored as unseen ones").

Tasks: the short-text tasks of ``short_text_data.py`` and the project's held-out tasks of
``bench_out_of_box.py`` (text ones; their data as that script says), and the corpora
``newsgroups``, ``newsgroups:sci`` and ``reuters`` (``$TEXTCW_DATA``).

Run by hand: ``python benchmarks/bench_unseen.py [--tasks a,b] [--learners scw1,arow]
[--max-per-class N] [--json out.json]``; a small run: ``--tasks newsgroups-subjects
--max-per-class 10``. Results in docs/quality.md "Short documents scored as unseen ones".
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_short_text import CACHE, load_task  # noqa: E402
from short_text_calibration import score  # noqa: E402
from short_text_data import SHORT_TEXT_TASKS  # noqa: E402

import textcw  # noqa: E402
from textcw.atomic import atomic_write_text  # noqa: E402
from textcw.learners.temperature import fit_temperature, weight_norm  # noqa: E402
from textcw.learners.unseen_features import as_unseen, unit_length_rows  # noqa: E402

CORPORA = ("newsgroups", "newsgroups:sci", "reuters")


def ece_and_gap(proba: np.ndarray, y, classes) -> tuple[float, float]:
    """Expected calibration error and mean probability minus accuracy (points), as the rows of
    ``bench_short_text.py`` measure them."""
    row = score(y, classes[np.argmax(proba, axis=1)], proba, classes, 0.0)
    return float(row["expected_calibration_error"]), float(100 * row["confidence_minus_accuracy"])


def _task(name, max_per_class, cache):
    if name in CORPORA:
        from types import SimpleNamespace

        train, test = textcw.load_corpus(name, "train"), textcw.load_corpus(name, "test")
        return SimpleNamespace(X_train=list(train.data), y_train=np.asarray(train.labels),
                               X_test=list(test.data), y_test=np.asarray(test.labels))
    return load_task(name, max_per_class, cache) if name in SHORT_TEXT_TASKS else load_task(name)


def rows(task, learner_name: str) -> dict:
    """One row per calibration of the final model (module docstring)."""
    y, y_test = np.asarray(task.y_train), np.asarray(task.y_test)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pipeline = textcw.make_pipeline("tfidf", learner_name, train_defaults=True).fit(task.X_train, y)
    final, X, X_test = pipeline[-1], pipeline[:-1].transform(task.X_train), pipeline[:-1].transform(task.X_test)
    classes = final.classes_
    target = np.searchsorted(classes, y)
    settings = clone(textcw.make_pipeline("tfidf", learner_name, train_defaults=True)[-1])
    settings.set_params(**dict(getattr(final, "tuned_params_", {})))
    gaussian = hasattr(final, "margin_variance")
    shape = (len(y),) if len(classes) == 2 else (len(y), len(classes))
    recorded = {kind: (np.zeros(shape), np.zeros(shape)) for kind in ("keep", "drop")}
    norms = np.zeros(len(y))
    unit = unit_length_rows(X)
    folds = StratifiedKFold(2, shuffle=True, random_state=final.get_params().get("random_state", 0))
    for fitted_on, scored in folds.split(np.zeros((len(y), 1)), target):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            half = clone(settings).fit(X[fitted_on], y[fitted_on])
        for kind, rows_ in (("keep", X[scored]), ("drop", as_unseen(X[scored], X[fitted_on], unit_length=unit))):
            recorded[kind][0][scored] = half.decision_function(rows_)
            if gaussian:
                recorded[kind][1][scored] = half.margin_variance(rows_)
        norms[scored] = weight_norm(half)
    out = {"default": ece_and_gap(pipeline.predict_proba(task.X_test), y_test, classes)
           + (pipeline.unseen_, pipeline.probability_calibration_.margin)}
    margins = ("raw", "normalized", "standardized") if gaussian else ("raw", "normalized")
    for kind, (scores, variances) in recorded.items():
        for margin in margins:
            for method in ("temperature", "top-bias"):
                scaling = fit_temperature(scores, variances if gaussian else None, target, margin=margin,
                                          record="cross-fit", norms=norms, method=method)
                out[f"{kind} {margin} {method}"] = ece_and_gap(scaling.predict_proba(final, X_test), y_test, classes)
    return {"accuracy": float(np.mean(final.predict(X_test) == y_test)), "rows": out}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join([*SHORT_TEXT_TASKS, "chatterbot-languages", "bbc-news",
                                                     "sotu-party", "synthetic-text", *CORPORA]))
    parser.add_argument("--learners", default="scw1,scw2,arow")
    parser.add_argument("--max-per-class", type=int, default=None, help="short-text tasks: a quick run")
    parser.add_argument("--json", help="write every number here")
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder for the built tasks (JSON)")
    args = parser.parse_args(argv)
    report = {}
    for name in (t.strip() for t in args.tasks.split(",") if t.strip()):
        task = _task(name, args.max_per_class, args.cache)
        for learner in (n.strip() for n in args.learners.split(",") if n.strip()):
            result = report[f"{name} {learner}"] = rows(task, learner)
            print(f"### {name}, {learner} (accuracy {result['accuracy']:.3f})\n\n"
                  "| calibration | ECE | confidence - accuracy (points) |\n|---|---|---|")
            for label, (ece, gap, *rest) in result["rows"].items():
                chose = f" ({', '.join(rest)})" if rest else ""
                print(f"| {label}{chose} | {ece:.3f} | {gap:+.1f} |")
            print(flush=True)
            if args.json:
                atomic_write_text(args.json, json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
