"""``curve``: test accuracy after each pass over the training data.

JMLR 2012 Figures 3-4 and EMNLP 2009 Figure 1 plot it to show that CW is near its best after one
pass while PA and the perceptron need several. The curve is averaged over the cross-validation
folds; each pass's model is exactly what ``fit(n_epochs=k)`` would return (see
:mod:`textcw.evaluation.training`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textcw.errors import ParameterError
from textcw.evaluation.cv import cross_validate
from textcw.evaluation.data import load_task
from textcw.evaluation.report import Report
from textcw.evaluation.specs import as_learner, as_task, check_specs
from textcw.evaluation.training import build, has_passes, one_thread
from textcw.plugins import deprecated_registries, in_registries

MAX_PASSES = 10


@dataclass
class CurveReport(Report):
    """Mean test accuracy (%) after passes ``1..len(passes)`` for each learner on one task."""

    task: str
    passes: list[int]
    accuracy: dict[str, list[float]] = field(default_factory=dict)
    n_folds: int = 0
    interrupted: bool = False


def curve(*, max_passes: int = MAX_PASSES, folds: int = 10, seed: int = 0, registries=None):
    """Evaluator factory: ``run(task, learners, settings=None, progress=None) -> CurveReport``.

    ``settings`` maps ``(learner label, 0.0)`` to ``(params, passes)`` as for ``cv``.
    """
    @one_thread
    def run(task, learners, settings=None, progress=None) -> CurveReport:
        task = as_task(task)
        learners = [as_learner(s) for s in learners]
        check_specs([task], learners, None)
        for spec in learners:
            if not has_passes(build(spec)):
                raise ParameterError(f"learner {spec.label!r} has no passes, so it has no learning curve")
        data = load_task(task, seed=seed)
        cv = cross_validate(data, learners, folds=folds, seed=seed, settings=settings, curves=True,
                            curve_passes=max_passes, progress=progress)
        accuracy = {c.learner: [100.0 - e for e in c.curve] for c in cv.cells}
        return CurveReport(task.label, list(range(1, max_passes + 1)), accuracy, cv.n_folds, cv.interrupted)

    return in_registries(deprecated_registries(registries, "textcw.evaluation.evaluators.curve"), run)
