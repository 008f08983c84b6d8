"""Which scores to calibrate on: test ECE, log-loss, Brier and accuracy of ``Calibrated`` by
``record`` against the learners' own probabilities and scikit-learn's LogisticRegression.

Tasks and features are those of ``bench_out_of_box.py`` (digits standardised; synthetic-text
``N:10`` with TF-IDF), imported from it. For each learner (class defaults, 5 epochs, seed 0,
and ``textcw train``'s self-tuned defaults where the registry has some): its own probabilities
(Gaussian learners), ``Calibrated`` with ``record`` first / last / cross-fit (2 folds), and one
epoch with progressive validation. Reported: the numbers and the wall time of ``fit``.
Run by hand: ``python benchmarks/bench_calibration.py [--text-n N] [--learners cw-stdev,arow]
[--json out.json]``;
results in docs/quality.md "Which pass to calibrate on".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

import textcw
from textcw.atomic import atomic_write_text
from textcw.errors import TextcwError
from textcw.evaluation.metrics import classification_metrics
from textcw.learners.calibrated import Calibrated

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_out_of_box import digits_task, synthetic_text_task  # noqa: E402

LEARNERS = ("cw-stdev", "cw-var", "arow", "scw1", "pa1")
SELF_TUNED = {"cw-stdev": {"eta": "auto"}, "cw-var": {"eta": "auto"}, "scw1": {"eta": "auto", "C": "auto"}}


def measure(model, Xtr, ytr, Xte, yte) -> dict:
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(Xtr, ytr)
    seconds = time.perf_counter() - start
    predicted = model.predict(Xte)
    proba = model.predict_proba(Xte) if hasattr(model, "predict_proba") else None
    if proba is None:
        return {"accuracy": float(np.mean(predicted == yte)), "seconds": seconds}
    m = classification_metrics(yte, predicted, proba, model.classes_)
    return {"accuracy": m["accuracy"], "ece": m["expected_calibration_error"], "log_loss": m["log_loss"],
            "brier": m["brier_score"], "seconds": seconds,
            "argmax_agrees": float(np.mean(model.classes_[np.argmax(proba, axis=1)] == predicted))}


def rows_for(name, params, data) -> dict:
    rows = {"own": measure(textcw.make_learner(name, **params), *data)}
    for record in ("first", "last", "cross-fit"):
        rows[record] = measure(Calibrated(textcw.make_learner(name, **params), record=record), *data)
    rows["1 epoch"] = measure(Calibrated(textcw.make_learner(name, n_epochs=1, **params)), *data)
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--text-n", type=int, default=10_000)
    parser.add_argument("--learners", default=",".join(LEARNERS), help="comma-separated textcw learners")
    parser.add_argument("--json", help="also write every number to this JSON file")
    args = parser.parse_args(argv)
    learners = [name.strip() for name in args.learners.split(",") if name.strip()] or parser.error("no learner given")
    try:
        for name in learners:
            textcw.make_learner(name)
    except TextcwError as exc:  # an unknown name: the error lists the registered ones
        parser.error(str(exc))
    results = {}
    for heldout in (digits_task(), synthetic_text_task(args.text_n)):
        task = heldout.name
        features = heldout.features().fit(heldout.X_train)  # on the training split only
        data = (features.transform(heldout.X_train), heldout.y_train, features.transform(heldout.X_test),
                heldout.y_test)
        out = results[task] = {}
        for name in learners:
            out[name] = rows_for(name, {}, data)
            if name in SELF_TUNED:
                out[f"{name} self-tuned"] = rows_for(name, SELF_TUNED[name], data)
        out["LogisticRegression"] = {"own": measure(LogisticRegression(max_iter=1000), *data)}
        for learner, rows in out.items():
            for kind, r in rows.items():
                cells = " ".join(f"{k} {v:.3f}" for k, v in r.items() if k != "argmax_agrees")
                print(f"{task:24} {learner:20} {kind:10} {cells}", flush=True)
    if args.json:
        atomic_write_text(args.json, json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
