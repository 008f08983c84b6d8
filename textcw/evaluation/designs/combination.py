"""The ``combination`` design: shard models combined, one row per shard count (JMLR 2012
section 7.10 and Figure 6).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from textcw.errors import ParameterError, TextcwError
from textcw.evaluation.combination import combination
from textcw.evaluation.contract import Design, Option, Verdict, check_metrics
from textcw.evaluation.cv import CellResult, _fold, _record, measure
from textcw.evaluation.designs.options import SEED, check_distinct
from textcw.evaluation.specs import SPLIT, as_learner, as_task, check_specs
from textcw.evaluation.suite import SuiteReport, TaskInfo, describe_metric, run_each_task, summarise
from textcw.evaluation.training import error_percent
from textcw.pipeline import make_learner
from textcw.plugins import deprecated_registries, use_registries
from textcw.scale.combine import METHODS, check_combinable

__all__ = ["Combination"]


class Combination(Design):
    """Shard models combined (JMLR 2012 section 7.10 and Figure 6; ICML 2008 Figure 2), through
    :func:`textcw.evaluation.combination.combination`: for every ``n`` of ``shards`` the
    corpus's train split is cut into ``n`` contiguous shards, one model is trained per shard
    (``passes`` each, one by default as in the papers) and the models are combined with
    ``method`` (``uniform``: averaged weights and covariances; ``kl``: the KL combination of
    Gaussian learners, :mod:`textcw.scale.combine`); the combined model is tested on the test
    split. The table has one row per task and shard count (``row_title`` ``"shards"``), the row
    ``1`` being the single model trained on the whole train split; a cell has one "fold", the
    test split. The shard models themselves are summarised in the design's own table
    (``combination`` in the report's ``verdicts``: their mean error and spread)."""

    protocol = SPLIT
    options = {"shards": Option("ints", [10], "shard counts (each >= 2; the single model is always included)",
                                minimum=2, maximum=1000),
               "method": Option("str", "uniform", "how shard models are combined: uniform or kl"),
               "passes": Option("int", 1, "passes of each shard model", minimum=1, maximum=100),
               "seed": SEED}

    def __init__(self, **options):
        super().__init__(**options)

        check_distinct("combination", "shards", self.settings["shards"])
        if self.settings["method"] not in METHODS:
            raise ParameterError(f"design 'combination': method={self.settings['method']!r} is invalid; "
                                 f"give one of {', '.join(sorted(METHODS))}")

    def run(self, tasks, learners, *, metrics, baseline=None, progress=None, on_task=None, **hooks):
        check_metrics("design 'combination'", self, metrics)
        tasks = [replace(task, protocol=SPLIT) for task in map(as_task, tasks)]
        learners = [as_learner(s) for s in learners]
        t0 = time.perf_counter()
        with use_registries(deprecated_registries(hooks.get("registries"), "textcw.evaluation.contract.Design.run")):
            check_specs(tasks, learners, baseline)
            self._check_learners(learners)
            report = SuiteReport(tasks, learners, 1, self.settings["seed"], baseline=baseline, row_title="shards",
                                 metrics=[describe_metric(name, m) for name, m in metrics.items()])
            shard_rows = []
            run_each_task(report, tasks,
                          lambda task: self._run_task(report, task, learners, metrics, progress, shard_rows), on_task)
        report.verdicts["combination"] = Verdict(
            "test error (%) of the shard models themselves, mean ± standard deviation",
            ["task", "shards", "docs/shard", *[s.label for s in learners]], shard_rows)
        summarise(report)
        report.seconds = time.perf_counter() - t0
        return report

    def _check_learners(self, learners) -> None:
        """Refuse, before training, a learner that cannot be trained on shards or combined so."""

        for spec in learners:
            est = make_learner(spec.name, **spec.params)
            if not hasattr(est, "partial_fit") or "n_epochs" not in est.get_params(deep=False):
                raise ParameterError(f"design 'combination': learner {spec.label!r} is not an online learner; "
                                     "shard models need one")
            try:
                check_combinable(est, self.settings["method"])
            except TextcwError as exc:
                if self.settings["method"] == "kl":
                    exc = (f"{type(est).__name__} keeps no covariance, which method=kl weights each shard model "
                           "by; use method=uniform (parameter averaging)")
                raise ParameterError(f"design 'combination': learner {spec.label!r}: {exc}") from None

    def _run_task(self, report, task, learners, metrics, progress, shard_rows):
        method, counts = self.settings["method"], self.settings["shards"]
        needs = set().union(*(m.needs for m in metrics.values())) if metrics else set()
        t_task = time.perf_counter()
        cells, shards, seen_labels = {}, {}, set()

        def on_model(label, n, run, kind, model, X_test, y_test):
            if kind == "shard" and n > 1:
                shards.setdefault((label, n), []).append(error_percent(y_test, model.predict(X_test)))
                return
            if kind != ("shard" if n == 1 else method):
                return
            predicted = model.predict(X_test)
            y_test = np.asarray(y_test)
            seen_labels.update(y_test.tolist())
            task_labels = np.unique(np.concatenate([y_test.astype(object), np.asarray(model.classes_, dtype=object)]))
            fold = _fold(model, X_test, y_test, predicted, needs, task_labels)
            values = measure(metrics, fold, task=task.label, learner=label) if metrics else {}
            cell = CellResult(task.label, label, 0.0, {}, self.settings["passes"], 1, outcomes="." * len(y_test),
                              metrics={name: [] for name in metrics}, row=str(n))
            _record(cell, np.arange(len(y_test)), y_test, predicted, 0.0, None, values)
            cell.summarise()
            cells[label, n] = cell

        def shard_progress(stage, done, total):  # one bar per learner and shard count
            if progress is not None:
                progress(f"{task.label} {stage}", done, total)

        run = combination(shard_counts=counts, passes=self.settings["passes"], seed=self.settings["seed"],
                          featurizer=task.featurizer, featurizer_params=task.featurizer_params or None)
        out = run(task.corpus, [s.label for s in learners], progress=shard_progress, on_model=on_model)
        for n in (1, *counts):
            report.cells.extend(cells[s.label, n] for s in learners if (s.label, n) in cells)
        for n in counts:
            sizes = [r.shard_documents for r in out.rows if r.n_shards == n]
            shard_rows.append([task.label, str(n), f"{sizes[0]:.0f}" if sizes else "–",
                               *[_spread(shards.get((s.label, n), [])) for s in learners]])
        info = TaskInfo(task.label, task.corpus, SPLIT, out.n_train + out.n_test, len(seen_labels), 1, None,
                        time.perf_counter() - t_task)
        report.task_info.append(info)
        return info

    def caption(self, report) -> str:
        return f", the {self.settings['method']} combination of n shard models"


def _spread(errors) -> str:
    if not errors:
        return "–"
    return f"{np.mean(errors):.2f} ± {np.std(errors):.2f}"
