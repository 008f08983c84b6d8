"""Out of the box on data nothing was tuned on: textcw's defaults, self-tuned and calibrated
learners against scikit-learn's linear models with their defaults and with a small C grid.

Tasks (neither is among the papers' corpora, and no test tunes on them):

- ``digits``: scikit-learn's bundled ``load_digits`` (1,797 8x8 images, 10 classes, no
  download), a stratified 70/30 split (seed 0), pixels standardised (``StandardScaler`` fitted
  on the training split) for every model;
- ``synthetic-text``: textcw's seeded ``synthetic-text:N:10`` corpus (Zipf vocabulary, hidden
  linear labels, 5% label noise; N = 10,000 training and 2,000 test documents by default), TF-IDF
  features (``TfidfVectorizer()`` fitted on the training split) for every model.

Models: each textcw learner (``cw-var``, ``cw-stdev``, ``arow``, ``scw1``, ``pa1``) with its
defaults; ``SelfTuning`` (default grid); ``Calibrated`` (defaults, first-pass scores);
self-tuned then calibrated (the winner's values, calibrated; its time is the sum of both fits).
scikit-learn: ``LinearSVC``, ``LogisticRegression`` and ``SGDClassifier`` with defaults, and
``LinearSVC``/``LogisticRegression`` tuned by ``GridSearchCV`` (3 folds, C in
{0.01, 0.1, 1, 10} / {0.1, 1, 10, 100}; the time includes the search and the refit).

Reported: accuracy, macro-F1, ECE (10 bins), log-loss and Brier score
(:mod:`textcw.evaluation.metrics`; none for models without probabilities) and the wall time of
``fit``. Run by hand: ``python benchmarks/bench_out_of_box.py [--text-n N] [--json out.json]``;
results in docs/quality.md.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import textcw
from textcw._atomic import atomic_write_text
from textcw.evaluation.metrics import classification_metrics
from textcw.learners.calibrated import Calibrated
from textcw.learners.selftune import SelfTuning
from textcw.pipeline import load_corpus

LEARNERS = ("cw-var", "cw-stdev", "arow", "scw1", "pa1")


def digits_task():
    X, y = load_digits(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, stratify=y, random_state=0)
    scaler = StandardScaler().fit(Xtr)
    return scaler.transform(Xtr), ytr, scaler.transform(Xte), yte


def text_task(n: int):
    train = load_corpus(f"synthetic-text:{n}:10", "train")
    test = load_corpus(f"synthetic-text:{n}:10", "test")
    vectorizer = TfidfVectorizer().fit(train.data)
    return vectorizer.transform(train.data), np.asarray(train.target), vectorizer.transform(test.data), \
        np.asarray(test.target)


def timed_fit(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence and variance-floor warnings: reported via numbers
        model.fit(X, y)
    return model, time.perf_counter() - start


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


def textcw_rows(Xtr, ytr, Xte, yte):
    rows = {}
    for name in LEARNERS:
        model, t = timed_fit(textcw.make_learner(name), Xtr, ytr)
        rows[f"{name} default"] = score(model, Xte, yte, t)
        tuned, t_tuned = timed_fit(SelfTuning(textcw.make_learner(name)), Xtr, ytr)
        rows[f"{name} self-tuned"] = score(tuned, Xte, yte, t_tuned, chosen=tuned.best_params_,
                                           online_error=tuned.online_error_.round(4).tolist())
        calibrated, t_cal = timed_fit(Calibrated(textcw.make_learner(name)), Xtr, ytr)
        rows[f"{name} calibrated"] = score(calibrated, Xte, yte, t_cal, temperature=calibrated.temperature_,
                                           margin=calibrated.margin_)
        both, t_both = timed_fit(Calibrated(textcw.make_learner(name, **tuned.best_params_)), Xtr, ytr)
        rows[f"{name} self-tuned + calibrated"] = score(both, Xte, yte, t_tuned + t_both,
                                                        temperature=both.temperature_, margin=both.margin_)
        # the cost of self-tuning against fitting every candidate separately
        separate = sum(timed_fit(textcw.make_learner(name, **c), Xtr, ytr)[1] for c in tuned.candidates_)
        rows[f"{name} self-tuned"]["seconds_candidates_separately"] = separate
    return rows


def sklearn_rows(Xtr, ytr, Xte, yte):
    rows = {}
    for label, model in (("LinearSVC default", LinearSVC()),
                         ("LogisticRegression default", LogisticRegression(max_iter=1000)),
                         ("SGDClassifier default", SGDClassifier(random_state=0)),
                         ("LinearSVC tuned", GridSearchCV(LinearSVC(), {"C": [0.01, 0.1, 1, 10]}, cv=3)),
                         ("LogisticRegression tuned", GridSearchCV(LogisticRegression(max_iter=1000),
                                                                   {"C": [0.1, 1, 10, 100]}, cv=3))):
        fitted, t = timed_fit(model, Xtr, ytr)
        extra = {"chosen": fitted.best_params_} if hasattr(fitted, "best_params_") else {}
        rows[label] = score(fitted, Xte, yte, t, **extra)
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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text-n", type=int, default=10_000, help="training documents of the text task")
    parser.add_argument("--json", help="also write every number to this JSON file")
    args = parser.parse_args(argv)
    # compile (or load) the numba kernels before anything is timed
    warm_X, warm_y = digits_task()[:2]
    for name in LEARNERS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            textcw.make_learner(name, n_epochs=1).fit(warm_X[:50], warm_y[:50])
    results = {}
    for task, data in (("digits", digits_task()), (f"synthetic-text:{args.text_n}:10", text_task(args.text_n))):
        Xtr, ytr, Xte, yte = data
        rows = {**textcw_rows(Xtr, ytr, Xte, yte), **sklearn_rows(Xtr, ytr, Xte, yte)}
        results[task] = {"n_train": int(Xtr.shape[0]), "n_test": int(Xte.shape[0]),
                         "n_features": int(Xtr.shape[1]), "rows": rows}
        print(markdown(task, rows), flush=True)
        print()
    if args.json:
        atomic_write_text(args.json, json.dumps(results, indent=1, default=str))


if __name__ == "__main__":
    main()
