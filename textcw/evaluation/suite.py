"""A full comparison: tasks x learners, optionally tuned, at one or more label-noise rates.

This is what ``textcw evaluate`` and the reproductions run: for each task, the tuning run
(``tune``), then cross-validation of every learner with the chosen settings (``cv``), McNemar's
test of every learner against a baseline (``mcnemar``) and the mean rank of the learners over
the tasks (``rank``). Ctrl-C stops after the current model and returns what finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textcw.errors import ParameterError, TextcwError
from textcw.evaluation.cv import CellResult, CVReport, cross_validate
from textcw.evaluation.data import TaskData, dev_split, featurize, load_task
from textcw.evaluation.folds import check_splits
from textcw.evaluation.grids import grid_for
from textcw.evaluation.mcnemar import Comparison, against_baseline
from textcw.evaluation.noise import check_noise, corrupt_labels
from textcw.evaluation.online import OnlineReport
from textcw.evaluation.rank import RankReport, rank_by_metric
from textcw.evaluation.report import Report, Verdict
from textcw.evaluation.specs import LearnerSpec, TaskSpec, as_learner, as_task, check_specs
from textcw.evaluation.training import single_threaded
from textcw.evaluation.tune import DEV_SIZE, MAX_PASSES, TuneResult, tune_learner
from textcw.plugins import deprecated_registries, use_registries

Progress = Callable[[str, int, int], None]


@dataclass
class TaskInfo(Report):
    label: str
    corpus: str
    protocol: str
    n_docs: int
    n_classes: int
    n_folds: int
    mean_features: float | None
    seconds: float
    learner_params: dict = field(default_factory=dict)  # fixed parameters adapted to this task


@dataclass
class SuiteReport(Report):
    """Everything needed to redraw the tables and figures of one evaluation.

    Attributes
    ----------
    tasks, learners : list
        The specs, in table order.
    folds, seed : int
    tuned, quick : bool
    noise : list of float
        The label-noise rates (one table each).
    baseline : str or None
        The learner label the McNemar marks compare against.
    task_info : list of TaskInfo
    tuning : list of TuneResult
    cells : list of CellResult
    comparisons : list of Comparison
    ranks : dict
        ``str(noise) -> RankReport`` over the tasks every learner finished.
    interrupted : bool
    failures : list of str
        Tasks that failed with an error (``"task: message"``); the others still ran.
    seconds : float
    online : list of OnlineReport
        Per task, the cumulative online mistakes of one pass of each online learner (with its
        tuned settings; :func:`textcw.evaluation.online.online`), when they were asked for
        (``textcw evaluate`` with ``--json``, ``--json-out`` or ``--plot``); empty otherwise.
    design : str
        The registered design that ran (``textcw evaluate --design``; empty from Python).
    metrics : list of dict
        ``{"name", "title", "better", "per_class"}`` of each metric whose per-fold values each
        cell's ``metrics`` holds, in the order asked for (the first is the main table;
        :mod:`textcw.evaluation.contract`).
    verdicts : dict
        ``{comparison name: Verdict}`` of the comparisons that conclude with a table of their own.
    compared : list of str
        The comparisons that ran after the registered ``design`` (``textcw evaluate
        --compare``); a report without a design has the library's: McNemar's test against
        ``baseline`` if there is one, and the ranks.
    row_title : str
        What the cells' ``row`` means when a design gives several rows per task (e.g.
        ``"train docs"`` for a learning curve): the heading of the tables' second column.
        Empty when there is one row per task.
    """

    tasks: list[TaskSpec]
    learners: list[LearnerSpec]
    folds: int
    seed: int
    tuned: bool = False
    quick: bool = False
    noise: list[float] = field(default_factory=lambda: [0.0])
    baseline: str | None = None
    task_info: list[TaskInfo] = field(default_factory=list)
    tuning: list[TuneResult] = field(default_factory=list)
    cells: list[CellResult] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    ranks: dict[str, RankReport] = field(default_factory=dict)
    interrupted: bool = False
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    online: list[OnlineReport] = field(default_factory=list)
    design: str = ""
    metrics: list[dict] = field(default_factory=list)
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    compared: list[str] = field(default_factory=list)
    row_title: str = ""

    def cell(self, task: str, learner: str, noise: float = 0.0, row: str = "") -> CellResult | None:
        for c in self.cells:
            if c.task == task and c.learner == learner and c.noise == noise and c.row == row:
                return c
        return None

    def rows(self, task: str) -> list[str]:
        """The ``row`` values of ``task``'s cells, in the order they were run (``[""]`` when
        the design gives one row per task)."""
        seen = list(dict.fromkeys(c.row for c in self.cells if c.task == task))
        return seen or [""]

    def row_label(self, task: str, row: str) -> str:
        """The name of one row of the table: the task, and its ``row`` when there is one."""
        return f"{task} {self.row_title}={row}" if row else task

    def metric(self, name: str) -> dict:
        """The description of metric ``name`` (``{"name", "title", "better", "per_class"}``);
        the error's when the report was made without metrics."""
        for info in self.metrics:
            if info["name"] == name:
                return info
        return {"name": name, "title": "test error (%)" if name == "error" else name, "better": "lower",
                "per_class": False}

    def comparison(self, task: str, learner: str, noise: float = 0.0, row: str = "") -> Comparison | None:
        for c in self.comparisons:
            if c.task == task and c.learner == learner and c.noise == noise and c.row == row:
                return c
        return None

    def errors(self, noise: float = 0.0, *, complete_only: bool = True) -> dict[str, dict[str, float]]:
        """``task -> {learner: mean error (%)}`` at one noise rate (a task with several rows
        gives one entry per row, named by :meth:`row_label`)."""
        out: dict[str, dict[str, float]] = {}
        for c in self.cells:
            if c.noise == noise and c.mean_error is not None and (c.complete or not complete_only):
                out.setdefault(self.row_label(c.task, c.row), {})[c.learner] = c.mean_error
        return out


def tuning_run(task: TaskSpec | TaskData, learners: list[LearnerSpec], *, noise: float = 0.0, quick: bool = False,
               max_passes: int = MAX_PASSES, dev_size: float = DEV_SIZE, seed: int = 0, grids: dict | None = None,
               progress: Callable[[], None] | None = None, cache=None) -> list[TuneResult]:
    """The papers' single randomised tuning run of every learner on one task.

    ``grids`` maps a learner label to its grid, overriding :func:`textcw.evaluation.grids.grid_for`.
    ``cache`` (a :class:`textcw.evaluation.experiments.cells.CellCache`) returns the learners
    already tuned in the same way on the same task; the task is loaded only if one is not.
    """
    data = task if isinstance(task, TaskData) else load_task(task, seed=seed)
    keys = [None] * len(learners)
    if cache is not None:
        keys = [cache.key("tuning", task=task_identity(data, seed), learner=spec, noise=noise, quick=quick,
                          max_passes=max_passes, dev_size=dev_size, grid=_grid(spec, grids, quick))
                for spec in learners]
    results = [cache.get(key) if key is not None else None for key in keys]
    split = None
    for k, spec in enumerate(learners):
        if results[k] is None:
            if split is None:  # every learner found in the cache: no split, no featurizing
                split = _tuning_split(data, noise, dev_size, seed)
            X_train, y_train, X_dev, y_dev = split
            results[k] = tune_learner(spec, X_train, y_train, X_dev, y_dev, task=data.spec.label, noise=noise,
                                      grid=(grids or {}).get(spec.label), quick=quick, max_passes=max_passes,
                                      seed=seed)
            if keys[k] is not None:
                cache.put(keys[k], results[k])
        if progress is not None:
            progress()
    return results


def task_identity(data: TaskData, seed: int) -> dict:
    """What a cached result of ``data`` is keyed by: its spec, the seed it was loaded and split
    with, its featurizer, and its labels in pool order (a fingerprint of the documents drawn)."""
    return {"spec": data.spec, "seed": seed, "featurizer": data.featurizer, "target": data.target,
            "target_names": list(data.target_names)}


def _grid(spec: LearnerSpec, grids: dict | None, quick: bool) -> dict:
    """The grid :func:`tune_learner` searches for ``spec`` (the given one, else the default)."""
    grid = (grids or {}).get(spec.label)
    return grid if grid is not None else grid_for(spec.name, spec.params, quick=quick)


def _tuning_split(data: TaskData, noise: float, dev_size: float, seed: int):
    """``(X_train, y_train, X_dev, y_dev)`` of the tuning run (noisy labels with ``noise``)."""
    train, dev = dev_split(data, dev_size, seed)
    X_train, X_dev = featurize(data, train, dev)
    labels = data.labels
    y_train, y_dev = labels[train], labels[dev]
    if noise > 0:
        rng = np.random.RandomState([seed, 999_983, int(noise * 1e6)])
        y_train, _ = corrupt_labels(y_train, noise, data.classes, rng)
        y_dev, _ = corrupt_labels(y_dev, noise, data.classes, rng)
    return X_train, y_train, X_dev, y_dev


def run_suite(tasks, learners, *, folds: int = 10, seed: int = 0, tune: bool = False, quick: bool = False,
              noise=(0.0,), baseline: str | None = None, curves: bool = False, probabilities: bool = False,
              max_passes: int = MAX_PASSES, grids: dict | None = None, registries=None,
              progress: Progress | None = None, on_task: Callable[[TaskInfo], None] | None = None,
              specialise: Callable | None = None, splitter: Callable | None = None,
              metrics: Mapping[str, Any] | None = None, cache=None) -> SuiteReport:
    """Evaluate every learner on every task; see the module docstring.

    ``progress(task label, done, total)`` is called after each fitted model (tuning runs count
    one per learner); ``on_task(info)`` after each task. ``grids`` maps learner labels to tuning
    grids (default: :func:`textcw.evaluation.grids.grid_for`). ``specialise(task data, learners)``
    may return the learners adapted to one task (same labels, e.g. ``k`` capped at the number of
    labels). A task that fails with a textcw error is recorded in ``failures``; the rest run.
    ``registries=`` is deprecated (:func:`textcw.plugins.deprecated_registries`): run it within
    :func:`textcw.plugins.use_registries` instead. ``splitter(task data, seed)`` replaces the
    stratified folds (a :class:`~textcw.evaluation.contract.SplitDesign`'s ``splits``);
    ``metrics`` (``{name: Metric}``) are computed on every fold. ``cache`` (a
    :class:`textcw.evaluation.experiments.cells.CellCache`, what the reproductions pass) returns
    the tuning runs and cells computed before in the same way, and keeps the new ones (not with
    ``splitter`` or ``metrics``, which are code the key cannot describe).
    """
    t0 = time.perf_counter()
    tasks = [as_task(t) for t in tasks]
    learners = [as_learner(s) for s in learners]
    levels = [check_noise(p) for p in noise]
    # a design's run passes its hooks on here, the deprecated ``registries`` among them
    with use_registries(deprecated_registries(registries, "textcw.evaluation.suite.run_suite (or a design's run)")):
        check_specs(tasks, learners, baseline)
        if splitter is None and any(t.protocol == "cv" for t in tasks) and (isinstance(folds, bool) or not isinstance(folds, int) or folds < 2):
            raise ParameterError(f"folds={folds!r} is invalid; cross-validation needs at least 2 folds")
        report = SuiteReport(tasks, learners, folds, seed, tune, quick, levels, baseline,
                             metrics=[describe_metric(name, m) for name, m in (metrics or {}).items()])
        with single_threaded():
            _run_tasks(report, tasks, learners, levels, folds=folds, seed=seed, tune=tune, quick=quick, curves=curves,
                       probabilities=probabilities, max_passes=max_passes, grids=grids,
                       progress=progress, on_task=on_task, specialise=specialise, splitter=splitter,
                       metrics=metrics, cache=cache)
    summarise(report)
    report.seconds = time.perf_counter() - t0
    return report


def _run_tasks(report, tasks, learners, levels, **options) -> None:
    run_each_task(report, tasks, lambda task: _run_task(report, task, learners, levels, **options),
                  options["on_task"])


def run_each_task(report: SuiteReport, tasks, run_task, on_task=None) -> None:
    """``run_task(task)`` for each task in turn, ``on_task`` given what it returns; a task that
    fails is recorded in ``report.failures`` and Ctrl-C ends the run with ``report.interrupted``
    (what every design does around its own per-task work)."""
    try:
        for task in tasks:
            try:
                info = run_task(task)
            except TextcwError as exc:
                # One task's failure (a missing file, a parameter that does not fit its number of
                # classes) must not throw away the tasks that finished: record it and go on.
                report.failures.append(f"{task.label}: {exc}")
                continue
            if report.interrupted:
                break
            if on_task is not None:
                on_task(info)
    except KeyboardInterrupt:
        report.interrupted = True


def describe_metric(name: str, metric: Any) -> dict:
    """What a report keeps of a metric to redraw its table from JSON."""
    return {"name": name, "title": metric.title or name, "better": metric.better,
            "per_class": bool(metric.per_class)}


def _run_task(report, task, learners, levels, *, folds, seed, tune, quick, curves, probabilities, max_passes,
              grids, progress, on_task, specialise, splitter, metrics, cache) -> TaskInfo:
    t_task = time.perf_counter()
    data = load_task(task, seed=seed)
    specs = specialise(data, learners) if specialise is not None else learners
    splits = check_splits(data, splitter(data, seed)) if splitter is not None else None
    n_splits = len(splits) if splits is not None else 1 if task.protocol != "cv" else folds
    total = n_splits * len(specs) * len(levels) + (len(specs) * len(levels) if tune else 0)
    done = [0]

    def tick(n_done=None, _total=None):
        done[0] += 1
        if progress is not None:
            progress(task.label, done[0], total)

    settings, tuning = {}, []
    if tune:
        for p in levels:
            results = tuning_run(data, specs, noise=p, quick=quick, max_passes=max_passes, seed=seed, grids=grids,
                                 progress=tick, cache=cache)
            tuning.extend(results)
            for spec, r in zip(specs, results):
                settings[spec.label, p] = (r.params, r.passes)
    options = dict(folds=folds, seed=seed, settings=settings, noise=levels, curves=curves, curve_passes=max_passes,
                   probabilities=probabilities, progress=tick)
    if cache is not None and splits is None and not metrics:
        cv = cached_cross_validate(cache, data, specs, n_splits, **options)
    else:
        cv = cross_validate(data, specs, splits=splits, metrics=metrics, **options)
    report.tuning.extend(tuning)
    report.cells.extend(cv.cells)
    fixed = {s.label: s.params for s, g in zip(specs, learners) if s.params != g.params}
    info = TaskInfo(task.label, task.corpus, task.protocol, cv.n_docs, cv.n_classes, cv.n_folds,
                    float(np.mean(cv.n_features)) if cv.n_features else None, time.perf_counter() - t_task, fixed)
    report.task_info.append(info)
    report.interrupted = cv.interrupted
    return info


def cached_cross_validate(cache, data: TaskData, specs: list[LearnerSpec], n_splits: int, *, folds, seed, settings,
                          noise, curves, curve_passes, probabilities, progress) -> CVReport:
    """:func:`cross_validate` of the learners whose cells ``cache`` does not hold; the others'
    cells (each learner's at every rate in ``noise``) from the cache, each counted in
    ``progress`` as the models it stands for. An interrupted run's cells are not kept."""
    keys = {spec.label: cache.key("cells", task=task_identity(data, seed), learner=spec, noise=list(noise),
                                  settings=[settings.get((spec.label, p)) for p in noise], folds=folds,
                                  curves=curves, curve_passes=curve_passes, probabilities=probabilities)
            for spec in specs}
    found = {label: cache.get(key) for label, key in keys.items()}
    missing = [spec for spec in specs if found[spec.label] is None]
    for _ in range((len(specs) - len(missing)) * n_splits * len(noise)):
        progress()  # the models the cached cells stand for
    cv = None
    if missing:
        cv = cross_validate(data, missing, folds=folds, seed=seed, settings=settings, noise=noise, curves=curves,
                            curve_passes=curve_passes, probabilities=probabilities, progress=progress)
        if not cv.interrupted:
            for spec in missing:
                found[spec.label] = ([c for c in cv.cells if c.learner == spec.label], list(cv.n_features))
                cache.put(keys[spec.label], found[spec.label])
    computed = {(c.learner, c.noise): c for c in cv.cells} if cv is not None else {}
    # in cross_validate's order: each noise rate, then each learner
    cells = [computed[spec.label, p] if (spec.label, p) in computed
             else next(c for c in found[spec.label][0] if c.noise == p)
             for p in noise for spec in specs]
    n_features = cv.n_features if cv is not None else next(iter(found.values()))[1]
    return CVReport(data.spec.label, data.spec.protocol, len(data), len(data.target_names), cells[0].n_folds,
                    seed, list(n_features), cells, cv is not None and cv.interrupted)


def summarise(report: SuiteReport) -> None:
    """Fill in McNemar's comparisons against the baseline (with one) and the mean ranks of the
    error, by the functions the registered comparisons ``mcnemar`` and ``rank`` call
    (:mod:`textcw.evaluation.comparisons`): one computation, whichever asks."""
    report.comparisons = against_baseline(report, report.baseline) if report.baseline is not None else []
    report.ranks = rank_by_metric(report, "error")
