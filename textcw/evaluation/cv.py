"""``cv``: stratified, seeded k-fold cross-validation; mean and spread of the test error per task.

The papers' protocol (JMLR 2012 section 7.6): 10 folds, parameters fixed for all folds, the mean
test error over the folds reported. Every document of the pool is tested exactly once, so each
learner's per-document outcomes also feed McNemar's test. Featurizers are fitted per fold on the
training part; with label noise only the training labels are corrupted (AROW 2013 section 5.3).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from textcw.evaluation.data import TaskData, featurize, fold_indices
from textcw.metrics import label_metrics
from textcw.evaluation.noise import check_noise, corrupt_labels
from textcw.evaluation.report import Report
from textcw.evaluation.specs import LearnerSpec
from textcw.evaluation.training import build, error_percent, fit_timed, has_passes, predictions_per_pass

RIGHT, WRONG, UNTESTED = "1", "0", "."
CURVE_PASSES = 10


@dataclass
class CellResult(Report):
    """One learner on one task at one noise level.

    Attributes
    ----------
    task, learner : str
        Labels of the task and learner specs.
    noise : float
        Training label-noise rate.
    params : dict
        Parameters used on top of the spec's fixed ones (the tuned ones, if tuned).
    passes : int or None
        Passes over the training data (None for learners without passes).
    n_folds : int
        Folds planned (1 for the ``split`` protocol).
    fold_errors : list of float
        Test error (%) of each finished fold.
    train_seconds : list of float
        Training seconds of each finished fold.
    outcomes : str
        One character per evaluated document (the pool for ``cv``, the test split for
        ``split``): ``1`` right, ``0`` wrong, ``.`` not tested (an interrupted run).
    confidence : list of float
        With ``probabilities=True``: the probability the learner gave its predicted label, per
        evaluated document (``None`` where untested or the learner has no ``predict_proba``).
    curve : list of float
        With ``curves=True``: mean test error (%) over the folds after each pass 1..N.
    mean_error, std_error : float or None
        Mean and sample standard deviation of ``fold_errors``.
    fold_macro_f1 : list of float
        Macro-averaged F1 of each finished fold (:mod:`textcw.metrics`).
    mean_macro_f1 : float or None
        Mean of ``fold_macro_f1``.
    """

    task: str
    learner: str
    noise: float
    params: dict
    passes: int | None
    n_folds: int
    fold_errors: list[float] = field(default_factory=list)
    train_seconds: list[float] = field(default_factory=list)
    outcomes: str = ""
    confidence: list = field(default_factory=list)
    curve: list[float] = field(default_factory=list)
    mean_error: float | None = None
    std_error: float | None = None
    fold_macro_f1: list[float] = field(default_factory=list)
    mean_macro_f1: float | None = None

    @property
    def complete(self) -> bool:
        return len(self.fold_errors) == self.n_folds

    def summarise(self) -> None:
        self.mean_error = statistics.fmean(self.fold_errors) if self.fold_errors else None
        self.std_error = statistics.stdev(self.fold_errors) if len(self.fold_errors) > 1 else None
        self.mean_macro_f1 = statistics.fmean(self.fold_macro_f1) if self.fold_macro_f1 else None


@dataclass
class CVReport(Report):
    """Cross-validation of several learners on one task."""

    task: str
    protocol: str
    n_docs: int
    n_classes: int
    n_folds: int
    seed: int
    n_features: list[int] = field(default_factory=list)
    cells: list[CellResult] = field(default_factory=list)
    interrupted: bool = False


def cross_validate(task: TaskData, learners: list[LearnerSpec], *, folds: int = 10, seed: int = 0,
                   settings: dict | None = None, noise=(0.0,), curves: bool = False,
                   curve_passes: int = CURVE_PASSES, probabilities: bool = False,
                   progress: Callable[[int, int], None] | None = None) -> CVReport:
    """Cross-validate ``learners`` on ``task`` at each label-noise rate in ``noise``.

    ``settings`` maps ``(learner label, noise)`` to ``(params, passes)`` (e.g. from ``tune``);
    missing entries use the spec's parameters and the learner's default passes.
    ``progress(done, total)`` is called after each fitted model. Ctrl-C stops after the current
    model: the report keeps the folds that finished and says ``interrupted``.
    """
    levels = [check_noise(p) for p in noise]
    splits = fold_indices(task, folds, seed)
    n_eval = len(task.test_index) if task.test_index is not None else len(task)
    offset = task.test_index[0] if task.test_index is not None else 0
    report = CVReport(task.spec.label, task.spec.protocol, len(task), len(task.target_names),
                      len(splits), seed)
    cells = {}
    for p in levels:
        for spec in learners:
            params, passes = (settings or {}).get((spec.label, p), ({}, None))
            cell = CellResult(task.spec.label, spec.label, p, dict(params), passes, len(splits),
                              outcomes=UNTESTED * n_eval,
                              confidence=[None] * n_eval if probabilities else [])
            cells[spec.label, p] = cell
            report.cells.append(cell)
    curves_sum = {key: None for key in cells}
    labels, classes = task.labels, task.classes
    total, done = len(splits) * len(cells), 0
    try:
        for k, (train, test) in enumerate(splits):
            X_train, X_test = featurize(task, train, test)
            report.n_features.append(int(X_train.shape[1]))
            for p in levels:
                y_train = labels[train]
                if p > 0:
                    # seeded per fold and rate, so every learner sees the same noisy labels
                    y_train, _ = corrupt_labels(y_train, p, classes, np.random.RandomState([seed, k, int(p * 1e6)]))
                for spec in learners:
                    cell = cells[spec.label, p]
                    est = build(spec, cell.params, cell.passes, seed=seed)
                    if cell.passes is None and has_passes(est):
                        cell.passes = int(est.get_params()["n_epochs"])
                    if curves and has_passes(est):
                        predicted, seconds, errors, confidence = _run_with_curve(
                            est, X_train, y_train, X_test, labels[test], cell.passes, curve_passes, probabilities)
                        curves_sum[spec.label, p] = (errors if curves_sum[spec.label, p] is None
                                                     else np.add(curves_sum[spec.label, p], errors))
                    else:
                        seconds = fit_timed(est, X_train, y_train)
                        predicted = est.predict(X_test)
                        confidence = _confidence(est, X_test, predicted) if probabilities else None
                    _record(cell, test - offset, labels[test], predicted, seconds, confidence)
                    done += 1
                    if progress is not None:
                        progress(done, total)
    except KeyboardInterrupt:
        report.interrupted = True
    for key, cell in cells.items():
        if curves_sum[key] is not None and cell.fold_errors:
            cell.curve = (np.asarray(curves_sum[key]) / len(cell.fold_errors)).tolist()
        cell.summarise()
    return report


def _run_with_curve(est, X_train, y_train, X_test, y_test, passes, curve_passes, probabilities):
    """Train pass by pass; the fold's result (and its probabilities) is the model after ``passes``."""
    errors, chosen, proba = [], None, {}

    def at_pass(k, model):
        if probabilities and k == passes:
            proba["confidence"] = _confidence(model, X_test, model.predict(X_test))

    for k, predicted, seconds in predictions_per_pass(est, X_train, y_train, X_test, max(passes, curve_passes),
                                                      at_pass=at_pass):
        errors.append(error_percent(y_test, predicted))
        if k == passes:
            chosen = (predicted, seconds)
    return chosen[0], chosen[1], errors[:curve_passes], proba.get("confidence")


def _confidence(est, X_test, predicted):
    if not hasattr(est, "predict_proba"):
        return None
    proba = est.predict_proba(X_test)
    column = np.searchsorted(est.classes_, predicted)
    return proba[np.arange(len(predicted)), column]


def _record(cell: CellResult, positions, truth, predicted, seconds, confidence) -> None:
    # Build the new values first and assign them together, so Ctrl-C never leaves a cell with a
    # fold counted in one list and not in another.
    outcomes = list(cell.outcomes)
    right = np.asarray(predicted) == np.asarray(truth)
    for i, ok in zip(positions, right):
        outcomes[i] = RIGHT if ok else WRONG
    conf = list(cell.confidence)
    if confidence is not None:
        for i, c in zip(positions, confidence):
            conf[i] = round(float(c), 6)
    macro_f1 = label_metrics(truth, predicted)["macro_f1"]
    cell.outcomes, cell.confidence = "".join(outcomes), conf
    cell.fold_errors = [*cell.fold_errors, error_percent(truth, predicted)]
    cell.fold_macro_f1 = [*cell.fold_macro_f1, macro_f1]
    cell.train_seconds = [*cell.train_seconds, float(seconds)]
