"""The kit's checks of evaluation components: metrics and designs (:mod:`textcw.evaluation.contract`).

One pytest item per check, as for learners and featurizers::

    from textcw.testing import design_under_test, metric_under_test, parametrize_with_checks

    @parametrize_with_checks([metric_under_test(AUCPerClass), design_under_test(ShuffleSplit, rounds=2)])
    def test_evaluation_contract(component, check):
        check(component)

A metric is checked on seeded synthetic folds (two, three and five classes by default, 60
documents each, with labels, decision scores and probabilities), skipping the folds it declares
it does not apply to (:meth:`~textcw.evaluation.contract.Metric.applies` false, or ``None``
returned), though it must apply to one of them; a design runs on the built-in
``synthetic-text`` corpus (no download) with the perceptron and PA.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from textcw.errors import ParameterError, PluginError
from textcw.evaluation.contract import NEEDS, Design, Fold, Metric, Option, SplitDesign
from textcw.evaluation.cv import check_splits
from textcw.evaluation.data import load_task
from textcw.evaluation.measures import Error
from textcw.evaluation.specs import PROTOCOLS, TaskSpec
from textcw.testing.runner import Check, Component, fail

__all__ = ["DESIGN_CHECKS", "METRIC_CHECKS", "check_design", "check_metric", "design_under_test",
           "metric_under_test"]

N_DOCS = 60
N_CLASSES = (2, 3, 5)  # five: a top-k metric (k=3) applies
TASK = "synthetic-text:160"
LEARNERS = ("perceptron", "pa")


@dataclass(frozen=True)
class MetricSubject:
    factory: Callable[..., Metric]
    options: Mapping[str, Any]
    n_classes: Sequence[int]

    def make(self) -> Metric:
        return self.factory(**self.options)


@dataclass(frozen=True)
class DesignSubject:
    factory: Callable[..., Design]
    options: Mapping[str, Any]
    task: str = TASK
    learners: Sequence[str] = LEARNERS
    cache: dict = field(default_factory=dict, compare=False)

    def make(self) -> Design:
        return self.factory(**self.options)

    def report(self):
        """One run of the design (shared by the checks that read it)."""
        if "report" not in self.cache:
            self.cache["report"] = self.make().run([self.task], list(self.learners), metrics={"error": Error()})
        return self.cache["report"]


# ======================================================================================= folds
def make_fold(n_classes: int, *, seed: int = 0, quality: str = "noisy", needs=NEEDS) -> Fold:
    """A seeded fold of ``N_DOCS`` documents: ``quality`` is ``perfect`` (every prediction right,
    scores and probabilities confident in the truth), ``wrong`` (every prediction wrong and
    confident in it) or ``noisy`` (about 70% right). Scores/probabilities not in ``needs`` are None."""
    rng = np.random.default_rng([seed, n_classes])
    labels = np.asarray([f"c{k}" for k in range(n_classes)], dtype=object)
    truth = np.arange(N_DOCS) % n_classes
    rng.shuffle(truth)
    if quality == "perfect":
        predicted = truth
    elif quality == "wrong":
        predicted = (truth + 1) % n_classes
    else:
        predicted = np.where(rng.random(N_DOCS) < 0.7, truth, rng.integers(0, n_classes, N_DOCS))
    scores = rng.normal(0.0, 0.1, (N_DOCS, n_classes))
    scores[np.arange(N_DOCS), predicted] += 2.0
    proba = np.exp(scores) / np.exp(scores).sum(axis=1, keepdims=True)
    if n_classes == 2:
        scores = scores[:, 1] - scores[:, 0]
    return Fold(labels[truth], labels[predicted], labels, scores if "scores" in needs else None,
                proba if "proba" in needs else None, labels)


def _read_only(fold: Fold) -> Fold:
    for value in (fold.y_true, fold.y_pred, fold.classes, fold.scores, fold.proba, fold.labels):
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return fold


def _value(metric: Metric, fold: Fold, what: str):
    """The metric's value on ``fold``, checked; ``None`` where it does not apply."""
    applies = metric.applies(fold)
    if not isinstance(applies, (bool, np.bool_)):
        fail(f"applies() returned {applies!r} on {what}; return True or False")
    value = metric(fold) if applies else None
    if value is None:
        return None
    if metric.per_class:
        if not isinstance(value, Mapping) or not value:
            fail(f"it declares per_class but returned {value!r} on {what}; return {{class: number}}")
        unknown = sorted(set(map(str, value)) - {str(c) for c in fold.labels})
        if unknown:
            fail(f"its per-class keys {unknown} are not the fold's classes {list(fold.labels)}")
        numbers = list(value.values())
    else:
        if isinstance(value, Mapping):
            fail(f"it returned a mapping on {what} but does not declare per_class = True")
        numbers = [value]
    for number in numbers:
        if isinstance(number, bool) or not isinstance(number, (int, float, np.integer, np.floating)) \
                or not np.isfinite(number):
            fail(f"it returned {value!r} on {what}; a metric returns finite numbers")
    return value


# ============================================================================== metric checks
def metric_declares_its_contract(subject: MetricSubject) -> None:
    metric = subject.make()
    if not isinstance(metric, Metric):
        fail(f"it built a {type(metric).__name__}; subclass textcw.evaluation.contract.Metric")
    needs = metric.needs
    if not isinstance(needs, frozenset) or not needs or not needs <= set(NEEDS):
        fail(f"needs={needs!r}; declare a frozenset among {NEEDS}")
    if metric.better not in ("lower", "higher"):
        fail(f"better={metric.better!r}; declare 'lower' or 'higher'")
    if not isinstance(metric.title, str) or not metric.title.strip():
        fail("it has no title; declare title = '...' (the heading of its table)")
    if not all(isinstance(o, Option) for o in type(metric).options.values()):
        fail("its options must map names to textcw.evaluation.contract.Option")


def refuses_unknown_options(subject) -> None:
    declared = type(subject.make()).options
    bogus = "no_such_option_" + "x" * 3
    try:
        subject.factory(**subject.options, **{bogus: 1})
    except ParameterError as exc:
        if bogus not in str(exc):
            fail(f"it refused an unknown option without naming it: {exc}")
        return
    fail(f"it accepted the undeclared option {bogus!r}; its options are {sorted(declared)}: call "
         "super().__init__(**options) so they are checked")


def returns_finite_values(subject: MetricSubject) -> None:
    metric = subject.make()
    applied = [n for n in subject.n_classes
               if [_value(metric, make_fold(n, quality=quality), f"a {n}-class {quality} fold")
                   for quality in ("noisy", "perfect", "wrong")] != [None] * 3]
    if not applied:
        fail(f"it applies to none of the folds it is checked on ({', '.join(map(str, subject.n_classes))} "
             "classes), so nothing of it is checked; pass n_classes= with class counts it applies to")


def reads_only_what_it_declares(subject: MetricSubject) -> None:
    metric = subject.make()
    for n in subject.n_classes:
        fold = make_fold(n, needs=metric.needs)
        try:
            if metric.applies(fold):
                metric(fold)
        except Exception as exc:
            missing = [k for k in NEEDS if k not in metric.needs]
            fail(f"it failed on a fold holding only what it declares ({sorted(metric.needs)}; "
                 f"{', '.join(missing) or 'nothing'} left out): {type(exc).__name__}: {exc}; "
                 "add what it reads to needs")


def leaves_the_fold_alone(subject: MetricSubject) -> None:
    metric = subject.make()
    for n in subject.n_classes:
        fold = _read_only(make_fold(n))
        try:
            if metric.applies(fold):
                metric(fold)
        except ValueError as exc:
            if "read-only" in str(exc):
                fail(f"it writes into the fold's arrays ({exc}); copy what it changes")
            raise


def is_deterministic_and_order_free(subject: MetricSubject) -> None:
    metric = subject.make()
    for n in subject.n_classes:
        fold = make_fold(n)
        first, again = _value(metric, fold, "a fold"), _value(metric, fold, "the same fold")
        order = np.random.default_rng(1).permutation(N_DOCS)
        shuffled = Fold(fold.y_true[order], fold.y_pred[order], fold.classes, fold.scores[order],
                        fold.proba[order], fold.labels)
        permuted = _value(metric, shuffled, "the fold's documents in another order")
        if first is None and again is None and permuted is None:
            continue  # not applicable to this fold
        if not _close(first, again):
            fail(f"two calls on the same fold gave {first!r} and {again!r}")
        if not _close(first, permuted):
            fail(f"reordering the documents changed it from {first!r} to {permuted!r}")


def prefers_right_predictions(subject: MetricSubject) -> None:
    metric = subject.make()
    for n in subject.n_classes:
        right = _value(metric, make_fold(n, quality="perfect"), "a perfect fold")
        wrong = _value(metric, make_fold(n, quality="wrong"), "an all-wrong fold")
        if right is None or wrong is None:
            continue  # not applicable to this fold
        pairs = [(right[k], wrong[k]) for k in right if k in wrong] if metric.per_class else [(right, wrong)]
        for r, w in pairs:
            if (metric.better == "lower" and not r < w) or (metric.better == "higher" and not r > w):
                fail(f"with better={metric.better!r}, perfect predictions score {r!r} and all-wrong "
                     f"ones {w!r} on {n} classes; check the direction or the formula")


def _close(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, Mapping):
        return isinstance(b, Mapping) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return bool(np.isclose(a, b, rtol=1e-9, atol=1e-12))


METRIC_CHECKS = tuple(Check(f.__name__.removeprefix("metric_"), f) for f in (
    metric_declares_its_contract, refuses_unknown_options, returns_finite_values,
    reads_only_what_it_declares, leaves_the_fold_alone, is_deterministic_and_order_free,
    prefers_right_predictions))


# ============================================================================== design checks
def design_declares_its_contract(subject: DesignSubject) -> None:
    design = subject.make()
    if not isinstance(design, Design):
        fail(f"it built a {type(design).__name__}; subclass textcw.evaluation.contract.Design "
             "(or SplitDesign)")
    if not all(isinstance(o, Option) for o in type(design).options.values()):
        fail("its options must map names to textcw.evaluation.contract.Option")
    if design.protocol not in PROTOCOLS:
        fail(f"protocol={design.protocol!r}; declare one of {PROTOCOLS}")
    if not isinstance(design.caption(subject.report()), str):
        fail("caption(report) must return a string")


def splits_are_disjoint_and_seeded(subject: DesignSubject) -> None:

    design = subject.make()
    if not isinstance(design, SplitDesign):
        return  # a design with its own run() has no splits to check
    task = load_task(TaskSpec(subject.task, design.protocol), seed=0)
    try:
        first, again = (check_splits(task, design.splits(task, 0), design=type(design).__name__) for _ in "12")
    except PluginError as exc:  # names the design, the split and what is wrong
        fail(str(exc))
    if len(first) != len(again) or any(not (np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]))
                                       for a, b in zip(first, again)):
        fail("two calls of splits(task, seed) with the same seed gave different splits; seed the splitter")


def runs_a_table_of_folds(subject: DesignSubject) -> None:
    report = subject.report()
    if report.failures:
        fail(f"the run failed: {'; '.join(report.failures)}")
    rows = {}
    for c in report.cells:
        if c.noise == report.noise[0]:
            rows.setdefault((c.task, c.row), []).append(c.learner)
    if not rows or any(learners != list(subject.learners) for learners in rows.values()):
        fail(f"it should give one cell per learner, in order, in every row of the table; got "
             f"{[c.learner for c in report.cells]}")
    for cell in report.cells:
        if not cell.complete or cell.n_folds < 1:
            fail(f"{cell.learner}: {len(cell.fold_errors)} of {cell.n_folds} folds finished")
        if cell.metrics.get("error") != cell.fold_errors:
            fail(f"{cell.learner}: the error metric's fold values {cell.metrics.get('error')} are not the "
                 f"folds' errors {cell.fold_errors}; pass metrics= on to run_suite")
        if not any(ch in "01" for ch in cell.outcomes):
            fail(f"{cell.learner}: no document was tested")


def is_seeded(subject: DesignSubject) -> None:
    first = subject.report()
    again = subject.make().run([subject.task], list(subject.learners), metrics={"error": Error()})
    if [(c.outcomes, c.fold_errors) for c in first.cells] != [(c.outcomes, c.fold_errors) for c in again.cells]:
        fail("two runs with the same options gave different results; seed every random choice")


def report_round_trips(subject: DesignSubject) -> None:
    report = subject.report()
    if type(report).from_json(report.to_json()) != report:
        fail("its report does not survive to_json/from_json unchanged; keep to plain data")


DESIGN_CHECKS = tuple(Check(f.__name__.removeprefix("design_"), f) for f in (
    design_declares_its_contract, refuses_unknown_options, splits_are_disjoint_and_seeded,
    runs_a_table_of_folds, is_seeded, report_round_trips))


# ============================================================================== entry points
def _name(factory, name):
    return name or getattr(factory, "__qualname__", None) or repr(factory)


def metric_under_test(factory: Callable[..., Metric], *, name: str | None = None,
                      n_classes: Sequence[int] = N_CLASSES, expected_failures: dict[str, str] | None = None,
                      **options: Any) -> Component:
    """A metric as the checks take it (:data:`METRIC_CHECKS`), built as ``factory(**options)``;
    ``n_classes`` are the class counts of the folds it is checked on (``(2,)`` for a metric
    that only makes sense for two classes, or a cost matrix of two). Folds the metric does not
    apply to are skipped; it must apply to one of them."""
    return Component("metric", _name(factory, name), MetricSubject(factory, options, tuple(n_classes)),
                     METRIC_CHECKS, expected_failures)


def design_under_test(factory: Callable[..., Design], *, name: str | None = None, task: str = TASK,
                      learners: Sequence[str] = LEARNERS, expected_failures: dict[str, str] | None = None,
                      **options: Any) -> Component:
    """A design as the checks take it (:data:`DESIGN_CHECKS`), built as ``factory(**options)``
    and run on ``task`` (a registered ``corpus:task``) with ``learners``."""
    return Component("design", _name(factory, name), DesignSubject(factory, options, task, tuple(learners)),
                     DESIGN_CHECKS, expected_failures)


def check_metric(factory, **kwargs) -> None:
    """Run every metric check, stopping at the first failure (see :func:`metric_under_test`).

    ``metric_declares_its_contract`` (a :class:`~textcw.evaluation.contract.Metric` with
    ``needs``, ``better``, ``title`` and ``Option`` options), ``refuses_unknown_options``,
    ``returns_finite_values`` (a finite number, or ``{class: number}`` for a per-class metric,
    on noisy, perfect and all-wrong folds; ``applies(fold)`` a bool, true for some fold),
    ``reads_only_what_it_declares`` (works on a fold
    without the scores/probabilities it does not declare), ``leaves_the_fold_alone`` (the
    arrays are read-only), ``is_deterministic_and_order_free`` and ``prefers_right_predictions``.
    """
    metric_under_test(factory, **kwargs).check_all()


def check_design(factory, **kwargs) -> None:
    """Run every design check, stopping at the first failure (see :func:`design_under_test`).

    ``design_declares_its_contract``, ``refuses_unknown_options``,
    ``splits_are_disjoint_and_seeded`` (a :class:`~textcw.evaluation.contract.SplitDesign`'s
    splits: index arrays into the task, non-empty, train and test disjoint, no training on the
    corpus's test split with the ``split`` protocol, the same for the same seed), ``runs_a_table_of_folds`` (one complete cell per learner, in every row of the
    table, whose ``error`` values are its fold errors), ``is_seeded`` and ``report_round_trips``.
    """
    design_under_test(factory, **kwargs).check_all()
