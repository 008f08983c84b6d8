"""The ``tune`` design: the papers' tuning run (JMLR 2012 section 7.6) as a table."""

from __future__ import annotations

from dataclasses import replace

from textcw.evaluation.contract import SplitDesign
from textcw.evaluation.data import dev_split
from textcw.evaluation.designs.options import QUICK, SAMPLE, SEED
from textcw.evaluation.specs import as_task
from textcw.evaluation.suite import run_suite
from textcw.evaluation.tune import DEV_SIZE

__all__ = ["Tune"]


class Tune(SplitDesign):
    """The papers' tuning run as a table (JMLR 2012 section 7.6): one seeded stratified split
    of the pool holds out 10%, every learner's grid is searched on it
    (:func:`textcw.evaluation.suite.tuning_run`), and the cell is the chosen settings' model
    tested on the held-out part, one "fold". Its error is the tuning run's ``dev_error``; the
    chosen parameters and passes follow in the report's ``tuning`` (a second table)."""

    options = {"sample": SAMPLE, "seed": SEED, "quick": QUICK}

    def splits(self, task, seed):
        return [dev_split(task, DEV_SIZE, seed)]

    def run(self, tasks, learners, *, metrics, baseline=None, **hooks):
        get = self.settings.get
        tasks = [replace(task, protocol=self.protocol, sample=get("sample") or task.sample)
                 for task in map(as_task, tasks)]
        return run_suite(tasks, learners, splitter=self.checked_splits, folds=0, seed=get("seed"), tune=True,
                         quick=bool(get("quick")), baseline=baseline, metrics=metrics, **hooks)

    def caption(self, report) -> str:
        return ", held-out 10% of the tuning run"
