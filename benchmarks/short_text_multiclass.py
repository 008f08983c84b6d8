"""Which multi-class update: top-1 or the k-best parallel update, and could either rule choose?

``bench_short_text.py --study multiclass``. For each learner, ``textcw train``'s pipeline
(``make_pipeline("tfidf", NAME, train_defaults=True)``: the chosen n-grams, the intercept of short
documents, the self-tuned values, calibrated probabilities) is fitted three times, with the
top-1 update (every learner's default, given outright here) and with the k-best parallel update of Crammer, Dredze and Kulesza
("Multi-class confidence weighted algorithms", EMNLP 2009, section 5: ``k`` single-pair updates
from the same start, averaged) for ``k`` in ``K_BEST``. Each row reports the test accuracy and
mean confidence, and what two rules that could choose the update per task would see:

- ``online_error``: the share of first-pass mistakes of the self-tuned candidate that won
  (progressive validation, what self-tuning minimises; for a learner without ``"auto"`` values,
  its own first pass);
- ``halves_accuracy``: the mean held-out accuracy of the two halves of a stratified 2-fold split
  of the training documents, each fitted as ``textcw train`` fits it with raw probabilities.

The rows ``... chosen by online error`` and ``... chosen by the halves`` repeat the row each rule
picks (the first on a tie).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.model_selection import StratifiedKFold

import textcw

K_BEST = (3, 5)


def _settings(n_classes: int):
    """Top-1, and the parallel update for each ``k`` of ``K_BEST`` below ``n_classes``."""
    # top-1 given outright: otherwise hard short documents would choose the parallel update
    # (textcw.learners.update_choice)
    return [("top-1", {"multiclass": "top1"})] + [(f"par k={k}", {"multiclass": "par", "k": k})
                                                  for k in K_BEST if k < n_classes]


def _online_error(est, n: int) -> float:
    tuning = getattr(est, "tuning_", None)
    if tuning:
        return float(min(tuning["online_error"]))
    return float(est.mistakes_[0]) / n


def _halves_accuracy(name, params, X, y) -> float:
    accuracies = []
    for fit_on, scored in StratifiedKFold(2, shuffle=True, random_state=0).split(np.zeros((len(y), 1)), y):
        model = textcw.make_pipeline("tfidf", name, train_defaults=True, probability="raw", **params)
        model.fit([X[i] for i in fit_on], y[fit_on])
        accuracies.append(float(np.mean(model.predict([X[i] for i in scored]) == y[scored])))
    return float(np.mean(accuracies))


def multiclass_rows(task, learners) -> dict:
    """The rows of the module docstring for each learner."""
    rows = {}
    y, y_test = np.asarray(task.y_train), np.asarray(task.y_test)
    for name in learners:
        cells = {}
        for label, params in _settings(len(np.unique(y))):
            start = time.perf_counter()
            model = textcw.make_pipeline("tfidf", name, train_defaults=True, **params).fit(task.X_train, y)
            seconds = time.perf_counter() - start
            proba = model.predict_proba(task.X_test)
            cells[label] = {"accuracy": float(np.mean(model.predict(task.X_test) == y_test)),
                            "confidence": float(proba.max(axis=1).mean()),
                            "online_error": _online_error(model.steps[-1][1], len(y)),
                            "halves_accuracy": _halves_accuracy(name, params, task.X_train, y),
                            "seconds": seconds}
            rows[f"{name} {label}"] = cells[label]
        labels = list(cells)
        by_error = min(labels, key=lambda k: (round(cells[k]["online_error"], 12), labels.index(k)))
        by_halves = max(labels, key=lambda k: (round(cells[k]["halves_accuracy"], 12), -labels.index(k)))
        rows[f"{name} {by_error} chosen by online error"] = dict(cells[by_error])
        rows[f"{name} {by_halves} chosen by the halves"] = dict(cells[by_halves])
    return rows
