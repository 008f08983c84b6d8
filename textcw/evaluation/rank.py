"""``rank``: the mean rank of each learner across tasks.

JMLR 2012 Table 2 and AROW 2013 Table 1 summarise many tasks this way: on each task the
learners are ranked by error (1 = lowest) and each learner's ranks are averaged over the tasks.
Ties share the best of the ranks they span ("competition" ranking,
``scipy.stats.rankdata(method="min")``): with it the mean ranks of JMLR 2012 Table 2 follow
exactly from the table's own numbers (2.53, 2.35, 5.29, 2.47, 4.53, 3.59), which average ranks
do not (2.56, 2.38, ...). Only tasks on which every learner has a result are ranked, so the
ranks are comparable.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import rankdata

from textcw.errors import InputError
from textcw.evaluation.report import Report


@dataclass
class RankReport(Report):
    """Attributes
    ----------
    learners : list of str
    mean_rank : dict
        ``learner -> mean rank`` over ``tasks``.
    ranks : dict
        ``task -> {learner: rank}``.
    tasks : list of str
        The tasks ranked (those where every learner has a result).
    skipped : list of str
        Tasks left out because some learner had no result there.
    """

    learners: list[str]
    mean_rank: dict[str, float]
    ranks: dict[str, dict[str, float]] = field(default_factory=dict)
    tasks: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def mean_ranks(errors: dict[str, dict[str, float]], learners: list[str] | None = None,
               *, decimals: int | None = 2, ties: str = "min") -> RankReport:
    """Rank ``learners`` on every task of ``errors`` (``task -> {learner: error}``).

    ``decimals`` rounds the errors first, as the tables print them, so that learners the table
    shows as tied are ranked as tied (``None`` compares the exact values). ``ties`` is a
    ``scipy.stats.rankdata`` method: ``"min"`` (the papers'), ``"average"``, ...
    """
    if learners is None:
        learners = sorted({name for row in errors.values() for name in row})
    if len(set(learners)) != len(learners):
        raise InputError(f"learner names repeat: {learners}")
    ranks, tasks, skipped = {}, [], []
    for task, row in errors.items():
        values = [row.get(name) for name in learners]
        if any(v is None or not np.isfinite(v) for v in values):
            skipped.append(task)
            continue
        values = np.asarray(values, dtype=float)
        if decimals is not None:
            values = np.round(values, decimals)
        ranks[task] = dict(zip(learners, rankdata(values, method=ties).astype(float).tolist()))
        tasks.append(task)
    mean = {name: (float(np.mean([ranks[t][name] for t in tasks])) if tasks else None) for name in learners}
    return RankReport(list(learners), mean, ranks, tasks, skipped)


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


def rank_by_metric(report, metric: str) -> dict[str, RankReport]:
    """``{str(noise): RankReport}``: each learner's mean rank over the tasks every learner of
    ``report`` (a :class:`~textcw.evaluation.suite.SuiteReport`) finished, at each noise rate,
    from the means of ``metric`` (1 = best: the lowest, or the highest when the metric's
    ``better`` is ``"higher"``; ties share the best rank)."""
    sign = -1.0 if report.metric(metric)["better"] == "higher" else 1.0
    labels = [s.label for s in report.learners]
    ranks = {}
    for p in report.noise:
        means = {task: {name: sign * value for name, value in row.items()}
                 for task, row in metric_means(report, metric, p).items()}
        ranks[str(p)] = mean_ranks(means, labels)
    return ranks


def rank(*, decimals: int | None = 2, ties: str = "min"):
    """Evaluator factory: ``run(errors, learners=None) -> RankReport``."""

    def run(errors, learners=None) -> RankReport:
        return mean_ranks(errors, learners, decimals=decimals, ties=ties)

    return run
