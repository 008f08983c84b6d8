"""Reliability diagrams of the short-text tasks: ``textcw train``'s probabilities (the learner
with the intercept short documents give it, calibrated on held-out rows scored as unseen
documents), the same without the intercept, and the tuned LogisticRegression.

For each task of :mod:`short_text_data`, one figure (``reliability-short-text-TASK.png``): the
predicted label's probability against how often it is right, in ten bins, with the documents per
bin below (:func:`textcw.evaluation.plot.plot_reliability`). Rows:

- ``LEARNER, textcw train``: ``make_pipeline("tfidf", LEARNER, train_defaults=True)``, what
  ``textcw train --learner LEARNER`` fits (the documents choose the n-grams; the calibration's
  halves score held-out rows without the words they never saw: textcw.learners.unseen_features;
  a Gaussian learner fits an intercept: textcw.learners.calibrated_pipeline.with_chosen_intercept);
- ``LEARNER, no intercept``: the same pipeline with ``intercept="given"`` (the learner's default,
  none), as ``textcw train`` fitted it before;
- ``LogisticRegression tuned``: benchmarks/bench_short_text.py's search (3-fold
  ``GridSearchCV`` over C and uni/bigrams of sublinear TF-IDF), left out with ``--no-logistic``.

Run by hand: ``python benchmarks/short_text_reliability.py [--tasks a,b] [--learner scw1]
[--out docs/figures] [--no-logistic] [--max-per-class N]``. Results in docs/quality.md "Accuracy
and time" (many classes of short text).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_short_text import CACHE, TUNED, load_task  # noqa: E402
from heldout_data import WORD_GRID  # noqa: E402
from short_text_data import SHORT_TEXT_TASKS  # noqa: E402

import textcw  # noqa: E402
from textcw.evaluation.plot import plot_reliability  # noqa: E402


def _points(model, task) -> tuple[np.ndarray, np.ndarray]:
    """``(confidence, correct)`` per test document: the predicted label's probability."""
    proba = model.predict_proba(task.X_test)
    return proba.max(axis=1), model.classes_[np.argmax(proba, axis=1)] == np.asarray(task.y_test)


def series(task, learner: str, logistic: bool) -> dict:
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    out = {}
    for label, intercept in ((f"{learner}, textcw train", "auto"), (f"{learner}, no intercept", "given")):
        model = textcw.make_pipeline("tfidf", learner, train_defaults=True).set_params(intercept=intercept)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[label] = _points(model.fit(task.X_train, task.y_train), task)
    if logistic:
        estimator, grid = TUNED["LogisticRegression tuned"]
        search = GridSearchCV(Pipeline([("features", task.features()), ("model", clone(estimator))]),
                              {**{f"model__{k}": v for k, v in grid.items()},
                               **{f"features__{k}": v for k, v in WORD_GRID.items()}}, cv=3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out["LogisticRegression tuned"] = _points(search.fit(task.X_train, task.y_train), task)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(SHORT_TEXT_TASKS))
    parser.add_argument("--learner", default="scw1")
    parser.add_argument("--out", type=Path, default=Path("docs/figures"))
    parser.add_argument("--no-logistic", action="store_true", help="leave out the tuned LogisticRegression")
    parser.add_argument("--max-per-class", type=int, default=None, help="at most this many documents a class")
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder for the built tasks (JSON)")
    args = parser.parse_args(argv)
    for name in (t.strip() for t in args.tasks.split(",") if t.strip()):
        if name not in SHORT_TEXT_TASKS:
            parser.error(f"unknown task {name}; choose among {', '.join(SHORT_TEXT_TASKS)}")
        task = load_task(name, args.max_per_class, args.cache)
        drawn = series(task, args.learner, not args.no_logistic)
        for label, (confidence, correct) in drawn.items():
            print(f"{name}  {label}: accuracy {correct.mean():.4f}, mean probability {confidence.mean():.4f}")
        path = plot_reliability(drawn, args.out / f"reliability-short-text-{name}.png",
                                title=f"{name}: {len(task.y_train):,} training documents",
                                xlabel="probability of the predicted label (calibrated, as textcw train fits it)")
        print(f"wrote {path}", flush=True)


if __name__ == "__main__":
    main()
