"""The multi-label metrics (hook ``register_metrics``): ``micro-f1``, ``hamming-loss`` and
``subset-accuracy`` (``macro-f1`` scores multi-label folds too: :func:`textcw.metrics.label_metrics`
averages the labels' F1 there).

A multi-label fold's ``y_true`` and ``y_pred`` are ``(n, K)`` 0/1 indicator matrices over
``classes`` (:func:`textcw.metrics.multilabel_metrics` has the definitions: Yang and Liu, "A
re-examination of text categorization methods", SIGIR 1999, section 3). On a single-label task
these metrics do not apply (:meth:`~textcw.evaluation.contract.Metric.applies`): the evaluators
show ``n/a``, as they do for precision@k where it is 1 by construction.
"""

from __future__ import annotations

import numpy as np

from textcw.evaluation.contract import Fold, Metric
from textcw.metrics import multilabel_metrics

__all__ = ["HammingLoss", "MicroF1", "MultiLabelMetric", "SubsetAccuracy", "is_multilabel_fold"]


def is_multilabel_fold(fold: Fold) -> bool:
    """Whether ``fold`` holds label sets (indicator rows) rather than one label per document."""
    return np.ndim(fold.y_true) == 2


class MultiLabelMetric(Metric):
    """A metric of label sets: applies to multi-label folds only."""

    key = ""

    def applies(self, fold: Fold) -> bool:
        return is_multilabel_fold(fold)

    def __call__(self, fold: Fold) -> float | None:
        if not is_multilabel_fold(fold):
            return None
        return multilabel_metrics(fold.y_true, fold.y_pred, fold.classes)[self.key]


class MicroF1(MultiLabelMetric):
    """Micro-averaged F1: F1 of every document-label decision pooled (Yang and Liu 1999)."""

    title, key, better = "micro-F1", "micro_f1", "higher"


class HammingLoss(MultiLabelMetric):
    """Hamming loss: the share of document-label decisions that are wrong."""

    title, key, better = "Hamming loss", "hamming_loss", "lower"


class SubsetAccuracy(MultiLabelMetric):
    """Subset accuracy: the share of documents whose whole label set is right."""

    title, key, better = "subset accuracy", "subset_accuracy", "higher"
