"""How many passes: would choosing ``n_epochs`` by the cross-fit halves' held-out accuracy help?

``bench_short_text.py --study passes``. For each learner, the features and settings ``textcw
train`` fits (``make_pipeline("tfidf", NAME, train_defaults=True)``: the chosen n-grams, the
intercept of short documents, the self-tuned values) are kept, and the learner is trained one
pass at a time up to ``MAX_PASSES`` passes, each pass over a new seeded shuffle:

- on each half of a stratified 2-fold split of the training documents, scoring the other half
  after every pass (its rows without the features the half never saw, as the calibration's
  halves score them: textcw.learners.unseen_features); the pass count with the best mean
  held-out accuracy of the two halves is "the halves' choice" (the fewer passes on a tie);
- on all the training documents, scoring the test documents after every pass.

Rows: the test accuracy after 5 passes (``textcw train``'s default), after the halves' choice,
and after the best pass count in hindsight (which no rule can know).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

import textcw
from textcw.learners.unseen_features import as_unseen, unit_length_rows

MAX_PASSES = 20
DEFAULT_PASSES = 5


def accuracy_by_pass(learner, X, y, X_scored, y_scored, labels, seed: int = 1) -> np.ndarray:
    """Accuracy on ``(X_scored, y_scored)`` after each of ``MAX_PASSES`` passes over ``(X, y)``."""
    rng = np.random.default_rng(seed)
    model = clone(learner).set_params(n_epochs=1)
    accuracies = []
    for _ in range(MAX_PASSES):
        order = rng.permutation(X.shape[0])
        model.partial_fit(X[order], y[order], classes=labels)
        accuracies.append(float(np.mean(model.predict(X_scored) == y_scored)))
    return np.array(accuracies)


def passes_rows(task, learners) -> dict:
    """The three rows of the module docstring for each learner."""
    rows = {}
    for name in learners:
        start = time.perf_counter()
        fitted = textcw.make_pipeline("tfidf", name, train_defaults=True)  # its n-grams, intercept, values
        fitted.fit(task.X_train, task.y_train)
        est = fitted.steps[-1][1]
        own = textcw.make_learner(name).get_params()
        values = {**est.get_params(), **dict(getattr(est, "tuned_params_", {}))}
        learner = textcw.make_learner(name, **{k: v for k, v in values.items() if k in own})
        X, X_test = fitted[:-1].transform(task.X_train), fitted[:-1].transform(task.X_test)
        y, y_test = np.asarray(task.y_train), np.asarray(task.y_test)
        labels = np.unique(y)
        unit_length = unit_length_rows(X)
        halves = np.zeros(MAX_PASSES)
        for fit_on, scored in StratifiedKFold(2, shuffle=True, random_state=0).split(np.zeros((len(y), 1)), y):
            held_out = as_unseen(X[scored], X[fit_on], unit_length=unit_length)
            halves += accuracy_by_pass(learner, X[fit_on], y[fit_on], held_out, y[scored], labels) / 2
        test = accuracy_by_pass(learner, X, y, X_test, y_test, labels)
        chosen = int(np.argmax(np.round(halves, 9))) + 1  # the first of equal ones: fewer passes
        best = int(np.argmax(test)) + 1
        seconds = time.perf_counter() - start
        for label, passes in ((f"{DEFAULT_PASSES} passes (textcw train)", DEFAULT_PASSES),
                              (f"{chosen} passes (the halves' choice)", chosen),
                              (f"{best} passes (best in hindsight)", best)):
            rows[f"{name} {label}"] = {"accuracy": float(test[passes - 1]), "passes": passes,
                                       "halves_accuracy": float(halves[passes - 1]), "seconds": seconds}
    return rows
