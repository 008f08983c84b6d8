"""The ``online`` design: progressive validation, the online mistakes of one pass (NIPS 2008
Figure 2a, AROW 2013 Figure 5).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from textcw.errors import ParameterError
from textcw.evaluation.contract import Design, Fold, Option, check_metrics
from textcw.evaluation.cv import CellResult, measure
from textcw.evaluation.data import featurize, load_task
from textcw.evaluation.designs.options import SAMPLE, SEED
from textcw.evaluation.noise import check_noise, corrupt_labels
from textcw.evaluation.online import progressive_predictions
from textcw.evaluation.specs import CV as CV_PROTOCOL, as_learner, as_task, check_specs
from textcw.evaluation.suite import SuiteReport, TaskInfo, describe_metric, run_each_task, summarise
from textcw.evaluation.training import build, error_percent, has_passes, single_threaded
from textcw.metrics import label_metrics
from textcw.plugins import deprecated_registries, use_registries

__all__ = ["Online"]


class Online(Design):
    """Progressive validation (the online mistakes of NIPS 2008 Figure 2a and AROW 2013 Figure
    5): each run streams the task's pool once, in a seeded order of its own, and every document
    is predicted by the model learned from the documents before it, then learned
    (:func:`textcw.evaluation.online.progressive_predictions`); with ``noise`` the streamed
    labels are flipped at that rate and mistakes are counted against them, as
    :func:`textcw.evaluation.online.online` does. A cell's "folds" are the runs:
    its error is the percentage of online mistakes of each pass, the outcomes the first run's,
    and a metric reads each pass's predicted labels (``gives`` is labels only: there are no
    scores or probabilities of a model that changes after every document). The featurizer is
    fitted on the whole stream (see :mod:`textcw.evaluation.online`)."""

    gives = frozenset({"labels"})
    options = {"runs": Option("int", 1, "passes, each over the stream in another seeded order from a fresh "
                                        "learner", minimum=1, maximum=100),
               "noise": Option("floats", [0.0], "rates at which the streamed labels are flipped, one table each "
                                                 "(AROW 2013 Figure 5)", minimum=0.0, maximum=0.99),
               "sample": SAMPLE, "seed": SEED}

    def run(self, tasks, learners, *, metrics, baseline=None, progress=None, on_task=None, **hooks):
        check_metrics("design 'online'", self, metrics)
        get = self.settings.get
        tasks = [replace(task, protocol=CV_PROTOCOL, sample=get("sample") or task.sample)
                 for task in map(as_task, tasks)]
        learners = [as_learner(s) for s in learners]
        t0 = time.perf_counter()
        with use_registries(deprecated_registries(hooks.get("registries"), "textcw.evaluation.contract.Design.run")):
            check_specs(tasks, learners, baseline)
            for spec in learners:
                if not hasattr(build(spec), "partial_fit"):
                    raise ParameterError(f"design 'online': learner {spec.label!r} has no partial_fit, so it cannot "
                                         "learn online; choose online learners (textcw list learners)")
            levels = [check_noise(p) for p in get("noise")]
            report = SuiteReport(tasks, learners, get("runs"), get("seed"), noise=levels, baseline=baseline,
                                 metrics=[describe_metric(name, m) for name, m in metrics.items()])
            with single_threaded():
                run_each_task(report, tasks, lambda task: self._run_task(report, task, learners, metrics, progress),
                              on_task)
        summarise(report)
        report.seconds = time.perf_counter() - t0
        return report

    def _run_task(self, report, task, learners, metrics, progress):
        runs, seed, levels = self.settings["runs"], self.settings["seed"], report.noise
        t_task = time.perf_counter()
        data = load_task(task, seed=seed)
        everything = np.arange(len(data))
        X, _ = featurize(data, everything, everything[:1])
        labels, classes = data.labels, data.classes
        cells = {(spec.label, p): CellResult(task.label, spec.label, p, {}, None, runs, outcomes="." * len(data),
                                             metrics={name: [] for name in metrics})
                 for p in levels for spec in learners}
        done, total = 0, runs * len(learners) * len(levels)
        for p in levels:
            for r in range(runs):
                # the stream of online(): the same order and, with noise, the same flipped labels
                rng = np.random.RandomState([seed, r])
                order = rng.permutation(len(data))
                y = labels[order]
                if p > 0:  # mistakes are counted against the labels the learner is shown
                    y = corrupt_labels(y, p, classes, rng)[0]
                for spec in learners:
                    cell = cells[spec.label, p]
                    est = build(spec, seed=seed + r)
                    if has_passes(est):
                        cell.passes = 1
                    t = time.perf_counter()
                    predicted = progressive_predictions(est, X[order], y, classes)
                    seconds = time.perf_counter() - t
                    fold = Fold(y, predicted, np.asarray(est.classes_), labels=classes)
                    values = measure(metrics, fold, task=task.label, learner=spec.label)
                    if r == 0:
                        outcomes = np.full(len(data), "0", dtype="<U1")
                        outcomes[order[predicted == y]] = "1"
                        cell.outcomes = "".join(outcomes)
                    cell.fold_errors = [*cell.fold_errors, error_percent(y, predicted)]
                    cell.fold_macro_f1 = [*cell.fold_macro_f1, _macro_f1(y, predicted)]
                    cell.train_seconds = [*cell.train_seconds, seconds]
                    cell.metrics = {name: [*v, values.get(name)] for name, v in cell.metrics.items()}
                    done += 1
                    if progress is not None:
                        progress(task.label, done, total)
        for cell in cells.values():
            cell.summarise()
        report.cells.extend(cells.values())
        info = TaskInfo(task.label, task.corpus, task.protocol, len(data), len(data.target_names), runs,
                        float(X.shape[1]), time.perf_counter() - t_task)
        report.task_info.append(info)
        return info

    def caption(self, report) -> str:
        runs = self.settings["runs"]
        return ", online mistakes of one pass" + (f" (mean of {runs} runs)" if runs > 1 else "")


def _macro_f1(y, predicted) -> float:
    return label_metrics(y, predicted)["macro_f1"]
