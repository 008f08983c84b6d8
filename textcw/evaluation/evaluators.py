"""The evaluators: named library functions, one per measurement of the papers' protocol.

Each is a factory: it takes options, checks them, and returns a runner that does the work and
returns a report with ``to_dict()``. Their runners take different arguments (a list of tasks, one
task, a corpus and a learner, a table of errors), because they answer different questions.
``textcw evaluate`` dispatches on the registered designs, metrics and comparisons of
:mod:`textcw.evaluation.contract` instead (the designs ``cv``, ``holdout``, ``noise``, ``tune``,
``timing`` and ``curve`` run :func:`textcw.evaluation.suite.run_suite`, as ``cv`` and ``noise``
below do; the designs ``online`` and ``combination`` count what ``online`` and ``combination``
below count, cell by cell; the ``curve`` design is over training sizes, the ``curve`` below over
passes; :mod:`textcw.evaluation.designs`); call these by name::

    from textcw.evaluation.evaluators import cv, mcnemar, tune
    report = cv(folds=10, tune=True)(["newsgroups:comp"], ["cw-var", "pa1"], baseline="pa1")

========================  ==============================================================
``holdout(**options)``    ``run(corpus, learner, **train_options) -> TrainResult``
``cv(...)``               ``run(tasks, learners, *, baseline=None, progress=None) -> SuiteReport``
``noise(...)``            the same, at every label-noise level (AROW 2013 section 5.3)
``tune(...)``             ``run(task, learners, noise=0.0) -> TuneReport``
``mcnemar(...)``          ``run(y_true, predicted_a, predicted_b) -> McNemarResult``
``curve(...)``            ``run(task, learners, settings=None, progress=None) -> CurveReport``
``online(...)``           ``run(task, learners, settings=None) -> OnlineReport``
``rank(...)``             ``run({task: {learner: error}}, learners=None) -> RankReport``
``timing(...)``           ``run(task, learners, settings=None) -> TimingReport``
``calibration(...)``      ``run(corpus, learner, *, params=None, ...) -> CalibrationReport``
``combination(...)``      ``run(task, learners=("cw-var", "pa"), progress=None) -> CombinationReport``
========================  ==============================================================

A runner uses the registries in use when it is called (:func:`textcw.plugins.use_registries`).
The factories' ``registries=`` keyword is deprecated (a ``FutureWarning``,
:func:`textcw.plugins.deprecated_registries`); given, the runner still runs within
``use_registries(registries)``.
"""

from __future__ import annotations

from textcw.evaluation.calibration import calibration
from textcw.evaluation.combination import combination
from textcw.evaluation.curve import curve
from textcw.evaluation.holdout import holdout
from textcw.evaluation.mcnemar import mcnemar
from textcw.evaluation.noise import check_noise
from textcw.evaluation.online import online
from textcw.evaluation.rank import rank
from textcw.evaluation.specs import as_learner, as_task, check_specs
from textcw.evaluation.suite import run_suite, tuning_run
from textcw.evaluation.timing import timing
from textcw.evaluation.training import one_thread
from textcw.evaluation.tune import DEV_SIZE, MAX_PASSES, TuneReport
from textcw.plugins import deprecated_registries, in_registries

__all__ = ["calibration", "combination", "curve", "cv", "holdout", "mcnemar", "noise", "online", "rank",
           "timing", "tune"]


def cv(*, folds: int = 10, seed: int = 0, tune: bool = False, quick: bool = False, registries=None):
    """Stratified seeded k-fold cross-validation: ``run(tasks, learners, *, baseline=None,
    progress=None) -> SuiteReport``.

    ``tasks`` are ``corpus:task`` names or :class:`~textcw.evaluation.specs.TaskSpec`;
    ``learners`` are ``NAME[:KEY=VALUE...]`` or :class:`~textcw.evaluation.specs.LearnerSpec`.
    """

    def run(tasks, learners, *, baseline=None, progress=None):
        return run_suite(tasks, learners, folds=folds, seed=seed, tune=tune, quick=quick,
                         baseline=baseline, progress=progress)

    return in_registries(deprecated_registries(registries, "textcw.evaluation.evaluators.cv"), run)


def noise(*, levels=(0.0, 0.05, 0.1, 0.15, 0.2, 0.3), folds: int = 10, seed: int = 0, tune: bool = True,
          registries=None):
    """Cross-validation at every label-noise level: ``run(tasks, learners, *, baseline=None,
    progress=None) -> SuiteReport``.

    The defaults are the binary noise levels of AROW 2013 section 5.3.
    """
    for p in levels:
        check_noise(p)

    def run(tasks, learners, *, baseline=None, progress=None):
        return run_suite(tasks, learners, folds=folds, seed=seed, tune=tune, noise=list(levels),
                         baseline=baseline, progress=progress)

    return in_registries(deprecated_registries(registries, "textcw.evaluation.evaluators.noise"), run)


def tune(*, quick: bool = False, max_passes: int = MAX_PASSES, dev_size: float = DEV_SIZE, seed: int = 0,
         registries=None):
    """Parameters and passes chosen on one tuning run: ``run(task, learners, noise=0.0) -> TuneReport``.

    ``task`` is a :class:`~textcw.evaluation.specs.TaskSpec` or a ``corpus:task`` name;
    ``learners`` are :class:`~textcw.evaluation.specs.LearnerSpec` or ``NAME[:KEY=VALUE]``.
    """

    @one_thread
    def run(task, learners, noise: float = 0.0) -> TuneReport:
        task = as_task(task)
        learners = [as_learner(s) for s in learners]
        check_specs([task], learners, None)
        return TuneReport(task.label, tuning_run(task, learners, noise=noise, quick=quick,
                                                 max_passes=max_passes, dev_size=dev_size, seed=seed))

    return in_registries(deprecated_registries(registries, "textcw.evaluation.evaluators.tune"), run)
