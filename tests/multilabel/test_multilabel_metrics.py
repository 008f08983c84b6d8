"""Multi-label metrics: exact values against scikit-learn and by hand, n/a on single-label folds."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, hamming_loss

from textcw.errors import InputError
from textcw.evaluation.contract import Fold
from textcw.evaluation.measures import MacroF1
from textcw.evaluation.multilabel_measures import HammingLoss, MicroF1, SubsetAccuracy
from textcw.metrics import label_metrics, multilabel_metrics
from textcw.plugins import current_registries

TRUE = np.array([[1, 0, 0], [1, 1, 0], [0, 0, 1], [0, 1, 0]])
PRED = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 1], [0, 0, 0]])
CLASSES = np.array(["acq", "earn", "grain"])


def test_values_by_hand():
    m = multilabel_metrics(TRUE, PRED, CLASSES)
    # TP 3 (acq twice, grain once), FP 1 (earn), FN 2 (earn twice): 2*3 / (2*3 + 1 + 2)
    assert m["micro_f1"] == pytest.approx(6 / 9)
    # per label F1: acq 1, earn 0 (TP 0), grain 1
    assert m["macro_f1"] == pytest.approx(2 / 3)
    assert m["hamming_loss"] == pytest.approx(3 / 12)
    assert m["subset_accuracy"] == m["accuracy"] == pytest.approx(1 / 4)  # only the first row is exact
    assert m["per_class"]["earn"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 2}


def test_values_match_scikit_learn_on_random_rows():
    rng = np.random.default_rng(7)
    truth, pred = (rng.random((300, 12)) < 0.15).astype(int), (rng.random((300, 12)) < 0.15).astype(int)
    m = multilabel_metrics(truth, pred)
    assert m["micro_f1"] == f1_score(truth, pred, average="micro")
    assert m["macro_f1"] == pytest.approx(f1_score(truth, pred, average="macro"), abs=1e-15)
    assert m["hamming_loss"] == hamming_loss(truth, pred)
    assert label_metrics(truth, pred)["macro_f1"] == m["macro_f1"]


def test_a_label_absent_from_truth_and_predictions_is_not_averaged():
    truth, pred = np.array([[1, 0], [1, 0]]), np.array([[1, 0], [0, 0]])
    assert multilabel_metrics(truth, pred)["macro_f1"] == pytest.approx(2 / 3)


def test_registered_metrics_read_multilabel_folds_and_are_na_elsewhere():
    fold = Fold(y_true=TRUE, y_pred=PRED, classes=CLASSES)
    assert MicroF1()(fold) == pytest.approx(6 / 9)
    assert HammingLoss()(fold) == pytest.approx(0.25)
    assert SubsetAccuracy()(fold) == pytest.approx(0.25)
    assert MacroF1()(fold) == pytest.approx(2 / 3)  # the single-label name scores label sets too
    single = Fold(y_true=np.array(["a", "b"]), y_pred=np.array(["a", "a"]), classes=np.array(["a", "b"]))
    for metric in (MicroF1(), HammingLoss(), SubsetAccuracy()):
        assert metric.applies(fold) and not metric.applies(single)
        assert metric(single) is None
    names = {e.name for e in current_registries().metrics}
    assert {"micro-f1", "hamming-loss", "subset-accuracy", "macro-f1"} <= names


def test_bad_rows_are_refused():
    with pytest.raises(InputError, match="give one 0/1 row per document"):
        multilabel_metrics(TRUE, PRED[:3])
    with pytest.raises(InputError, match="0/1 indicator rows"):
        multilabel_metrics(TRUE, PRED * 2)
    with pytest.raises(InputError, match="2 label names for 3 columns"):
        multilabel_metrics(TRUE, PRED, ["a", "b"])
