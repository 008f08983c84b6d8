"""``timing``: seconds to train one model, as in JMLR 2012 Table 5.

"Training times in seconds for a single training run (averaged over 10 trials)"; the online
times "include the multiple iterations selected for each online learning experiment". Here each
learner is fitted ``repeats`` times on the training part of the first fold (features computed
once, so only training is timed) with its chosen parameters and passes.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from textcw.evaluation.data import featurize, fold_indices, load_task
from textcw.evaluation.report import Report
from textcw.evaluation.specs import as_learner, as_task, check_specs
from textcw.evaluation.training import build, fit_timed, one_thread
from textcw.plugins import deprecated_registries, in_registries

REPEATS = 10


@dataclass
class TimingResult(Report):
    learner: str
    params: dict
    passes: int | None
    n_train: int
    seconds: list[float]
    mean_seconds: float
    min_seconds: float


@dataclass
class TimingReport(Report):
    task: str
    results: list[TimingResult] = field(default_factory=list)


def timing(*, repeats: int = REPEATS, folds: int = 10, seed: int = 0, registries=None):
    """Evaluator factory: ``run(task, learners, settings=None) -> TimingReport``.

    ``settings`` maps ``(learner label, 0.0)`` to ``(params, passes)`` as for ``cv``.
    """
    @one_thread
    def run(task, learners, settings=None) -> TimingReport:
        task = as_task(task)
        learners = [as_learner(s) for s in learners]
        check_specs([task], learners, None)
        data = load_task(task, seed=seed)
        train, test = fold_indices(data, folds, seed)[0]
        X_train, _ = featurize(data, train, test)
        y_train = data.labels[train]
        out = TimingReport(task.label)
        for spec in learners:
            params, passes = (settings or {}).get((spec.label, 0.0), ({}, None))
            seconds = []
            for _ in range(repeats):
                est = build(spec, params, passes, seed=seed)
                seconds.append(fit_timed(est, X_train, y_train))
            used = est.get_params(deep=False).get("n_epochs")
            out.results.append(TimingResult(spec.label, dict(params), used, int(X_train.shape[0]), seconds,
                                            statistics.fmean(seconds), min(seconds)))
        return out

    return in_registries(deprecated_registries(registries, "textcw.evaluation.evaluators.timing"), run)
