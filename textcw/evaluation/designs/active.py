"""The ``active`` design: what-to-label-next strategies compared by their learning curves.

A pool-based active-learning simulation (Settles, "Active Learning Literature Survey", 2009,
section 2.3: pool-based sampling): the labels of a fold's training part are hidden, a seeded
random ``start`` of them is revealed, and for ``rounds`` rounds the learner is trained on the
labelled documents and the ``batch`` documents of the rest that a strategy of
:mod:`textcw.suggest` ranks most informative are labelled next. Each strategy starts from the
same documents, so their curves differ only by what they chose.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.pipeline import Pipeline

from textcw.errors import InputError, ParameterError
from textcw.evaluation.contract import Design, Fold, Option, check_metrics
from textcw.evaluation.cv import CellResult, measure
from textcw.evaluation.data import featurize, fold_indices, load_task
from textcw.evaluation.designs.options import SAMPLE, SEED
from textcw.evaluation.plot import STRATEGY_ROWS
from textcw.evaluation.specs import CV as CV_PROTOCOL, as_learner, as_task, check_specs
from textcw.evaluation.suite import SuiteReport, TaskInfo, describe_metric, run_each_task, summarise
from textcw.evaluation.training import build, error_percent, single_threaded
from textcw.metrics import label_metrics
from textcw.plugins import deprecated_registries, use_registries
from textcw.suggest import STRATEGIES, check_strategy, rank

__all__ = ["Active", "ALL"]

ALL = "all"  # the row of a model trained on every document of the pool: the curves' ceiling


class Active(Design):
    """Pool-based active learning (module docstring): error against labels used, per strategy.

    Each of ``folds`` stratified folds is a simulation: its training part is the pool, its test
    part the test. A seeded random ``start`` documents of the pool are labelled first (the same
    for every strategy and learner of the fold); then, ``rounds`` times, the learner is trained
    on the labelled documents (a fresh fit, as ``textcw train`` makes one) and the ``batch``
    documents of the unlabelled rest that the strategy ranks most informative are labelled
    (:func:`textcw.suggest.rank`). The table has a row per task, strategy and number of labels
    used (``STRATEGY N`` for ``N`` = ``start``, ``start + batch``, ... ``start + rounds *
    batch``), and a last row ``all``: the learner trained on the whole pool, the accuracy the
    curves climb towards; a column per learner, as in every design, so the ranks and McNemar
    marks compare learners at the same strategy and labels, and the strategies are compared
    down a column. ``strategies`` defaults to those every learner has (``mistake`` needs a
    Gaussian learner). The featurizer is fitted on the pool's texts (they are known; only labels
    cost), and folds hold predicted labels only (``gives``).
    """

    gives = frozenset({"labels"})
    options = {"start": Option("int", 50, "documents labelled at random first", minimum=2, maximum=10**6),
               "batch": Option("int", 50, "documents a strategy chooses per round", minimum=1, maximum=10**6),
               "rounds": Option("int", 4, "rounds of choosing", minimum=1, maximum=1000),
               "strategies": Option("str", None, f"comma-separated, among {', '.join(STRATEGIES)} (default: each the "
                                                "learner has)"),
               "folds": Option("int", 3, "folds, each a simulation tested on its test part", minimum=2),
               "sample": SAMPLE, "seed": SEED}

    def __init__(self, **options):
        super().__init__(**options)
        text = self.settings.get("strategies") or ""
        self.strategies = tuple(check_strategy(s.strip()) for s in text.split(",") if s.strip()) or None
        if self.strategies and len(set(self.strategies)) < len(self.strategies):
            raise ParameterError("design 'active': strategies lists a strategy twice; list each once")

    def sizes(self) -> list[int]:
        get = self.settings.get
        return [get("start") + i * get("batch") for i in range(get("rounds") + 1)]

    def chosen_strategies(self, learners) -> tuple[str, ...]:
        """The strategies to run: those given, checked against every learner, or those every
        learner has."""
        plain = [spec.label for spec in learners if not hasattr(build(spec), "margin_variance")]
        chosen = self.strategies or tuple(s for s in STRATEGIES if not plain or s != "mistake")
        if "mistake" in chosen and plain:
            raise ParameterError(f"design 'active': strategy 'mistake' needs a Gaussian learner (cw-var, cw-stdev, "
                                 f"arow, scw1, scw2); {plain[0]!r} is not: give strategies=margin,random")
        return chosen

    def rows(self, strategies) -> list[str]:
        return [f"{s} {n}" for s in strategies for n in self.sizes()] + [ALL]

    def run(self, tasks, learners, *, metrics, baseline=None, progress=None, on_task=None, **hooks):
        check_metrics("design 'active'", self, metrics)
        get = self.settings.get
        tasks = [replace(task, protocol=CV_PROTOCOL, sample=get("sample") or task.sample)
                 for task in map(as_task, tasks)]
        learners = [as_learner(s) for s in learners]
        t0 = time.perf_counter()
        with use_registries(deprecated_registries(hooks.get("registries"), "textcw.evaluation.contract.Design.run")):
            check_specs(tasks, learners, baseline)
            strategies = self.chosen_strategies(learners)
            report = SuiteReport(tasks, learners, get("folds"), get("seed"), baseline=baseline,
                                 metrics=[describe_metric(name, m) for name, m in metrics.items()])
            with single_threaded():
                run_each_task(report, tasks, lambda task: self._run_task(report, task, learners, strategies, metrics,
                                                                         progress), on_task)
        report.row_title = STRATEGY_ROWS
        summarise(report)
        report.seconds = time.perf_counter() - t0
        return report

    def _run_task(self, report, task, learners, strategies, metrics, progress):
        get, seed = self.settings.get, self.settings["seed"]
        t_task = time.perf_counter()
        data = load_task(task, seed=seed)
        splits = fold_indices(data, get("folds"), seed)
        cells = {(row, spec.label): CellResult(task.label, spec.label, 0.0, {}, None, len(splits),
                                               outcomes="." * len(data), metrics={name: [] for name in metrics}, row=row)
                 for row in self.rows(strategies) for spec in learners}  # the table's order: row by row
        largest = self.sizes()[-1]
        done, total = 0, len(splits) * len(learners) * len(strategies)
        width = 0.0
        for k, (pool, test) in enumerate(splits):
            if largest > len(pool):
                raise InputError(f"start + rounds * batch = {largest} labels, more than the {len(pool)} documents of "
                                 "a fold's training part; label fewer (or use fewer folds)")
            X_pool, X_test = featurize(data, pool, test)
            width += X_pool.shape[1] / len(splits)
            y_pool, y_test = data.labels[pool], data.labels[test]
            first = np.random.RandomState([seed, k, 104729]).permutation(len(pool))[:get("start")]
            if np.unique(y_pool[first]).size < 2:
                raise InputError(f"the {get('start')} documents labelled first hold one label only; give a larger "
                                 "start (design option start=N)")
            for spec in learners:
                everything = build(spec, seed=seed)
                t = time.perf_counter()
                everything.fit(X_pool, y_pool)
                self._record(cells[ALL, spec.label], y_test, test, everything.predict(X_test),
                             time.perf_counter() - t, everything.classes_, data.classes, metrics, task, spec)
                for strategy in strategies:
                    curve = self._simulate(spec, strategy, X_pool, y_pool, X_test, first, seed + k)
                    for n, (predicted, seconds, classes) in zip(self.sizes(), curve):
                        self._record(cells[f"{strategy} {n}", spec.label], y_test, test, predicted, seconds, classes,
                                     data.classes, metrics, task, spec)
                    done += 1
                    if progress is not None:
                        progress(task.label, done, total)
        for cell in cells.values():
            cell.summarise()
        report.cells.extend(cells.values())
        info = TaskInfo(task.label, task.corpus, task.protocol, len(data), len(data.target_names), len(splits),
                        width, time.perf_counter() - t_task)
        report.task_info.append(info)
        return info

    def _simulate(self, spec, strategy, X_pool, y_pool, X_test, first, seed):
        """``[(test predictions, training seconds, classes)]`` after each round's labels."""
        labelled = list(first)
        out = []
        for round_ in range(self.settings["rounds"] + 1):
            est = build(spec, seed=seed)
            t = time.perf_counter()
            est.fit(X_pool[labelled], y_pool[labelled])
            out.append((est.predict(X_test), time.perf_counter() - t, est.classes_))
            if round_ == self.settings["rounds"]:
                break
            rest = np.setdiff1d(np.arange(X_pool.shape[0]), labelled)
            model = Pipeline([("rows", PoolRows(X_pool)), ("learner", est)])
            chosen = rank(model, rest.tolist(), strategy, n=self.settings["batch"], seed=seed + round_)
            labelled += [int(rest[s.index]) for s in chosen]
        return out

    @staticmethod
    def _record(cell, y_test, test, predicted, seconds, classes, labels, metrics, task, spec):
        fold = Fold(y_test, predicted, np.asarray(classes), labels=labels)
        values = measure(metrics, fold, task=task.label, learner=spec.label)
        outcomes = np.frombuffer(cell.outcomes.encode(), dtype="S1").copy()
        outcomes[test] = np.where(predicted == y_test, b"1", b"0")
        cell.outcomes = outcomes.tobytes().decode()
        cell.fold_errors = [*cell.fold_errors, error_percent(y_test, predicted)]
        cell.fold_macro_f1 = [*cell.fold_macro_f1, label_metrics(y_test, predicted)["macro_f1"]]
        cell.train_seconds = [*cell.train_seconds, seconds]
        cell.metrics = {name: [*v, values.get(name)] for name, v in cell.metrics.items()}

    def caption(self, report) -> str:
        get = self.settings.get
        return (f", {report.folds}-fold CV, {get('start')} random labels then {get('rounds')} rounds of "
                f"{get('batch')} chosen by each strategy")


class PoolRows(TransformerMixin, BaseEstimator):
    """The rows of a featurized pool by position: the first step of the pipeline a strategy of
    :mod:`textcw.suggest` ranks, whose "documents" are positions into ``X``."""

    def __init__(self, X):
        self.X = X

    def fit(self, positions=None, y=None):
        self.n_rows_ = self.X.shape[0]
        return self

    def transform(self, positions):
        return self.X[np.asarray(positions, dtype=np.int64)]

    def __sklearn_is_fitted__(self) -> bool:
        return True
