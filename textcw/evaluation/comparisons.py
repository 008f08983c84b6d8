"""The built-in comparisons (hook ``register_comparisons``): ``mcnemar``, ``rank``, ``bootstrap``.

``mcnemar`` marks each learner's cell with the significance of McNemar's test against the
baseline on the same documents (JMLR 2012 Tables 3-4), ``rank`` adds each learner's mean rank
over the tasks (JMLR 2012 Table 2); both show in the metric's table. ``bootstrap`` concludes
with a table of its own: a paired percentile bootstrap interval of each learner's error minus
the baseline's, resampling the documents (Efron and Tibshirani 1993, chapter 13).
"""

from __future__ import annotations

import numpy as np

from textcw.evaluation.contract import Comparison, Option, Verdict
from textcw.evaluation.folds import UNTESTED, WRONG
from textcw.evaluation.mcnemar import against_baseline
from textcw.evaluation.rank import cell_mean, metric_means, rank_by_metric

# cell_mean and metric_means live in textcw.evaluation.rank (the tables and the ranks read them);
# they stay importable from here.
__all__ = ["Bootstrap", "McNemar", "Rank", "cell_mean", "metric_means"]


class McNemar(Comparison):
    """McNemar's test of every learner against the baseline, per task and noise rate, on the
    documents both were tested on (:func:`textcw.evaluation.mcnemar.against_baseline`); the
    marks show in the metric's table."""

    needs_baseline = marks_table = True

    def __call__(self, report, *, metric, baseline):
        report.comparisons = against_baseline(report, baseline)
        return None


class Rank(Comparison):
    """Each learner's mean rank over the tasks every learner finished (1 = best, ties share the
    best rank), from the metric's means as the table rounds them
    (:func:`textcw.evaluation.rank.rank_by_metric`); the row shows in the table."""

    marks_table = True

    def __call__(self, report, *, metric, baseline):
        report.ranks = rank_by_metric(report, metric)
        return None


class Bootstrap(Comparison):
    """Paired percentile bootstrap interval of (learner's error - baseline's error), in
    percentage points, per task at each noise rate: an interval off zero is a difference."""

    needs_baseline = True
    options = {"rounds": Option("int", 1000, "bootstrap resamples", minimum=100, maximum=100_000),
               "level": Option("float", 0.95, "confidence level of the interval", minimum=0.5, maximum=0.999),
               "seed": Option("int", 0, "seed of the resampling", minimum=0)}

    def __call__(self, report, *, metric, baseline):
        rounds, level = self.settings["rounds"], self.settings["level"]
        rows = []
        for cell in report.cells:
            base = report.cell(cell.task, baseline, cell.noise, cell.row)
            if cell.learner == baseline or base is None:
                continue
            both = [i for i, (a, b) in enumerate(zip(cell.outcomes, base.outcomes)) if a != UNTESTED and b != UNTESTED]
            if not both:
                continue
            wrong = np.asarray([cell.outcomes[i] == WRONG for i in both], dtype=float)
            wrong_base = np.asarray([base.outcomes[i] == WRONG for i in both], dtype=float)
            diff = 100.0 * (wrong - wrong_base)
            rng = np.random.default_rng([self.settings["seed"], len(rows)])
            means = np.empty(rounds)
            for r in range(rounds):  # one resample at a time: memory stays one document list
                means[r] = diff[rng.integers(0, diff.size, diff.size)].mean()
            low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
            rows.append([report.row_label(cell.task, cell.row), f"{cell.noise:g}", cell.learner, f"{diff.mean():+.2f}",
                         f"[{low:+.2f}, {high:+.2f}]", "yes" if low > 0 or high < 0 else "no"])
        return Verdict(f"error minus {baseline}'s (percentage points), {level:.0%} bootstrap interval",
                       ["task", "noise", "learner", "difference", "interval", "differs"], rows)
