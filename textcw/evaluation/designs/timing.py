"""The ``timing`` design: training seconds of one model, repeated (JMLR 2012 Table 5)."""

from __future__ import annotations

import numpy as np

from textcw.evaluation.contract import Option, SplitDesign, Verdict
from textcw.evaluation.data import fold_indices
from textcw.evaluation.designs.options import QUICK, SAMPLE, SEED, TUNE

__all__ = ["Timing"]


class Timing(SplitDesign):
    """Training seconds of one model, as in JMLR 2012 Table 5 ("a single training run,
    averaged over 10 trials"): each learner is fitted ``repeats`` times on the training part of
    the first of ``folds`` stratified folds (each fit one "fold" of the cell, timed by
    :func:`textcw.evaluation.training.fit_timed`: ``fit`` only, featurizing excluded) and tested
    on that fold's test part. The metric tables show the (identical, seeded) test values; the
    design's own table, ``timing`` in the report's ``verdicts``, the seconds."""

    options = {"repeats": Option("int", 10, "fits per learner (each one timed)", minimum=1, maximum=1000),
               "folds": Option("int", 10, "the fold whose training part is timed is the first of this many",
                               minimum=2),
               "sample": SAMPLE, "seed": SEED, "tune": TUNE, "quick": QUICK}

    def splits(self, task, seed):
        return [fold_indices(task, self.settings["folds"], seed)[0]] * self.settings["repeats"]

    def run(self, tasks, learners, *, metrics, baseline=None, **hooks):
        report = super().run(tasks, learners, metrics=metrics, baseline=baseline, **hooks)
        report.folds = self.settings["folds"]
        report.verdicts["timing"] = self.seconds_table(report)
        return report

    def seconds_table(self, report) -> Verdict:
        """Mean training seconds per fit (and the fastest fit) of every task x learner."""
        labels = [s.label for s in report.learners]
        rows = []
        for info in report.task_info:
            cells = [report.cell(info.label, name) for name in labels]
            rows.append([info.label, *["–" if c is None or not c.train_seconds else
                                       f"{np.mean(c.train_seconds):.4f} (min {min(c.train_seconds):.4f})"
                                       for c in cells]])
        return Verdict(f"training seconds per fit, mean of {self.settings['repeats']} (fit only, on the first "
                       f"of {self.settings['folds']} folds' training part)", ["task", *labels], rows)

    def caption(self, report) -> str:
        return f", first of {self.settings['folds']} folds, fitted {self.settings['repeats']} times"
