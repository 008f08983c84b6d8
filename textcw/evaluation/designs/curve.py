"""The ``curve`` design: a learning curve, one row of the table per training size."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from textcw.errors import InputError
from textcw.evaluation.contract import Design, Option
from textcw.evaluation.data import fold_indices
from textcw.evaluation.designs.options import SAMPLE, SEED, check_distinct
from textcw.evaluation.specs import CV as CV_PROTOCOL, as_task
from textcw.evaluation.suite import run_suite, summarise

__all__ = ["Curve"]


class Curve(Design):
    """A learning curve: error against the number of training documents.

    For every size ``n`` of ``sizes``, each of ``folds`` stratified folds trains on the first
    ``n`` documents of its training part (in one seeded order per fold, so a larger size adds
    documents to a smaller one's) and tests on the fold's whole test part; the featurizer is
    fitted on those ``n`` documents only. The table has one row per task and size (``row`` is
    ``n``, ``row_title`` ``"train docs"``), a cell's folds being the folds at that size, so
    McNemar's test and the ranks compare learners at equal size. A size larger than a fold's
    training part, or whose first documents hold a single label, fails that task.
    """

    options = {"sizes": Option("ints", None, "training sizes, e.g. sizes=100,400,1600", minimum=2, maximum=10**7,
                               required=True),
               "folds": Option("int", 10, "how many folds (each tested at every size)", minimum=2),
               "sample": SAMPLE, "seed": SEED}

    def __init__(self, **options):
        super().__init__(**options)
        check_distinct("curve", "sizes", self.settings["sizes"])

    def splits_at(self, size: int):
        """The splitter of one size: each fold's training part, seeded order, first ``size``."""
        folds = self.settings["folds"]

        def splits(task, seed):
            out = []
            for k, (train, test) in enumerate(fold_indices(task, folds, seed)):
                if size > len(train):
                    raise InputError(f"sizes has {size}, more than the {len(train)} documents "
                                     f"of a fold's training part; give sizes up to {len(train)} (or fewer folds)")
                order = np.random.RandomState([seed, k, 7919]).permutation(train)
                out.append((np.sort(order[:size]), test))
            return out

        return splits

    def run(self, tasks, learners, *, metrics, baseline=None, **hooks):
        get = self.settings.get
        tasks = [replace(task, protocol=CV_PROTOCOL, sample=get("sample") or task.sample)
                 for task in map(as_task, tasks)]
        report, on_task = None, hooks.pop("on_task", None)
        for size in get("sizes"):
            def at_size(info, size=size):  # "task n=100: done": one line per task and size
                on_task(replace(info, label=f"{info.label} n={size}"))

            part = run_suite(tasks, learners, splitter=self.splits_at(size), folds=get("folds"), seed=get("seed"),
                             baseline=baseline, metrics=metrics, on_task=at_size if on_task else None, **hooks)
            for cell in part.cells:
                cell.row = str(size)
            if report is None:
                report = part
            else:
                report.cells += part.cells
                seen = {info.label: info for info in report.task_info}
                for info in part.task_info:  # one entry per task: its seconds over every size
                    if info.label in seen:
                        seen[info.label].seconds += info.seconds
                    else:
                        report.task_info.append(info)
                report.failures += [f for f in part.failures if f not in report.failures]
                report.seconds += part.seconds
            if part.interrupted:
                report.interrupted = True
                break
        report.row_title = "train docs"
        # the cells of a task, size by size (the order of its rows)
        order = {t.label: i for i, t in enumerate(report.tasks)}
        report.cells.sort(key=lambda c: order.get(c.task, len(order)))
        summarise(report)
        return report

    def caption(self, report) -> str:
        return f", {report.folds}-fold CV, trained on the first n documents of each fold"
