"""``cv``: stratified, seeded k-fold cross-validation; mean and spread of the test error per task.

The papers' protocol (JMLR 2012 section 7.6): 10 folds, parameters fixed for all folds, the mean
test error over the folds reported. Every document of the pool is tested exactly once, so each
learner's per-document outcomes also feed McNemar's test. Featurizers are fitted per fold on the
training part; with label noise only the training labels are corrupted (AROW 2013 section 5.3).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textcw.errors import PluginError, TextcwError
from textcw.evaluation.data import TaskData, featurize, fold_indices
from textcw.evaluation.folds import NOT_APPLICABLE, RIGHT, UNTESTED, WRONG, Fold, check_splits
from textcw.metrics import label_metrics
from textcw.evaluation.noise import check_noise, corrupt_labels
from textcw.evaluation.report import Report
from textcw.evaluation.specs import LearnerSpec
from textcw.evaluation.training import build, error_percent, fit_timed, has_passes, predictions_per_pass

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
    metrics : dict
        ``{metric name: [value of each finished fold]}`` for the metrics the run was given
        (:class:`textcw.evaluation.contract.Metric`); a value is a number, a ``{class:
        number}`` mapping, None where the learner lacks what the metric needs, or ``"n/a"``
        (:data:`~textcw.evaluation.contract.NOT_APPLICABLE`) where the metric does not apply.
    row : str
        The cell's row within its task when a design has several (a learning curve's training
        size, a combination's number of shards; see the report's ``row_title``); empty otherwise.
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
    metrics: dict[str, list] = field(default_factory=dict)
    row: str = ""

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
                   progress: Callable[[int, int], None] | None = None, splits: list | None = None,
                   metrics: Mapping[str, Any] | None = None) -> CVReport:
    """Cross-validate ``learners`` on ``task`` at each label-noise rate in ``noise``.

    ``settings`` maps ``(learner label, noise)`` to ``(params, passes)`` (e.g. from ``tune``);
    missing entries use the spec's parameters and the learner's default passes.
    ``progress(done, total)`` is called after each fitted model. Ctrl-C stops after the current
    model: the report keeps the folds that finished and says ``interrupted``. ``splits``
    replaces the stratified folds (``[(train, test), ...]``, from a design's splitter); ``metrics``
    (``{name: Metric}``) are computed on every fold into each cell's ``metrics``.
    """
    levels = [check_noise(p) for p in noise]
    splits = fold_indices(task, folds, seed) if splits is None else check_splits(task, splits)
    metrics = dict(metrics or {})
    needs = set().union(*(m.needs for m in metrics.values())) if metrics else set()
    n_eval = len(task.test_index) if task.test_index is not None else len(task)
    offset = task.test_index[0] if task.test_index is not None else 0
    report = CVReport(task.spec.label, task.spec.protocol, len(task), len(task.target_names),
                      len(splits), seed)
    cells = _empty_cells(task, learners, levels, settings, len(splits), n_eval, probabilities, metrics)
    report.cells.extend(cells.values())
    curves_sum = {key: None for key in cells}
    labels, classes = task.labels, task.classes
    total, done = len(splits) * len(cells), 0
    try:
        for k, (train, test) in enumerate(splits):
            X_train, X_test = featurize(task, train, test)
            report.n_features.append(int(X_train.shape[1]))
            for p in levels:
                y_train = _training_labels(labels[train], p, classes, seed, k)
                for spec in learners:
                    errors = _test_learner(
                        cells[spec.label, p], spec, X_train, y_train, X_test, labels[test], test - offset, seed=seed,
                        curve_passes=curve_passes if curves else None, probabilities=probabilities,
                        metrics=metrics, needs=needs, classes=classes, task_label=task.spec.label)
                    if errors is not None:
                        key = spec.label, p
                        curves_sum[key] = errors if curves_sum[key] is None else np.add(curves_sum[key], errors)
                    done += 1
                    if progress is not None:
                        progress(done, total)
    except KeyboardInterrupt:
        report.interrupted = True
    _summarise(cells, curves_sum)
    return report


def _empty_cells(task: TaskData, learners: list[LearnerSpec], levels: list, settings: dict | None, n_folds: int,
                 n_eval: int, probabilities: bool, metrics: dict) -> dict:
    """``{(learner label, noise): CellResult}`` with nothing tested yet, in report order."""
    cells = {}
    for p in levels:
        for spec in learners:
            params, passes = (settings or {}).get((spec.label, p), ({}, None))
            cells[spec.label, p] = CellResult(task.spec.label, spec.label, p, dict(params), passes, n_folds,
                                              outcomes=UNTESTED * n_eval,
                                              confidence=[None] * n_eval if probabilities else [],
                                              metrics={name: [] for name in metrics})
    return cells


def _training_labels(y_train, p: float, classes, seed: int, k: int):
    """The training labels of fold ``k`` at label-noise rate ``p`` (AROW 2013 section 5.3)."""
    if p > 0:
        # seeded per fold and rate, so every learner sees the same noisy labels
        y_train, _ = corrupt_labels(y_train, p, classes, np.random.RandomState([seed, k, int(p * 1e6)]))
    return y_train


def _test_learner(cell: CellResult, spec: LearnerSpec, X_train, y_train, X_test, y_test, rows, *, seed: int,
                  curve_passes: int | None, probabilities: bool, metrics: dict, needs: set, classes,
                  task_label: str):
    """Build, train and test one learner on one fold into ``cell`` (its test ``rows`` among the
    evaluated documents); its test error after each pass when a curve is drawn (``curve_passes``
    and a learner with passes), else None."""
    est = build(spec, cell.params, cell.passes, seed=seed)
    if cell.passes is None and has_passes(est):
        cell.passes = int(est.get_params()["n_epochs"])
    errors = None
    if curve_passes is not None and has_passes(est):
        predicted, seconds, errors, confidence, fold = _run_with_curve(
            est, X_train, y_train, X_test, y_test, cell.passes, curve_passes, probabilities,
            needs if metrics else None, classes)
    else:
        seconds = fit_timed(est, X_train, y_train)
        predicted = est.predict(X_test)
        confidence = _confidence(est, X_test, predicted) if probabilities else None
        fold = _fold(est, X_test, y_test, predicted, needs, classes) if metrics else None
    values = measure(metrics, fold, task=task_label, learner=spec.label) if metrics else {}
    _record(cell, rows, y_test, predicted, seconds, confidence, values)
    return errors


def _summarise(cells: dict, curves_sum: dict) -> None:
    """Each cell's means over its finished folds, and its learning curve (the mean over folds)."""
    for key, cell in cells.items():
        if curves_sum[key] is not None and cell.fold_errors:
            cell.curve = (np.asarray(curves_sum[key]) / len(cell.fold_errors)).tolist()
        cell.summarise()


def _run_with_curve(est, X_train, y_train, X_test, y_test, passes, curve_passes, probabilities, needs=None,
                    labels=None):
    """Train pass by pass; the fold's result (and its probabilities) is the model after ``passes``.
    ``needs`` (None: no metric) is what the metrics read of the fold at that pass."""
    errors, chosen, proba = [], None, {}

    def at_pass(k, model):
        if k == passes and (probabilities or needs is not None):
            predicted = model.predict(X_test)
            if needs is not None:  # some metric reads this fold
                proba["fold"] = _fold(model, X_test, y_test, predicted, needs, labels)
            if probabilities:
                proba["confidence"] = _confidence(model, X_test, predicted)

    for k, predicted, seconds in predictions_per_pass(est, X_train, y_train, X_test, max(passes, curve_passes),
                                                      at_pass=at_pass):
        errors.append(error_percent(y_test, predicted))
        if k == passes:
            chosen = (predicted, seconds)
    return chosen[0], chosen[1], errors[:curve_passes], proba.get("confidence"), proba.get("fold")


def _fold(est, X_test, y_test, predicted, needs, labels=None) -> Fold:
    """The fold a metric reads: scores and probabilities only if some metric needs them."""
    scores = est.decision_function(X_test) if "scores" in needs and hasattr(est, "decision_function") else None
    proba = est.predict_proba(X_test) if "proba" in needs and hasattr(est, "predict_proba") else None
    return Fold(np.asarray(y_test), np.asarray(predicted), np.asarray(est.classes_), scores, proba, labels)


def measure(metrics: Mapping[str, Any], fold: Fold, *, task: str, learner: str) -> dict:
    """``{name: metric(fold)}``; None for a metric whose needs the learner cannot give, and
    :data:`~textcw.evaluation.contract.NOT_APPLICABLE` for one that does not apply to the task
    (``metric.applies(fold)`` is false, or the metric returned None). A metric that raises, or
    returns anything else but a finite number (or ``{class: finite number}``), is an error
    naming it (the task fails; the others run)."""
    values = {}
    for name, metric in metrics.items():
        if ("scores" in metric.needs and fold.scores is None) or ("proba" in metric.needs and fold.proba is None):
            values[name] = None
            continue
        try:
            value = metric(fold) if metric.applies(fold) else None
        except TextcwError:
            raise
        except Exception as exc:  # a plugin's metric: its failure is reported, not a traceback
            raise PluginError(f"metric {name!r} failed on {learner} ({type(exc).__name__}: {exc})") from None
        values[name] = NOT_APPLICABLE if value is None else plain_value(name, value)
    return values


def plain_value(name: str, value):
    """A metric's value as JSON data; anything but a finite number or a mapping of them is an error."""
    if isinstance(value, Mapping):
        return {str(k): plain_value(name, v) for k, v in value.items()}
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) or \
            not np.isfinite(value):
        raise PluginError(f"metric {name!r} returned {value!r}; a metric returns a finite number "
                          "or a {class: number} mapping")
    return float(value)


def _confidence(est, X_test, predicted):
    if not hasattr(est, "predict_proba"):
        return None
    proba = est.predict_proba(X_test)
    column = np.searchsorted(est.classes_, predicted)
    return proba[np.arange(len(predicted)), column]


def _record(cell: CellResult, positions, truth, predicted, seconds, confidence, values=None) -> None:
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
    cell.metrics = {name: [*fold_values, (values or {}).get(name)] for name, fold_values in cell.metrics.items()}
