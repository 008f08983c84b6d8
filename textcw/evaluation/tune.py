"""``tune``: the papers' protocol for hyperparameters and passes.

"Classifier parameters and the number of training iterations (up to 10) were tuned for each
classification task on a single randomized run over the data" (JMLR 2012 section 7.6; the same
in EMNLP 2009 section 6.2 and AROW 2013 section 5.1). Here the run is one seeded stratified
split of the task's training pool (see :func:`textcw.evaluation.data.dev_split`), the size of
one fold held out; every grid point is trained for up to ``max_passes`` passes, scored on the
held-out part after each pass, and the lowest error wins. Held-out sets are small (a few hundred
documents), so several grid points often tie: the middle one of the tied points (in grid order)
is taken, rather than an end of the grid, with its fewest passes that reach the error. The
winners are then fixed for every fold.

With label noise the tuning run's labels are noisy too (all labels a user has are the noisy
ones). For symmetric binary noise the expected noisy error is ``p + (1 - 2p) * clean error``, so
the ranking of the grid points is unchanged in expectation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from textcw.evaluation.grids import grid_for, grid_points
from textcw.evaluation.report import Report
from textcw.evaluation.specs import LearnerSpec
from textcw.evaluation.training import build, error_percent, fit_timed, has_passes, predictions_per_pass

MAX_PASSES = 10
DEV_SIZE = 0.1


@dataclass
class GridPoint(Report):
    """One grid point's held-out error (%) after each pass (one entry if it has no passes)."""

    params: dict
    errors: list[float]


@dataclass
class TuneResult(Report):
    """The chosen parameters of one learner on one task.

    Attributes
    ----------
    task, learner : str
    params : dict
        The chosen grid point (the spec's fixed parameters are not repeated here).
    passes : int or None
        The chosen number of passes (None for learners without passes).
    dev_error : float
        Held-out error (%) of the choice on the tuning run.
    noise : float
    n_train, n_dev : int
    grid : list of GridPoint
    seconds : float
    """

    task: str
    learner: str
    params: dict
    passes: int | None
    dev_error: float
    noise: float = 0.0
    n_train: int = 0
    n_dev: int = 0
    grid: list[GridPoint] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class TuneReport(Report):
    """The tuning run of several learners on one task."""

    task: str
    results: list[TuneResult] = field(default_factory=list)


def tune_learner(spec: LearnerSpec, X_train, y_train, X_dev, y_dev, *, task: str = "", noise: float = 0.0,
                 grid: dict | None = None, quick: bool = False, max_passes: int = MAX_PASSES,
                 seed: int = 0) -> TuneResult:
    """Search the grid (default: :func:`grid_for`) on one train/held-out split."""
    t0 = time.perf_counter()
    if grid is None:
        grid = grid_for(spec.name, spec.params, quick=quick)
    points, with_passes = [], False
    for point in grid_points(grid):
        est = build(spec, point, seed=seed)
        with_passes = has_passes(est)
        if with_passes:
            errors = [error_percent(y_dev, pred)
                      for _, pred, _ in predictions_per_pass(est, X_train, y_train, X_dev, max_passes)]
        else:
            fit_timed(est, X_train, y_train)
            errors = [error_percent(y_dev, est.predict(X_dev))]
        points.append(GridPoint(point, errors))
    chosen, passes, error = choose(points)
    return TuneResult(task, spec.label, dict(chosen.params), passes if with_passes else None, error, noise,
                      int(X_train.shape[0]), int(X_dev.shape[0]), points, time.perf_counter() - t0)


def choose(points: list[GridPoint]) -> tuple[GridPoint, int, float]:
    """``(grid point, passes, error)``: the lowest error; among tied points the middle one (in grid
    order, the lower middle for an even number), with the fewest passes reaching that error."""
    best = min(min(p.errors) for p in points)
    tied = [p for p in points if min(p.errors) == best]
    point = tied[(len(tied) - 1) // 2]
    return point, point.errors.index(best) + 1, best
