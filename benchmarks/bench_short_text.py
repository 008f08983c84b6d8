"""Many classes of short text: ``textcw train`` as a user runs it against tuned scikit-learn,
with the calibration of its probabilities bin by bin, and where the accuracy gap comes from.

Tasks: :mod:`short_text_data` (``debian-sections``, ``python-docstrings``, ``locale-languages``,
``newsgroups-subjects``, ``gcloud-groups``, ``wordnet-glosses``, ``wordnet-examples``,
``locale-domains``, ``python-stdlib``: 20-40 classes, a median of 4-8 distinct words a document).
No learner default was chosen on them; the first four informed the n-gram choice, and the
multi-class update study the rule of :mod:`textcw.learners.update_choice`.

Rows (``--study train``, the default):

- ``NAME textcw train``: ``make_pipeline("tfidf", NAME, train_defaults=True)``, what
  ``textcw train --learner NAME`` fits on a text corpus (self-tuned values, calibrated
  probabilities); its time includes featurizing and the calibration's fits. Fitted once on 200
  documents first, untimed, so that compiling the kernels (paid once per process) is not counted.
- ``LinearSVC default``: scikit-learn's defaults on ``TfidfVectorizer()`` features.
- ``LinearSVC tuned``, ``LogisticRegression tuned``: ``GridSearchCV`` (3 folds) over C (LinearSVC
  {0.1, 0.3, 1, 3, 10}, LogisticRegression {0.1, 1, 10, 100}, ``max_iter=1000``) and unigrams or
  uni+bigrams of sublinear TF-IDF, the vectorizer refitted in every fold; the time includes the
  search.

Reported per row: accuracy, macro-F1, ECE (10 equal-width bins of the predicted label's
probability), log-loss, the mean predicted probability of the predicted label ("confidence"),
the reliability bins (documents, mean confidence, accuracy) and seconds.

``--study calibration`` fits each learner once and calibrates that same final model with each
candidate, on honest scores of the training documents (:mod:`short_text_calibration`): its
calibrators on the scores of 2-, 3- and 5-fold cross-fitting (``--folds K``: only K); "vector"
scaling (a temperature and a
per-class bias) and an "extrapolated" temperature (fitted at two model sizes, extrapolated to
the full one) on the 2-fold ones; each calibrator's row also gives its mean probability minus
the accuracy on the recorded scores it was fitted to (``recorded_confidence_minus_accuracy``).
Test accuracy is the final model's, except for "vector",
whose biases can change the most probable label; a row's seconds are its calibration's (the
clones' fits and the calibrator's fit). ``--study fit-time`` times the calibrator's own fit of
each of those methods (interleaved, 5 times: best and median) on the same 2-fold
scores. Both also take the project's held-out tasks of benchmarks/bench_out_of_box.py
(``--tasks digits,sotu-party,...``): a calibrator must not hurt them. ``--study gap`` trains
``scw1`` and ``arow`` (their self-tuned values kept) with one thing changed at a time: epochs,
averaging, bigrams, the regularisation, the multi-class update, an intercept; and LinearSVC at
its defaults on the same features with and without its intercept. ``--study passes``
(:mod:`short_text_passes`) asks whether choosing the number of passes by the cross-fit halves'
held-out accuracy would help. ``--study multiclass`` (:mod:`short_text_multiclass`) fits
``textcw train``'s pipelines with the top-1 and the k-best parallel multi-class updates and asks
whether online mistakes or the halves could choose between them. ``--study regularisation``
(:mod:`short_text_regularisation`) asks what choosing the regularisation by a grid search over
all the passes, instead of self-tuning's first pass, would give. ``--study train``, ``passes``,
``multiclass`` and ``regularisation`` also take the project's text
tasks (``--tasks chatterbot-languages``); ``--intercept given`` keeps the
learners without the intercept short documents give them. ``--splits 0,1,2`` runs a study on the
task's own split (0) and on fresh stratified splits of its documents, and for ``train`` and
``calibration`` sums up each row over the splits (:mod:`short_text_splits`): whether a
calibration gap repeats or is the split's. ``--label-noise 0.2`` replaces a fifth of the training
labels (each with that probability) by other labels, the test labels kept clean: how a choice
fares where labels are noisy.

Run by hand: ``python benchmarks/bench_short_text.py [--tasks a,b] [--learners scw1,arow]
[--study train|calibration|gap|fit-time|passes|multiclass|regularisation] [--folds K] [--method auto]
[--ngrams fixed] [--unseen keep] [--intercept given] [--splits 0,1,2] [--label-noise P] [--max-per-class N]
[--no-sklearn | --no-logistic] [--json out.json]``; a small run:
``--max-per-class 40 --no-sklearn``. The tasks
are kept as JSON under ``build/short-text`` after their first build. Results in docs/quality.md
"Many classes of short text".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heldout_data import WORD_GRID, text_features  # noqa: E402
from short_text_calibration import calibration_rows, fit_time_rows, score  # noqa: E402
from short_text_data import SHORT_TEXT_TASKS, cached  # noqa: E402
from short_text_multiclass import multiclass_rows  # noqa: E402
from short_text_passes import passes_rows  # noqa: E402
from short_text_regularisation import regularisation_rows  # noqa: E402
from short_text_splits import accuracy_goals, resplit, summary_markdown, summary_rows, with_label_noise  # noqa: E402

import textcw  # noqa: E402
from textcw.atomic import atomic_write_text  # noqa: E402

LEARNERS = ("scw1", "scw2", "arow", "cw-stdev", "sgd")
TUNED = {
    "LinearSVC tuned": (LinearSVC(), {"C": [0.1, 0.3, 1, 3, 10]}),
    "LogisticRegression tuned": (LogisticRegression(max_iter=1000), {"C": [0.1, 1, 10, 100]}),
}


def timed_fit(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence, variance-floor and calibration warnings
        model.fit(X, y)
    return model, time.perf_counter() - start


def _warm(build, task):
    warm = np.random.default_rng(0).permutation(len(task.y_train))[:200]
    timed_fit(build(), [task.X_train[i] for i in warm], task.y_train[warm])


CACHE = Path(__file__).resolve().parent.parent / "build" / "short-text"
# The studies that fit textcw train's tfidf pipelines: text tasks only.
TEXT_STUDIES = ("train", "passes", "multiclass", "regularisation")


def load_task(name, max_per_class=None, cache=CACHE):
    """A task of :mod:`short_text_data` (kept as JSON in ``cache`` after its first build), or one
    of benchmarks/bench_out_of_box.py's held-out tasks (the project's, for ``--study
    calibration``: a calibrator must not hurt them)."""
    if name in SHORT_TEXT_TASKS:
        return cached(name, max_per_class, cache)
    from bench_out_of_box import task_loaders

    return task_loaders(10000)[name]()


def train_rows(task, learners, calibration=None) -> dict:
    """``textcw train``'s pipelines; ``calibration`` (e.g. ``{"folds": 5}``) changes the
    calibration's settings from their defaults."""
    rows = {}
    for name in learners:
        def build(name=name):
            return textcw.make_pipeline("tfidf", name, train_defaults=True).set_params(**(calibration or {}))
        _warm(build, task)
        model, t = timed_fit(build(), task.X_train, task.y_train)
        proba = model.predict_proba(task.X_test)
        tuned = dict(getattr(model.steps[-1][1], "tuned_params_", {}))
        rows[f"{name} textcw train"] = score(task.y_test, model.predict(task.X_test), proba, model.classes_, t,
                                             tuned={k: float(v) for k, v in tuned.items()},
                                             calibration=model.probability_calibration_.to_dict(),
                                             unseen=getattr(model, "unseen_", None),
                                             ngrams=getattr(model, "ngram_choice_", None) and model.ngram_choice_.to_dict())
    return rows


def sklearn_rows(task, skip=()) -> dict:
    """scikit-learn's rows, but those named in ``skip`` (e.g. the LogisticRegression search,
    which takes most of a run)."""
    rows = {}
    model, t = timed_fit(Pipeline([("features", text_features()), ("model", LinearSVC())]),
                         task.X_train, task.y_train)
    rows["LinearSVC default"] = score(task.y_test, model.predict(task.X_test), None, None, t)
    for label, (estimator, grid) in TUNED.items():
        if label in skip:
            continue
        search = GridSearchCV(Pipeline([("features", task.features()), ("model", clone(estimator))]),
                              {**{f"model__{k}": v for k, v in grid.items()},
                               **{f"features__{k}": v for k, v in WORD_GRID.items()}}, cv=3)
        fitted, t = timed_fit(search, task.X_train, task.y_train)
        proba = fitted.predict_proba(task.X_test) if hasattr(fitted, "predict_proba") else None
        rows[label] = score(task.y_test, fitted.predict(task.X_test), proba,
                            fitted.classes_ if proba is not None else None, t,
                            chosen={k: str(v) for k, v in fitted.best_params_.items()})
    return rows


def gap_rows(task, learners=("scw1", "arow")) -> dict:
    """One change at a time to the learner ``textcw train`` fits (its self-tuned values kept)."""
    rows = {}
    for name in learners:
        base = textcw.make_pipeline("tfidf", name, train_defaults=True, probability="raw")
        fitted, t = timed_fit(base, task.X_train, task.y_train)
        tuned = dict(getattr(fitted.steps[-1][1], "tuned_params_", {}))
        params = textcw.make_learner(name).get_params()
        changes = {"as trained": {}, "1 epoch": {"n_epochs": 1}, "20 epochs": {"n_epochs": 20},
                   "averaged": {"average": True}, "averaged, 20 epochs": {"average": True, "n_epochs": 20}}
        for key in ("C", "r"):
            if key in params:
                value = tuned.get(key, params[key])
                changes[f"{key} x0.1"] = {key: value * 0.1}
                changes[f"{key} x10"] = {key: value * 10}
        if "fit_intercept" in params:
            changes["intercept"] = {"fit_intercept": True}
        if "multiclass" in params:  # k-best and exact updates (Crammer, Dredze and Kulesza, EMNLP 2009)
            changes["multiclass seq, k=5"] = {"multiclass": "seq", "k": 5}
            changes["multiclass exact, k=5"] = {"multiclass": "exact", "k": 5}
        for label, change in changes.items():
            model = textcw.make_pipeline("tfidf", name, probability="raw", **{**tuned, **change})
            model, t = timed_fit(model, task.X_train, task.y_train)
            rows[f"{name} {label}"] = {"accuracy": float(np.mean(model.predict(task.X_test) == task.y_test)),
                                       "seconds": t}
        model = textcw.make_pipeline("tfidf", name, probability="raw", featurizer_params={"ngram_range": (1, 2)},
                                     **tuned)
        model, t = timed_fit(model, task.X_train, task.y_train)
        rows[f"{name} bigrams"] = {"accuracy": float(np.mean(model.predict(task.X_test) == task.y_test)),
                                   "seconds": t}
    # the batch model on the same features (textcw's tfidf, unigrams), with and without its intercept
    featurizer = textcw.make_featurizer("tfidf")
    X_train, X_test = featurizer.fit_transform(task.X_train), featurizer.transform(task.X_test)
    for label, intercept in (("LinearSVC default", True), ("LinearSVC without intercept", False)):
        svc, t = timed_fit(LinearSVC(fit_intercept=intercept), X_train, task.y_train)
        rows[f"{label} (the same features)"] = {"accuracy": float(np.mean(svc.predict(X_test) == task.y_test)),
                                                "seconds": t}
    return rows


def markdown(task, rows) -> str:
    def cell(value, digits=3):
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [f"### {task}", "", "| model | accuracy | ECE | confidence | log-loss | seconds |",
             "|---|---|---|---|---|---|"]
    for label, r in rows.items():
        lines.append(f"| {label} | {cell(r['accuracy'])} | {cell(r.get('expected_calibration_error'))} | "
                     f"{cell(r.get('confidence'))} | {cell(r.get('log_loss'))} | {cell(r['seconds'], 2)} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(SHORT_TEXT_TASKS))
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--study", default="train", choices=("train", "calibration", "gap", "fit-time", "passes",
                                                             "multiclass", "regularisation"))
    parser.add_argument("--max-per-class", type=int, default=None,
                        help="at most this many documents a class (a quick run); default: the tasks' own caps")
    parser.add_argument("--no-sklearn", action="store_true")
    parser.add_argument("--no-logistic", action="store_true",
                        help="leave out the tuned LogisticRegression (most of the run time)")
    parser.add_argument("--folds", type=int, default=None,
                        help="cross-fitting folds of the calibration (default: Calibrated's; "
                             "--study calibration: 2, 3 and 5)")
    parser.add_argument("--method", choices=("temperature", "top-bias", "auto"), default=None,
                        help="--study train: the calibration's method (default: Calibrated's)")
    parser.add_argument("--ngrams", choices=("auto", "fixed"), default=None,
                        help="--study train: 'fixed' keeps unigrams (default: short documents choose)")
    parser.add_argument("--unseen", choices=("auto", "keep", "drop"), default=None,
                        help="--study train: how the calibration's halves score held-out rows "
                             "(default: short documents score them as unseen ones)")
    parser.add_argument("--intercept", choices=("auto", "given"), default=None,
                        help="--study train: 'given' keeps the learners' fit_intercept (default: short "
                             "documents give the Gaussian learners an intercept)")
    parser.add_argument("--splits", default="0",
                        help="comma-separated seeds: 0 is the task's own split, any other a fresh stratified "
                             "split of its pooled documents; with more than one, a summary over the splits")
    parser.add_argument("--label-noise", type=float, default=0.0,
                        help="replace each training label with this probability by another one (the test labels "
                             "stay clean)")
    parser.add_argument("--json", help="write every number here")
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder for the built tasks (JSON)")
    args = parser.parse_args(argv)
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    learners = [n.strip() for n in args.learners.split(",") if n.strip()]
    from bench_out_of_box import task_loaders

    known = [*SHORT_TEXT_TASKS, *task_loaders(10000)]
    unknown = [t for t in tasks if t not in known]
    if unknown:
        parser.error(f"unknown task(s) {', '.join(unknown)}; choose among {', '.join(known)}")
    if args.study == "gap" and any(t not in SHORT_TEXT_TASKS for t in tasks):
        parser.error("the project's held-out tasks are for --study train (text tasks), calibration and fit-time; "
                     "bench_out_of_box.py measures the rest")
    try:
        seeds = [int(s) for s in args.splits.split(",") if s.strip()]
    except ValueError:
        parser.error(f"--splits takes comma-separated whole numbers (seeds), not {args.splits!r}")
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        parser.error(f"--splits takes distinct seeds of 0 or more, not {args.splits!r}")
    if not 0.0 <= args.label_noise < 1.0:
        parser.error(f"--label-noise takes a rate in [0, 1), not {args.label_noise!r}")
    report = {}

    def add(header, rows, printed):  # every number so far is in the JSON file after each table
        report[header] = rows
        print(printed, flush=True)
        if args.json:
            atomic_write_text(args.json, json.dumps(report, indent=1))

    for name in tasks:
        per_split, own = [], load_task(name, args.max_per_class, args.cache)
        for seed in seeds:
            task = with_label_noise(resplit(own, seed), args.label_noise, seed)
            rows = study_rows(task, args, learners, parser)
            per_split.append(rows)
            header = (f"{name} ({len(task.y_train)} training, {len(task.y_test)} test, "
                      f"{len(np.unique(task.y_train))} classes)")
            header += (f", split {seed}" if seeds != [0] else "") + (
                f", {args.label_noise:g} label noise" if args.label_noise else "")
            add(header, rows, table(header, rows, args.study))
        if len(seeds) > 1 and args.study in ("train", "calibration"):
            summary, goals = summary_rows(per_split), accuracy_goals(per_split)
            add(f"{name}: over splits {args.splits}", {**summary, "goals": goals},
                summary_markdown(name, summary, goals))


def study_rows(task, args, learners, parser) -> dict:
    """The rows of ``args.study`` on one split of a task."""
    if args.study in TEXT_STUDIES and not isinstance(task.X_train[0], str):
        parser.error(f"{task.name} is not a text task; --study {args.study} fits textcw train's tfidf pipelines")
    if args.study == "train":
        rows = train_rows(task, learners, {k: v for k, v in (("folds", args.folds), ("method", args.method),
                                                              ("ngrams", args.ngrams), ("unseen", args.unseen),
                                                              ("intercept", args.intercept))
                                           if v is not None})
        if not args.no_sklearn:
            rows.update(sklearn_rows(task, ("LogisticRegression tuned",) if args.no_logistic else ()))
        return rows
    if args.study == "calibration":
        return calibration_rows(task, learners, (args.folds,) if args.folds else (2, 3, 5))
    if args.study == "fit-time":
        return fit_time_rows(task, learners)
    if args.study == "passes":
        return passes_rows(task, learners)
    if args.study == "multiclass":
        return multiclass_rows(task, learners)
    if args.study == "regularisation":
        return regularisation_rows(task, learners)
    return gap_rows(task, [n for n in learners if n in ("scw1", "scw2", "arow", "cw-stdev")])


def table(header: str, rows: dict, study: str) -> str:
    if study != "fit-time":
        return markdown(header, rows)
    return "\n".join([f"### {header}", "", "| learner and method | fit best (s) | fit median (s) | half-size fits (s) |",
                      "|---|---|---|---|"] + [f"| {k} | {r['best']:.3f} | {r['median']:.3f} | {r['half_fits']:.2f} |"
                                              for k, r in rows.items()])


if __name__ == "__main__":
    main()
