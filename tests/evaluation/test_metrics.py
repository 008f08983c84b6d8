"""Classification metrics of ``textcw train`` and ``textcw evaluate``: exact values on small inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, f1_score, log_loss, precision_recall_fscore_support

from textcw.errors import InputError
from textcw.evaluation.metrics import ProbabilityScores, classification_metrics, expected_calibration_error


def test_binary_by_hand():
    # truth 0 0 1 1 1, predicted 0 1 1 1 0: class 0 P=1/2 R=1/2, class 1 P=2/3 R=2/3
    m = classification_metrics([0, 0, 1, 1, 1], [0, 1, 1, 1, 0])
    assert m["accuracy"] == pytest.approx(0.6)
    assert m["per_class"] == {
        "0": {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2},
        "1": {"precision": pytest.approx(2 / 3), "recall": pytest.approx(2 / 3), "f1": pytest.approx(2 / 3),
              "support": 3},
    }
    assert m["macro_f1"] == pytest.approx((0.5 + 2 / 3) / 2)
    assert m["log_loss"] is None and m["brier_score"] is None and m["expected_calibration_error"] is None
    json.dumps(m)  # plain JSON values only


def test_three_classes_with_a_class_never_predicted():
    y_true = np.array(["a", "b", "c", "a", "b", "c"])
    y_pred = np.array(["a", "a", "b", "a", "b", "b"])  # "c" is never predicted
    m = classification_metrics(y_true, y_pred, classes=["a", "b", "c"])
    assert m["per_class"]["c"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 2}
    assert m["per_class"]["a"] == {"precision": pytest.approx(2 / 3), "recall": 1.0, "f1": pytest.approx(0.8),
                                   "support": 2}
    # "b": predicted 3 times, right once (P=1/3), 1 of 2 found (R=1/2): F1 = 0.4
    assert m["macro_f1"] == pytest.approx((0.8 + 0.4 + 0.0) / 3)
    assert m["macro_f1"] == pytest.approx(f1_score(y_true, y_pred, average="macro", zero_division=0))


def test_a_training_class_absent_from_the_test_split_is_listed_but_not_averaged():
    m = classification_metrics([0, 1, 1], [0, 1, 0], classes=[0, 1, 2])
    assert m["per_class"]["2"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "support": 0}
    assert m["macro_f1"] == pytest.approx(f1_score([0, 1, 1], [0, 1, 0], average="macro"))


def test_probabilities_against_sklearn_three_classes():
    classes = np.array(["x", "y", "z"])
    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]])
    y_true = np.array(["x", "y", "x", "z", "z"])
    y_pred = classes[proba.argmax(axis=1)]
    m = classification_metrics(y_true, y_pred, proba, classes=classes)
    assert m["log_loss"] == pytest.approx(log_loss(y_true, proba, labels=classes))
    onehot = (y_true[:, None] == classes[None, :]).astype(float)
    assert m["brier_score"] == pytest.approx(np.mean(((proba - onehot) ** 2).sum(axis=1)))
    assert m["brier_score"] == pytest.approx(brier_score_loss(y_true, proba, labels=classes))
    p, r, _, s = precision_recall_fscore_support(y_true, y_pred, labels=classes, zero_division=0)
    assert [m["per_class"][c]["recall"] for c in classes] == pytest.approx(r)
    assert [m["per_class"][c]["precision"] for c in classes] == pytest.approx(p)
    assert [m["per_class"][c]["support"] for c in classes] == [2, 1, 2]


def test_binary_brier_is_the_usual_one():
    proba = np.array([[0.9, 0.1], [0.4, 0.6], [0.2, 0.8], [0.6, 0.4]])
    y = np.array([0, 1, 0, 1])
    m = classification_metrics(y, proba.argmax(axis=1), proba, classes=[0, 1])
    assert m["brier_score"] == pytest.approx((0.1**2 + 0.4**2 + 0.8**2 + 0.6**2) / 4)
    assert m["brier_score"] == pytest.approx(brier_score_loss(y, proba[:, 1]))


def test_zero_probability_on_the_truth_is_clipped_not_infinite():
    proba = np.array([[1.0, 0.0], [0.0, 1.0]])
    m = classification_metrics([1, 1], [0, 1], proba, classes=[0, 1])
    eps = np.finfo(float).eps
    assert np.isfinite(m["log_loss"]) and m["log_loss"] == pytest.approx(-np.log(eps) / 2)
    assert m["log_loss"] == pytest.approx(log_loss([1, 1], proba, labels=[0, 1]))
    assert m["brier_score"] == pytest.approx(0.5)


def test_a_test_label_the_model_never_saw_counts_with_probability_zero():
    proba = np.array([[0.8, 0.2], [0.3, 0.7]])
    m = classification_metrics(["a", "c"], ["a", "b"], proba, classes=["a", "b"])
    assert m["log_loss"] == pytest.approx((-np.log(0.8) - np.log(np.finfo(float).eps)) / 2)
    assert m["brier_score"] == pytest.approx((0.2**2 * 2 + 0.3**2 + 0.7**2 + 1.0) / 2)
    assert m["per_class"]["c"]["support"] == 1 and m["per_class"]["c"]["recall"] == 0.0


def test_ece_perfectly_calibrated():
    # 10 documents at 0.8 with 8 right and 10 at 0.6 with 6 right: every bin's accuracy is its
    # mean probability
    confidence = np.array([0.8] * 10 + [0.6] * 10)
    correct = np.array([True] * 8 + [False] * 2 + [True] * 6 + [False] * 4)
    assert expected_calibration_error(confidence, correct) == pytest.approx(0.0)


def test_ece_over_confident():
    # probability 0.95 on the predicted label, half of them right: gap 0.45 in the one bin;
    # plus 4 documents at 0.55, all right: gap 0.45 too
    proba = np.array([[0.95, 0.05]] * 4 + [[0.45, 0.55]] * 4)
    y_true = np.array([0, 0, 1, 1, 1, 1, 1, 1])
    m = classification_metrics(y_true, proba.argmax(axis=1), proba, classes=[0, 1])
    assert m["expected_calibration_error"] == pytest.approx(0.5 * 0.45 + 0.5 * 0.45)


def test_chunks_add_up_to_the_whole():
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(3), size=50)
    y = rng.integers(0, 3, size=50)
    pred = proba.argmax(axis=1)
    whole = classification_metrics(y, pred, proba, classes=[0, 1, 2])
    scores = ProbabilityScores([0, 1, 2])
    for start in range(0, 50, 7):
        scores.add(y[start:start + 7], pred[start:start + 7], proba[start:start + 7])
    for key, value in scores.result().items():
        assert value == pytest.approx(whole[key])


def test_bad_input():
    with pytest.raises(InputError, match="give one prediction per document"):
        classification_metrics([0, 1, 1], [0, 1])
    with pytest.raises(InputError, match="no test documents to score"):
        classification_metrics([], [])
    with pytest.raises(InputError, match="probabilities need classes"):
        classification_metrics([0, 1], [0, 1], np.eye(2))
    with pytest.raises(InputError, match=r"probabilities of shape \(2, 3\) do not match 2 documents and 2 classes"):
        classification_metrics([0, 1], [0, 1], np.full((2, 3), 1 / 3), classes=[0, 1])
    with pytest.raises(InputError, match="predicted labels must be among the model's classes"):
        classification_metrics([0, 1], [0, 5], np.eye(2), classes=[0, 1])


def test_train_result_carries_the_metrics(regs):
    from textcw.pipeline import load_corpus, train

    result = train("toy:multi", "arow", registries=regs, cache=False)
    test = load_corpus("toy:multi", "test", registries=regs)
    est = result.model[-1]
    predicted = result.model.predict(test.data)
    proba = result.model.predict_proba(test.data)
    out = result.to_dict()
    assert out["accuracy"] == pytest.approx(np.mean(predicted == test.labels))
    assert out["macro_f1"] == pytest.approx(f1_score(test.labels, predicted, average="macro"))
    assert out["log_loss"] == pytest.approx(log_loss(test.labels, proba, labels=est.classes_))
    assert out["brier_score"] == pytest.approx(brier_score_loss(test.labels, proba, labels=est.classes_))
    assert set(out["per_class"]) == {"a", "b", "c"}  # the dataset names its labels

    first_order = train("toy:multi", "perceptron", registries=regs, cache=False).to_dict()
    assert first_order["macro_f1"] > 0 and first_order["log_loss"] is None
