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

Rows, each with the test accuracy of the learner alone (its ``predict``, without the pipeline's
labels for documents with no known word, so that both rows are the same kind of prediction):
``self-tuned`` (``textcw train``'s values) and ``grid search`` (its chosen factor in the label,
and the seconds of the search, which come on top of ``textcw train``'s own time).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

import textcw

# The regularisation parameter of each learner and the factors searched around textcw train's
# value, from the strongest regularisation to the weakest: SCW's and PA's C caps the step
# (smaller is stronger), AROW's r is added to the margin variance (larger is stronger).
AXES = {"scw1": ("C", (0.01, 0.1, 1.0, 10.0)), "scw2": ("C", (0.01, 0.1, 1.0, 10.0)),
        "pa1": ("C", (0.01, 0.1, 1.0, 10.0)), "pa2": ("C", (0.01, 0.1, 1.0, 10.0)),
        "arow": ("r", (100.0, 10.0, 1.0, 0.1))}
FOLDS = 3


def regularisation_rows(task, learners) -> dict:
    """The two rows of the module docstring for each learner of ``learners`` in :data:`AXES`."""
    rows = {}
    for name in learners:
        if name not in AXES:
            continue
        param, factors = AXES[name]
        fitted = textcw.make_pipeline("tfidf", name, train_defaults=True).fit(task.X_train, task.y_train)
        learner = fitted.steps[-1][1]
        tuned = dict(getattr(learner, "tuned_params_", {}))
        value = tuned.get(param, learner.get_params()[param])
        X, X_test = fitted[:-1].transform(task.X_train), fitted[:-1].transform(task.X_test)
        y, y_test = np.asarray(task.y_train), np.asarray(task.y_test)
        start = time.perf_counter()
        search = GridSearchCV(clone(learner).set_params(**tuned), {param: [value * f for f in factors]},
                              cv=FOLDS).fit(X, y)
        seconds = time.perf_counter() - start
        chosen = search.best_params_[param]
        rows[f"{name} self-tuned"] = {"accuracy": float(np.mean(learner.predict(X_test) == y_test)),
                                      param: float(value), "seconds": None}
        rows[f"{name} grid search of {param} (chose x{chosen / value:g})"] = {
            "accuracy": float(np.mean(search.predict(X_test) == y_test)), param: float(chosen),
            "factor": float(chosen / value), "cv_accuracy": float(search.best_score_), "seconds": seconds}
    return rows
