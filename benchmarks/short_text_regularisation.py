"""How strongly to regularise: the first pass's choice against a grid search over all the passes.

``bench_short_text.py --study regularisation``. Self-tuning ranks its candidates by their
mistakes over the first pass (progressive validation, :mod:`textcw.learners.selftune`), before
any document is seen twice; what strong regularisation buys (keeping the later passes from
fitting the noise of the labels) cannot show there. This study measures what a choice that sees
every pass would give. For each learner with a regularisation parameter (:data:`AXES`), the
features and settings ``textcw train`` fits are kept (``make_pipeline("tfidf", NAME,
train_defaults=True)``: the chosen n-grams, the intercept of short documents, the self-tuned
values), and scikit-learn's ``GridSearchCV`` (3 stratified folds, accuracy, every fit with the
learner's five passes) chooses that parameter among ``textcw train``'s value of it (self-tuned
for SCW, the class default for AROW and PA) times :data:`AXES`' factors, the other values kept.

A cheaper choice is measured beside it, ``halves' check``: the two half-size models of a
stratified 2-fold split (the split ``textcw train``'s calibration fits its halves on, each
scoring the other half's rows without the features it never saw) are fitted with ``textcw
train``'s value and with a value ten times stronger (:data:`AXES`), and the stronger value is
kept only when it makes fewer held-out mistakes and McNemar's test on the same documents
(:func:`textcw.evaluation.mcnemar.mcnemar_test`, the papers' significance test) puts the
difference below ``p =`` :data:`CHECK_P`, so that a tie on clean labels keeps the value as it is. It costs two more half-size fits, and a refit of the
final model when the stronger value is kept.

Rows, each with the test accuracy of the learner alone (its ``predict``, without the pipeline's
labels for documents with no known word, so that the rows are the same kind of prediction):
``self-tuned`` (``textcw train``'s values), ``grid search`` (its chosen factor in the label,
and the seconds of the search, which come on top of ``textcw train``'s own time) and
``halves' check`` (whether it kept the stronger value, and its seconds).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold

import textcw
from textcw.evaluation.mcnemar import mcnemar_test
from textcw.learners.unseen_features import as_unseen, unit_length_rows

# The regularisation parameter of each learner, the factors the grid search tries around textcw
# train's value (from the strongest regularisation to the weakest), and the factor that makes it
# ten times stronger for the halves' check: SCW's and PA's C caps the step (smaller is
# stronger), AROW's r is added to the margin variance (larger is stronger).
_C = ("C", (0.01, 0.1, 1.0, 10.0), 0.1)
AXES = {"scw1": _C, "scw2": _C, "pa1": _C, "pa2": _C, "arow": ("r", (100.0, 10.0, 1.0, 0.1), 10.0)}
FOLDS = 3
CHECK_P = 0.05  # the halves' check keeps the stronger value below this McNemar p-value


def halves_check(learner, param: str, value: float, stronger: float, X, y, seed: int) -> tuple[bool, dict]:
    """Whether the half-size models with ``param=stronger`` make fewer held-out mistakes than
    with ``value``, significantly (McNemar's test, ``p <`` :data:`CHECK_P`); with the two
    held-out accuracies and the p-value."""
    labels = np.unique(y)
    unit_length = unit_length_rows(X)
    correct = {value: np.zeros(len(y), dtype=bool), stronger: np.zeros(len(y), dtype=bool)}
    folds = StratifiedKFold(2, shuffle=True, random_state=seed)
    for fit_on, scored in folds.split(np.zeros((len(y), 1)), np.searchsorted(labels, y)):
        held_out = as_unseen(X[scored], X[fit_on], unit_length=unit_length)
        for v in correct:
            half = clone(learner).set_params(**{param: v}).fit(X[fit_on], y[fit_on])
            correct[v][scored] = half.predict(held_out) == y[scored]
    test = mcnemar_test(correct[value], correct[stronger])  # c: documents only the stronger value gets right
    return test.c > test.b and test.p_value < CHECK_P, {
        "held_out_accuracy": float(correct[value].mean()),
        "held_out_accuracy_stronger": float(correct[stronger].mean()), "p_value": test.p_value}


def regularisation_rows(task, learners) -> dict:
    """The three rows of the module docstring for each learner of ``learners`` in :data:`AXES`."""
    rows = {}
    for name in learners:
        if name not in AXES:
            continue
        param, factors, stronger_by = AXES[name]
        fitted = textcw.make_pipeline("tfidf", name, train_defaults=True).fit(task.X_train, task.y_train)
        learner = fitted.steps[-1][1]
        tuned = dict(getattr(learner, "tuned_params_", {}))
        value = tuned.get(param, learner.get_params()[param])
        X, X_test = fitted[:-1].transform(task.X_train), fitted[:-1].transform(task.X_test)
        y, y_test = np.asarray(task.y_train), np.asarray(task.y_test)
        settings = clone(learner).set_params(**tuned)  # textcw train's values, fixed
        start = time.perf_counter()
        search = GridSearchCV(settings, {param: [value * f for f in factors]}, cv=FOLDS).fit(X, y)
        seconds = time.perf_counter() - start
        chosen = search.best_params_[param]
        rows[f"{name} self-tuned"] = {"accuracy": float(np.mean(learner.predict(X_test) == y_test)),
                                      param: float(value), "seconds": None}
        rows[f"{name} grid search of {param} (chose x{chosen / value:g})"] = {
            "accuracy": float(np.mean(search.predict(X_test) == y_test)), param: float(chosen),
            "factor": float(chosen / value), "cv_accuracy": float(search.best_score_), "seconds": seconds}
        stronger = value * stronger_by
        start = time.perf_counter()
        seed = learner.get_params().get("random_state") or 0
        keep, check = halves_check(settings, param, value, stronger, X, y, seed)
        final = clone(settings).set_params(**{param: stronger}).fit(X, y) if keep else learner
        seconds = time.perf_counter() - start
        rows[f"{name} halves' check ({f'chose x{stronger_by:g}' if keep else 'kept it'})"] = {
            "accuracy": float(np.mean(final.predict(X_test) == y_test)), param: float(stronger if keep else value),
            **check, "seconds": seconds}
    return rows
