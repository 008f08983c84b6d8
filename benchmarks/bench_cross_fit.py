"""Calibrating self-tuned learners: the cross-fitted halves re-tuned, or with the final values.

``Calibrated(record="cross-fit")`` fits its temperature to the scores two half-size models give
the halves they did not learn. For a learner with ``"auto"`` values (``textcw train``'s
defaults: ``eta`` for CW, ``eta`` and ``C`` for SCW), the halves used to tune their own values
on half the documents; they now take the values the final fit chose (``tuned_params_``).
For the learners as ``textcw train`` fits them (the registry's train defaults, 5 epochs), this
prints test accuracy (the same both ways: the final model is unchanged), ECE and log-loss of
both temperatures, and the values the final fit and each re-tuned half chose, on

- the held-out tasks of ``bench_out_of_box.py`` (text with textcw's default ``tfidf``
  featurizer, the others with their own features), and
- the papers' corpora under ``$TEXTCW_DATA`` (``newsgroups``, ``newsgroups:sci``, ``reuters``),
  with ``tfidf``.

The re-tuned halves are rebuilt here as the earlier code fitted them (the same folds, each half
the learner's own ``fit``, the temperature from the same ``fit_temperature``).

Run by hand: ``python benchmarks/bench_cross_fit.py [--tasks ...] [--learners ...] [--json out.json]``;
results in docs/quality.md "Calibrating self-tuned learners".
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

import textcw
from textcw.atomic import atomic_write_text
from textcw.evaluation.metrics import classification_metrics
from textcw.learners.calibrated import CROSS_FIT_FOLDS, Calibrated
from textcw.learners.temperature import fit_temperature
from textcw.pipeline import load_corpus

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_out_of_box import task_loaders, train_default_learner  # noqa: E402

LEARNERS = ("scw2", "scw1", "cw-stdev", "cw-var", "arow")
HELDOUT = ("sotu-party", "synthetic-text", "bbc-news", "spamassassin", "chatterbot-languages", "digits",
           "breast-cancer")
CORPORA = ("newsgroups", "newsgroups:sci", "reuters")


def task_data(task: str, text_n: int):
    """``(X_train, y_train, X_test, y_test)``: CSR matrices (features fitted on the training split)."""
    if task in CORPORA:
        train, test = load_corpus(task, "train"), load_corpus(task, "test")
        docs, y, test_docs, y_test = list(train.data), np.asarray(train.labels), list(test.data), np.asarray(test.labels)
        features = textcw.make_featurizer("tfidf")
    else:
        held = task_loaders(text_n)[task]()
        docs, y, test_docs, y_test = held.X_train, np.asarray(held.y_train), held.X_test, np.asarray(held.y_test)
        features = textcw.make_featurizer("tfidf") if isinstance(docs[0], str) else held.features()
    X = features.fit_transform(docs, y)
    return sp.csr_matrix(X), y, sp.csr_matrix(features.transform(test_docs)), y_test


def retuned_halves(learner, X, y, labels):
    """The earlier cross-fit: each half a clone of the learner fitted (and self-tuned) alone.
    Returns the temperature and the values each half chose."""
    seed = learner.get_params(deep=False).get("random_state", 0)
    gaussian = hasattr(learner, "margin_variance")
    shape = (len(y),) if len(labels) == 2 else (len(y), len(labels))
    scores, variances, chosen = np.zeros(shape), np.zeros(shape), []
    folds = StratifiedKFold(CROSS_FIT_FOLDS, shuffle=True, random_state=seed)
    for fitted_on, scored in folds.split(np.zeros((len(y), 1)), np.searchsorted(labels, y)):
        half = clone(learner).fit(X[fitted_on], y[fitted_on])
        chosen.append(dict(getattr(half, "tuned_params_", {})))
        scores[scored] = half.decision_function(X[scored])
        if gaussian:
            variances[scored] = half.margin_variance(X[scored])
    scaling = fit_temperature(scores, variances if gaussian else None, np.searchsorted(labels, y),
                              margin="auto", record="cross-fit")
    return scaling, chosen


def metrics(y_test, predicted, proba, classes) -> dict:
    m = classification_metrics(y_test, predicted, proba, classes)
    return {"accuracy": m["accuracy"], "ece": m["expected_calibration_error"], "log_loss": m["log_loss"]}


def measure(name: str, data) -> dict:
    X, y, X_test, y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        now = Calibrated(train_default_learner(name)).fit(X, y)
        final = clone(now.learner).fit(X, y)
        before, chosen = retuned_halves(now.learner, X, y, now.classes_)
    predicted = now.predict(X_test)
    tuned = {k: round(float(v), 4) for k, v in getattr(now.estimator_, "tuned_params_", {}).items()}
    return {
        "before": {**metrics(y_test, predicted, before.predict_proba(final, X_test), now.classes_),
                   "margin": before.margin},
        "now": {**metrics(y_test, predicted, now.predict_proba(X_test), now.classes_), "margin": now.margin_},
        "final_values": tuned,
        "halves_retuned": [{k: round(float(v), 4) for k, v in c.items()} for c in chosen],
    }


def arguments(argv, description: str, learners) -> argparse.Namespace:
    """The options this benchmark and ``bench_margins.py`` share: tasks, learners, size, JSON."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--tasks", default=",".join(HELDOUT + CORPORA))
    parser.add_argument("--learners", default=",".join(learners))
    parser.add_argument("--text-n", type=int, default=10_000, help="training documents of synthetic-text")
    parser.add_argument("--json", help="also write every number to this JSON file")
    return parser.parse_args(argv)


def run_table(args, measure, header: str, last_column) -> None:
    """Measure every task x learner, print a table row each (``last_column(result)`` ends it),
    and write the results as JSON if asked."""
    results = {}
    print(f"| task | learner | accuracy | {header} |")
    print("| --- | --- | --- | --- | --- | --- |")
    for task in args.tasks.split(","):
        data = task_data(task, args.text_n)
        for name in args.learners.split(","):
            r = results.setdefault(task, {})[name] = measure(name, data)
            b, n = r["before"], r["now"]
            print(f"| {task} | {name} | {n['accuracy']:.4f} | {b['ece']:.4f} / {n['ece']:.4f} | "
                  f"{b['log_loss']:.3f} / {n['log_loss']:.3f} | {last_column(r)} |", flush=True)
    if args.json:
        atomic_write_text(args.json, json.dumps(results, indent=1) + "\n")


def main(argv=None) -> None:
    args = arguments(argv, __doc__.splitlines()[0], LEARNERS)
    run_table(args, measure, "ECE: halves re-tuned / final values | log-loss: re-tuned / final | "
              "values: final; halves re-tuned",
              lambda r: f"{r['final_values'] or '-'}; {r['halves_retuned'] if r['final_values'] else '-'}")

if __name__ == "__main__":
    main()
