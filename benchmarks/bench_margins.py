"""Which scores the temperature scales: raw decision scores, or scores over the weight length.

``Calibrated`` fits its temperature to honest scores of models that learned fewer documents than
the final one (two half-size models when cross-fitting). ``margin="auto"`` used to choose
between the raw scores and, for the Gaussian learners, the standardized ones, by the recorded
log-loss; it now chooses between the normalized scores (over each scoring model's weight
length, :func:`textcw.learners.temperature.normalized_scores`) and the standardized ones.
For the learners as ``textcw train`` fits them (the registry's train defaults, 5 epochs), this
prints test accuracy (the same for every margin: the model does not change), the margin each
rule chooses, and the test ECE and log-loss of both, on the tasks of ``bench_cross_fit.py``
(held-out tasks, text on textcw's ``tfidf``; ``newsgroups``, ``newsgroups:sci``, ``reuters``).

The earlier rule is rebuilt from public settings: ``Calibrated(margin="raw")`` and
``margin="standardized"`` fit the same model, and the one with the lower recorded log-loss is
what ``"auto"`` chose (raw on a tie).

Run by hand: ``python benchmarks/bench_margins.py [--tasks ...] [--learners ...] [--json out.json]``;
results in docs/quality.md "Normalized scores".
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from sklearn.base import clone

from textcw.atomic import atomic_write_text
from textcw.learners.calibrated import Calibrated

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cross_fit import CORPORA, HELDOUT, metrics, task_data  # noqa: E402
from bench_out_of_box import train_default_learner  # noqa: E402

LEARNERS = ("scw1", "scw2", "cw-stdev", "cw-var", "arow", "pa1")


def measure(name: str, data) -> dict:
    X, y, X_test, y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        now = Calibrated(train_default_learner(name)).fit(X, y)
        earlier = {margin: clone(now).set_params(margin=margin).fit(X, y)
                   for margin in ("raw", "standardized") if margin == "raw" or hasattr(now.estimator_, "margin_variance")}
    before = min(earlier.values(), key=lambda m: m.recorded_log_loss_[m.margin_])  # raw first: kept on a tie
    predicted = now.predict(X_test)
    return {
        "before": {**metrics(y_test, predicted, before.predict_proba(X_test), now.classes_), "margin": before.margin_},
        "now": {**metrics(y_test, predicted, now.predict_proba(X_test), now.classes_), "margin": now.margin_},
    }


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(HELDOUT + CORPORA))
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--text-n", type=int, default=10_000, help="training documents of synthetic-text")
    parser.add_argument("--json", help="also write every number to this JSON file")
    args = parser.parse_args(argv)
    results = {}
    print("| task | learner | accuracy | ECE: earlier auto / now | log-loss: earlier / now | margin: earlier / now |")
    print("| --- | --- | --- | --- | --- | --- |")
    for task in args.tasks.split(","):
        data = task_data(task, args.text_n)
        for name in args.learners.split(","):
            r = results.setdefault(task, {})[name] = measure(name, data)
            b, n = r["before"], r["now"]
            print(f"| {task} | {name} | {n['accuracy']:.4f} | {b['ece']:.4f} / {n['ece']:.4f} | "
                  f"{b['log_loss']:.3f} / {n['log_loss']:.3f} | {b['margin']} / {n['margin']} |", flush=True)
    if args.json:
        atomic_write_text(args.json, json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
