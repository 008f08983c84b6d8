"""The evaluation contract: designs, metrics and comparisons, each registered through a hook.

``textcw evaluate --design cv --metric error,macro-f1 --compare rank`` names one of each kind:

- a :class:`Design` (hook ``register_evaluators``) runs tasks x learners and returns a table of
  per-fold results, a :class:`~textcw.evaluation.suite.SuiteReport` (a row per task, or per
  task and the cells' ``row``), and declares what its folds hold (``gives``): a metric that
  needs more is refused before the run (:func:`check_metrics`);
- a :class:`Metric` (hook ``register_metrics``) turns one fold's predictions (a :class:`Fold`)
  into a number or a ``{class: number}`` mapping, and declares what it reads (``needs``), so
  decision scores and probabilities are computed only when some chosen metric reads them;
- a :class:`Comparison` (hook ``register_comparisons``) turns the table into a verdict.

Each declares its options as ``options = {name: Option(...)}`` on the class; an option it does
not declare, or a value of the wrong kind, is a :class:`~textcw.errors.ParameterError` (a usage
error, exit 2, on the command line) with a "did you mean" for a near miss. Everything a plugin
needs is public here; see ``docs/plugins.md`` for a metric and a design of a few lines each.
"""

from __future__ import annotations

import json
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from textcw.errors import ParameterError, did_you_mean
from textcw.evaluation.folds import NOT_APPLICABLE, Fold, check_splits
from textcw.evaluation.report import Verdict
from textcw.evaluation.specs import as_task

if TYPE_CHECKING:
    from textcw.evaluation.data import TaskData
    from textcw.evaluation.suite import SuiteReport

__all__ = ["BETTER", "NEEDS", "NOT_APPLICABLE", "Comparison", "Design", "Fold", "Metric", "Option", "SplitDesign",
           "Verdict", "check_metrics", "check_options"]

NEEDS = ("labels", "scores", "proba")
"""What a metric may read of a fold: predicted labels, decision scores, probabilities."""
BETTER = ("lower", "higher")
"""What a metric's ``better`` may say: which values are better."""
KINDS = ("bool", "int", "float", "floats", "ints", "str", "path")
MAX_OPTION_FILE = 1 << 20  # a ``path`` option names a small file (a cost matrix), read whole
MAX_LIST = 100  # items of a ``floats``/``ints`` option: each is usually a run of its own


@dataclass(frozen=True)
class Option:
    """One declared option of a design, metric or comparison.

    Attributes
    ----------
    kind : str
        ``bool``, ``int``, ``float``, ``floats`` (a list of numbers), ``ints`` (a list of
        integers), ``str`` or ``path`` (an existing regular file of at most 1 MiB). A list may be
        given as one number or as comma-separated text (``sizes=100,400``, as the command line
        writes it).
    default : object
        The value when the option is not given; ``None`` means "none" and is always allowed.
    help : str
        One line for ``textcw list`` and error messages.
    minimum, maximum : float, optional
        Bounds of an ``int``, ``float`` or each of ``floats``.
    required : bool
        The option has no default: building the component without it is an error.
    """

    kind: str
    default: Any = None
    help: str = ""
    minimum: float | None = None
    maximum: float | None = None
    required: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Option kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def check(self, what: str, name: str, value: Any) -> Any:
        """``value`` as this option's kind, or a :class:`ParameterError` naming ``what``."""
        if value is None:
            if self.required:
                raise ParameterError(f"{what} needs {name}=...: {self.help}")
            return None
        kind = self.kind
        if kind in ("floats", "ints"):
            value = _as_list(value)
        ok = {"bool": lambda v: isinstance(v, bool),
              "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
              "float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
              "floats": lambda v: isinstance(v, (list, tuple)) and len(v) > 0
              and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v),
              "ints": lambda v: isinstance(v, (list, tuple)) and len(v) > 0
              and all(isinstance(x, int) and not isinstance(x, bool) for x in v),
              "str": lambda v: isinstance(v, str) and v != "",
              "path": lambda v: isinstance(v, (str, Path)) and str(v) != ""}[kind]
        if not ok(value):
            raise ParameterError(f"{what}: {name}={value!r} is invalid; give {_describe_kind(kind)} ({self.help})")
        if kind in ("floats", "ints") and len(value) > MAX_LIST:
            raise ParameterError(f"{what}: {name} has {len(value)} values; give at most {MAX_LIST} ({self.help})")
        if kind in ("int", "float", "floats", "ints"):
            for x in value if kind in ("floats", "ints") else [value]:
                if not math.isfinite(x) or (self.minimum is not None and x < self.minimum) or \
                        (self.maximum is not None and x > self.maximum):
                    raise ParameterError(f"{what}: {name}={value!r} is invalid; {self.help} "
                                         f"({_bounds(self.minimum, self.maximum)})")
            if kind == "float":
                return float(value)
            if kind == "floats":
                return [float(x) for x in value]
            if kind == "ints":
                return [int(x) for x in value]
        if kind == "path":
            path = Path(value)
            if not path.is_file():
                raise ParameterError(f"{what}: {name}={str(value)!r} is not a file; give the path of {self.help}")
            if path.stat().st_size > MAX_OPTION_FILE:
                raise ParameterError(f"{what}: {name}={str(value)!r} is larger than 1 MiB; "
                                     f"give a small file ({self.help})")
            return path
        return value


def _as_list(value):
    """A list option as given: one number is a list of one, ``"1,2"`` (the command line's form,
    which JSON does not read) is a list of two; anything else is left for the kind check."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value]
    if isinstance(value, str):
        items = []
        for item in value.split(","):
            try:
                items.append(json.loads(item))
            except json.JSONDecodeError:
                return value
        return items
    return value


def _describe_kind(kind: str) -> str:
    return {"bool": "true or false", "int": "an integer", "float": "a number",
            "floats": "a list of numbers", "ints": "a list of integers", "str": "a non-empty text", "path": "a file path"}[kind]


def _bounds(low, high) -> str:
    if low is not None and high is not None:
        return f"from {low:g} to {high:g}"
    return f">= {low:g}" if low is not None else f"<= {high:g}"


def check_options(what: str, declared: Mapping[str, Option], given: Mapping[str, Any]) -> dict[str, Any]:
    """Every declared option's value (given or default), checked; an undeclared name is a
    :class:`ParameterError` naming ``what``, with the nearest declared name if one is close."""
    for name in given:
        if name not in declared:
            valid = ", ".join(declared) if declared else "none"
            raise ParameterError(f"{what} has no option {name!r} (its options: {valid}){did_you_mean(name, declared)}")
    return {name: option.check(what, name, given.get(name, option.default)) for name, option in declared.items()}


class _Configured:
    """A component built from checked options (``self.settings``)."""

    options: ClassVar[Mapping[str, Option]] = {}

    def __init__(self, **options: Any):
        self.settings = check_options(f"{type(self).__name__}", type(self).options, options)


class Metric(_Configured, ABC):
    """A number (or ``{class: number}``) per fold: ``metric(fold)``.

    Attributes
    ----------
    needs : frozenset of str
        What :meth:`__call__` reads of the :class:`Fold`, among :data:`NEEDS`; scores and
        probabilities are computed only for metrics that declare them. A learner without
        ``decision_function`` (``predict_proba``) gets no value (shown ``–``) for a metric that
        needs scores (probabilities).
    better : {"lower", "higher"}
        Which values are better: marks the best cell of a row and orders the ranks. Checked
        when the class is defined: any other value (``"smaller"``) is a ``TypeError``.
    title : str
        The heading of the metric's table, e.g. ``"test error (%)"``.
    per_class : bool
        :meth:`__call__` returns ``{class: number}`` rather than a number.
    options : dict
        ``{name: Option}``: the options ``__init__`` takes (``NAME:KEY=VALUE`` on the command
        line); ``self.settings`` holds their checked values.
    """

    needs: ClassVar[frozenset[str]] = frozenset({"labels"})
    better: ClassVar[str] = "lower"
    title: ClassVar[str] = ""
    per_class: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not (isinstance(cls.better, str) and cls.better in BETTER):
            raise TypeError(f"{cls.__name__}.better={cls.better!r}: declare better = 'lower' or 'higher' "
                            "(which values are better: it marks the best cell and orders the ranks)"
                            f"{did_you_mean(cls.better, BETTER) if isinstance(cls.better, str) else ''}")

    def applies(self, fold: Fold) -> bool:
        """Whether the metric means anything on ``fold``'s task (``fold.labels`` are all its
        classes); by default it does. Where it does not (a top-k metric on a task with at most
        ``k`` labels is 1 by construction), the evaluators record :data:`NOT_APPLICABLE`
        without calling the metric and show ``n/a``; ``__call__`` returning ``None`` means the
        same."""
        return True

    @abstractmethod
    def __call__(self, fold: Fold) -> float | dict[str, float] | None:
        """The metric of one fold (``None``: not applicable to it, see :meth:`applies`)."""


class Design(_Configured, ABC):
    """Tasks x learners -> a table of per-fold results (:class:`~textcw.evaluation.suite.SuiteReport`).

    ``options`` declares what the design takes (``textcw evaluate`` maps ``--folds``,
    ``--tune``, ``--quick``, ``--noise``, ``--sample`` and ``--seed`` onto the options of the
    same names, and ``--design NAME:KEY=VALUE`` onto any; any other is a usage error).
    ``protocol`` says how tasks are loaded: ``cv`` pools a task's train and test splits,
    ``split`` keeps them apart (:class:`~textcw.evaluation.specs.TaskSpec`). ``gives`` is
    what its folds hold for a metric, among :data:`NEEDS`: a metric that needs more (say,
    probabilities from a design that only records predicted labels) is refused before the
    run (:func:`check_metrics`).

    A table is tasks x learners; a design whose results are not one row per task (a learning
    curve has one per training size) sets each cell's ``row`` and the report's ``row_title``
    (``"train docs"``), and the table then has one row per task and ``row``.
    """

    protocol: ClassVar[str] = "cv"
    gives: ClassVar[frozenset[str]] = frozenset(NEEDS)

    @abstractmethod
    def run(self, tasks: Sequence, learners: Sequence, *, metrics: Mapping[str, Metric], baseline: str | None = None,
            **hooks: Any) -> SuiteReport:
        """Evaluate ``learners`` on ``tasks``, computing ``metrics`` on every fold.

        ``hooks`` are ``progress``, ``on_task``, ``curves``, ``probabilities`` and
        ``featurizer`` as :func:`textcw.evaluation.suite.run_suite` takes them. A design finds
        its components in the registries in use (a :func:`textcw.plugins.use_registries` block
        around the call); the ``registries`` hook is deprecated and warns.
        """

    def caption(self, report: SuiteReport) -> str:
        """What follows the metric's name in a table's title (e.g. ``", 10-fold CV"``)."""
        return ""


def check_metrics(what: str, design: Design, metrics: Mapping[str, Metric]) -> None:
    """Refuse, before any work, a metric that reads what ``design``'s folds do not hold."""
    gives = frozenset(getattr(design, "gives", NEEDS))
    for name, metric in metrics.items():
        missing = sorted(set(metric.needs) - gives)
        if missing:
            raise ParameterError(f"{what} cannot compute metric {name!r}, which needs {' and '.join(missing)}: "
                                 f"its folds hold only {', '.join(sorted(gives)) or 'nothing'}; choose a metric "
                                 "that reads only that (e.g. --metric error)")


class SplitDesign(Design):
    """A design that is cross-validation with its own splits: write :meth:`splits` only.

    Every learner is trained on each ``train`` part and tested on its ``test`` part; textcw
    tunes (``tune``/``quick`` options), adds label noise (``noise``), featurizes per split,
    times, records per-document outcomes for McNemar and computes the metrics. The options
    ``seed``, ``tune``, ``quick`` and ``noise`` are read when declared (see :class:`CV`'s).
    """

    @abstractmethod
    def splits(self, task: TaskData, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """``[(train indices, test indices), ...]`` into ``task``'s documents.

        ``task`` has ``len(task)`` documents, ``task.target`` (each one's class, an integer
        code) and, with ``protocol = "split"``, ``task.train_index`` and ``task.test_index``
        (the corpus's splits; such a design must train outside ``test_index`` and test inside
        it). textcw checks the splits before training (:meth:`checked_splits`): indices in
        range and distinct, train and test disjoint.
        """

    def checked_splits(self, task: TaskData, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """:meth:`splits`, checked (:func:`textcw.evaluation.folds.check_splits`): a split that
        trains on a document it tests, or on the corpus's test split, is a
        :class:`~textcw.errors.PluginError` naming the design, before anything is trained."""
        return check_splits(task, self.splits(task, seed), design=type(self).__name__)

    def run(self, tasks, learners, *, metrics, baseline=None, **hooks):
        # The engine is imported when a design runs, not with the contract: it brings in
        # scikit-learn, SciPy and the learners (a fresh interpreter took 11 s to import the
        # contract with it, 0.9 s without, best of 7 on a shared machine at a load average near
        # 20), which defining or registering a component must not pay. The engine never imports
        # this module (it shares textcw.evaluation.folds with it), so this closes no circle.
        from textcw.evaluation.suite import run_suite

        get = self.settings.get
        tasks = [replace(task, protocol=self.protocol, sample=get("sample", task.sample))
                 for task in map(as_task, tasks)]
        return run_suite(tasks, learners, splitter=self.checked_splits, folds=get("folds", 0) or 0,
                         seed=get("seed", 0) or 0, tune=bool(get("tune")), quick=bool(get("quick")),
                         noise=get("noise") or (0.0,), baseline=baseline, metrics=metrics, **hooks)


class Comparison(_Configured, ABC):
    """A verdict from the table of per-fold results: ``comparison(report, metric=, baseline=)``.

    ``needs_baseline``: the comparison is against one learner (``--baseline``; the first
    learner listed when not given). ``marks_table``: it marks the first metric's table. Return a :class:`Verdict`, or ``None`` after marking the
    report itself (``report.comparisons``, ``report.ranks``) for the metric's table to show.
    """

    needs_baseline: ClassVar[bool] = False
    marks_table: ClassVar[bool] = False
    """It returns ``None`` and marks the first metric's table, which must then hold one number
    per cell (not a per-class metric): refused before the run otherwise."""

    @abstractmethod
    def __call__(self, report: SuiteReport, *, metric: str, baseline: str | None) -> Verdict | None:
        """The verdict on ``report``'s results for ``metric``."""

