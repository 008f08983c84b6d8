"""One fold of an evaluation, as the engine and the plugin contract both see it.

A fold is a ``(train, test)`` split of a task's documents (:func:`check_splits` refuses a wrong
one before anything is trained) and, once a learner has been trained and tested on it, the
predictions a metric reads (:class:`Fold`); :data:`NOT_APPLICABLE` is a metric's value on a
task it does not apply to. This module imports nothing else of :mod:`textcw.evaluation`: the
engine (:mod:`~textcw.evaluation.cv`, :mod:`~textcw.evaluation.suite`) and the public contract
(:mod:`~textcw.evaluation.contract`, where plugins import these names from) both build on it,
so neither imports the other's module to share them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from textcw.errors import ParameterError, PluginError

if TYPE_CHECKING:
    from textcw.evaluation.data import TaskData

__all__ = ["NOT_APPLICABLE", "RIGHT", "UNTESTED", "WRONG", "Fold", "check_splits"]

RIGHT, WRONG, UNTESTED = "1", "0", "."
"""A document's outcome in a cell's ``outcomes`` (one character per evaluated document): predicted
right, wrong, or not tested (yet: an interrupted run); McNemar's test reads them."""

NOT_APPLICABLE = "n/a"
"""A fold's value of a metric that does not apply to its task
(:meth:`~textcw.evaluation.contract.Metric.applies`): kept in the report as this string and
shown as ``n/a``, never as a number."""


@dataclass(frozen=True)
class Fold:
    """One learner's predictions on one fold's test documents: what a
    :class:`~textcw.evaluation.contract.Metric` reads.

    Attributes
    ----------
    y_true, y_pred : ndarray
        True and predicted labels of the test documents (the task's class names).
    classes : ndarray
        The learner's ``classes_``: the label of each column of ``scores`` and ``proba``
        (the classes it saw in training).
    labels : ndarray
        Every class of the task, sorted: the rows and columns of a per-class table or a cost
        matrix (default: ``classes``).
    scores : ndarray or None
        ``decision_function`` of the test documents (``(n,)`` for two classes, else
        ``(n, n_classes)``), when a chosen metric needs ``scores`` and the learner has it.
    proba : ndarray or None
        ``predict_proba`` of the test documents, when a chosen metric needs ``proba`` and the
        learner has it.
    """

    y_true: np.ndarray
    y_pred: np.ndarray
    classes: np.ndarray
    scores: np.ndarray | None = None
    proba: np.ndarray | None = None
    labels: np.ndarray | None = None

    def __post_init__(self):
        if self.labels is None:
            object.__setattr__(self, "labels", np.asarray(self.classes))

    def label_index(self, y) -> np.ndarray:
        """The position of each label of ``y`` in :attr:`labels`."""
        position = {label: i for i, label in enumerate(np.asarray(self.labels).tolist())}
        try:
            return np.asarray([position[label] for label in np.asarray(y).tolist()], dtype=np.int64)
        except KeyError as exc:
            raise ParameterError(f"label {exc.args[0]!r} is not among the task's labels") from None

    def class_scores(self) -> np.ndarray:
        """``scores`` as ``(n, n_classes)``: a binary learner's single column ``s`` is the
        score of ``classes[1]`` and ``-s`` that of ``classes[0]``."""
        if self.scores is None:
            raise ParameterError("this fold has no decision scores; declare needs = {'labels', 'scores'}")
        scores = np.asarray(self.scores, dtype=np.float64)
        return np.column_stack([-scores, scores]) if scores.ndim == 1 else scores

    def class_index(self, labels) -> np.ndarray:
        """The column of each label of ``labels`` in ``classes`` (-1 for a label the learner
        never saw in training)."""
        classes = np.asarray(self.classes)
        position = {label: i for i, label in enumerate(classes.tolist())}
        return np.asarray([position.get(label, -1) for label in np.asarray(labels).tolist()], dtype=np.int64)


def check_splits(task: TaskData, splits, *, design: str | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """A design's ``[(train, test), ...]``, checked before any training: a wrong split must be
    an error, not a silently wrong table. A split that trains on a document it tests, or (with
    the ``split`` protocol) on the corpus's test split, is refused like a malformed one; the
    :class:`~textcw.errors.PluginError` names ``design`` (its class) when given."""
    n = len(task)
    where = f"design {design}, {task.spec.label}" if design else task.spec.label
    if isinstance(splits, (str, bytes)) or not hasattr(splits, "__len__") or len(splits) == 0:
        raise PluginError(f"{where}: the design gave no splits; give [(train, test), ...]")
    checked = []
    for k, pair in enumerate(splits):
        try:
            train, test = (np.asarray(part) for part in pair)
        except (TypeError, ValueError):
            raise PluginError(f"{where}: split {k} is not a (train, test) pair of index arrays") from None
        for name, part in (("train", train), ("test", test)):
            if part.ndim != 1 or part.size == 0 or not np.issubdtype(part.dtype, np.integer):
                raise PluginError(f"{where}: split {k}'s {name} part must be a non-empty "
                                  "1-d array of document indices")
            if part.min() < 0 or part.max() >= n or np.unique(part).size != part.size:
                raise PluginError(f"{where}: split {k}'s {name} part must hold distinct "
                                  f"indices in 0..{n - 1}")
        shared = np.intersect1d(train, test)
        if shared.size:
            raise PluginError(f"{where}: split {k} tests on documents it trains on ({shared.size} of them, "
                              f"e.g. document {int(shared[0])}); make each split's train and test parts disjoint")
        if task.test_index is not None and not np.isin(test, task.test_index).all():
            raise PluginError(f"{where}: split {k} tests outside the corpus's test split, which a "
                              "design with protocol 'split' must test on (use protocol 'cv' to split the pool)")
        leaked = np.intersect1d(train, task.test_index) if task.test_index is not None else ()
        if len(leaked):
            raise PluginError(f"{where}: split {k} trains on {len(leaked)} documents of the corpus's test split "
                              "(protocol 'split'); train on task.train_index only (use protocol 'cv' to split the pool)")
        checked.append((train.astype(np.int64), test.astype(np.int64)))
    return checked
