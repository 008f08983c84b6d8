"""The built-in comparisons (hook ``register_comparisons``): ``mcnemar``, ``rank``, ``bootstrap``.

``mcnemar`` marks each learner's cell with the significance of McNemar's test against the
baseline on the same documents (JMLR 2012 Tables 3-4), ``rank`` adds each learner's mean rank
over the tasks (JMLR 2012 Table 2); both show in the metric's table. ``bootstrap`` concludes
with a table of its own: a paired percentile bootstrap interval of each learner's error minus
the baseline's, resampling the documents (Efron and Tibshirani 1993, chapter 13).
"""

from __future__ import annotations

import statistics

import numpy as np

from textcw.evaluation.contract import Comparison, Option, Verdict
from textcw.evaluation.mcnemar import mcnemar_test
from textcw.evaluation.rank import mean_ranks

__all__ = ["Bootstrap", "McNemar", "Rank", "cell_mean", "metric_means"]

UNTESTED = "."


def cell_mean(cell, metric: str) -> float | None:
    """The mean over the finished folds of a cell's scalar ``metric`` (None if some fold has no
    value, or the metric does not apply there); ``error`` falls back to the cell's own fold
    errors (a report built without metrics)."""
    values = cell.metrics.get(metric)
    if values is None:
        return cell.mean_error if metric == "error" else None
    if not values or any(v is None or isinstance(v, (dict, str)) for v in values):
        return None
    return statistics.fmean(values)


def metric_means(report, metric: str, noise: float = 0.0) -> dict[str, dict[str, float]]:
    """``task -> {learner: mean of metric}`` over the complete cells at one noise rate (a task
    with several rows, e.g. a learning curve's sizes, gives one entry per row)."""
    out: dict[str, dict[str, float]] = {}
    for c in report.cells:
        value = cell_mean(c, metric)
        if c.noise == noise and c.complete and value is not None:
            out.setdefault(report.row_label(c.task, c.row), {})[c.learner] = value
    return out


class McNemar(Comparison):
    """McNemar's test of every learner against the baseline, per task and noise rate, on the
    documents both were tested on; the marks show in the metric's table."""

    needs_baseline = marks_table = True

    def __call__(self, report, *, metric, baseline):
        from textcw.evaluation.suite import Comparison as Compared

        report.comparisons = []
        for cell in report.cells:
            if cell.learner == baseline:
                continue
            base = report.cell(cell.task, baseline, cell.noise, cell.row)
            if base is None:
                continue
            both = [i for i, (a, b) in enumerate(zip(cell.outcomes, base.outcomes)) if a != UNTESTED and b != UNTESTED]
            if not both:
                continue
            result = mcnemar_test([cell.outcomes[i] == "1" for i in both], [base.outcomes[i] == "1" for i in both])
            report.comparisons.append(Compared(cell.task, cell.learner, baseline, cell.noise, result, cell.row))
        return None


class Rank(Comparison):
    """Each learner's mean rank over the tasks every learner finished (1 = best, ties share the
    best rank), from the metric's means as the table rounds them; the row shows in the table."""

    marks_table = True

    def __call__(self, report, *, metric, baseline):
        sign = -1.0 if report.metric(metric)["better"] == "higher" else 1.0
        labels = [s.label for s in report.learners]
        report.ranks = {}
        for p in report.noise:
            means = {task: {name: sign * value for name, value in row.items()}
                     for task, row in metric_means(report, metric, p).items()}
            report.ranks[str(p)] = mean_ranks(means, labels)
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
            wrong = np.asarray([cell.outcomes[i] == "0" for i in both], dtype=float)
            wrong_base = np.asarray([base.outcomes[i] == "0" for i in both], dtype=float)
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
