"""Classification metrics of ``textcw train`` and ``textcw evaluate``: exact values on small inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, f1_score, log_loss, precision_recall_fscore_support

from textcw.errors import InputError
from textcw.evaluation.calibration import expected_calibration_error
from textcw.evaluation.metrics import ProbabilityScores, classification_metrics


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

    result = train("toy:multi", "arow", cache=False)
    test = load_corpus("toy:multi", "test")
    est = result.model[-1]
    predicted = result.model.predict(test.data)
    proba = result.model.predict_proba(test.data)
    out = result.to_dict()
    assert out["accuracy"] == pytest.approx(np.mean(predicted == test.labels))
    assert out["macro_f1"] == pytest.approx(f1_score(test.labels, predicted, average="macro"))
    assert out["log_loss"] == pytest.approx(log_loss(test.labels, proba, labels=est.classes_))
    assert out["brier_score"] == pytest.approx(brier_score_loss(test.labels, proba, labels=est.classes_))
    assert set(out["per_class"]) == {"a", "b", "c"}  # the dataset names its labels

    first_order = train("toy:multi", "perceptron", cache=False).to_dict()
    assert first_order["macro_f1"] > 0
    # calibrated by default: a first-order learner gets probabilities from its temperature
    assert first_order["log_loss"] is not None and first_order["probability"] == "calibrated"


def _write_folder(root, seed):
    """Three classes of short synthetic documents, in train/ and test/ sub-folders."""
    rng = np.random.default_rng(seed)
    words = {"sport": ["goal", "match", "team", "score"], "food": ["bread", "salt", "soup", "bake"],
             "tech": ["chip", "disk", "code", "byte"]}
    shared = ["the", "and", "day", "good", "goal", "code"]
    for split, n in (("train", 30), ("test", 12)):
        for label, own in words.items():
            folder = root / split / label
            folder.mkdir(parents=True)
            for i in range(n):
                text = rng.choice(own + shared, size=8).tolist()
                (folder / f"{i}.txt").write_text(" ".join(text))


@pytest.mark.parametrize("learner", ["arow", "pa"])
def test_train_json_against_sklearn_on_the_saved_model(capsys, tmp_path, learner):
    from cli_run import run
    from textcw.persist import load
    from textcw.pipeline import load_corpus

    _write_folder(tmp_path / "docs", 4)
    corpus = f"folder:{tmp_path / 'docs'}"
    model_file = tmp_path / "m.textcw-model"
    code, out, err = run(capsys, "train", "--corpus", corpus, "--learner", learner, "--no-cache",
                         "--out", str(model_file), "--json")
    assert code == 0, err
    result = json.loads(out)
    model = load(model_file)
    test = load_corpus(corpus, "test")
    predicted = model.predict(test.data)
    assert result["accuracy"] == pytest.approx(np.mean(predicted == test.labels))
    assert result["macro_f1"] == pytest.approx(f1_score(test.labels, predicted, average="macro"))
    p, r, _, s = precision_recall_fscore_support(test.labels, predicted, labels=model.classes_)
    assert [result["per_class"][str(c)]["precision"] for c in model.classes_] == pytest.approx(p)
    assert [result["per_class"][str(c)]["recall"] for c in model.classes_] == pytest.approx(r)
    assert [result["per_class"][str(c)]["support"] for c in model.classes_] == s.tolist() == [12, 12, 12]
    # calibrated by default, so the first-order learner has probabilities too
    proba = model.predict_proba(test.data)
    assert result["log_loss"] == pytest.approx(log_loss(test.labels, proba, labels=model.classes_))
    assert result["brier_score"] == pytest.approx(brier_score_loss(test.labels, proba, labels=model.classes_))
    confidence = proba[np.arange(len(predicted)), np.searchsorted(model.classes_, predicted)]
    assert result["expected_calibration_error"] == pytest.approx(
        expected_calibration_error(confidence, predicted == test.labels))

    code, out, _ = run(capsys, "train", "--corpus", corpus, "--learner", learner, "--no-cache")
    assert code == 0 and len(out.splitlines()) == 1
    assert f"macro-F1 {result['macro_f1']:.4f}" in out
    assert "log-loss" not in out  # the probability metrics are in the JSON report only


def test_suite_cells_record_macro_f1_per_fold(regs):
    from textcw.evaluation.data import featurize, fold_indices, load_task
    from textcw.evaluation.specs import LearnerSpec
    from textcw.evaluation.specs import as_task
    from textcw.evaluation.suite import SuiteReport, run_suite
    from textcw.evaluation.training import build

    report = run_suite(["toy:multi"], ["perceptron"], folds=3)
    cell = report.cell("toy:multi", "perceptron")
    assert len(cell.fold_macro_f1) == 3 and cell.mean_macro_f1 == pytest.approx(np.mean(cell.fold_macro_f1))
    # the first fold again, by hand: the same learner on the same split gives the recorded values
    data = load_task(as_task("toy:multi"), seed=0)
    train, test = fold_indices(data, 3, 0)[0]
    X_train, X_test = featurize(data, train, test)
    est = build(LearnerSpec.parse("perceptron"), {}, cell.passes, seed=0)
    est.fit(X_train, data.labels[train])
    predicted = est.predict(X_test)
    assert cell.fold_macro_f1[0] == pytest.approx(f1_score(data.labels[test], predicted, average="macro"))
    assert cell.fold_errors[0] == pytest.approx(100 * np.mean(predicted != data.labels[test]))
    again = SuiteReport.from_json(report.to_json()).cell("toy:multi", "perceptron")
    assert again.fold_macro_f1 == cell.fold_macro_f1 and again.mean_macro_f1 == cell.mean_macro_f1


def test_stream_training_reports_the_same_keys(tmp_path):
    from textcw.pipeline import load_corpus
    from textcw.scale import train_stream

    _write_folder(tmp_path / "docs", 5)
    corpus = f"folder:{tmp_path / 'docs'}"
    result = train_stream(corpus, "arow", chunk_size=5)
    test = load_corpus(corpus, "test")
    predicted = result.model.predict(test.data)
    proba = result.model.predict_proba(test.data)
    classes = result.model.classes_
    out = result.to_dict()
    assert out["macro_f1"] == pytest.approx(f1_score(test.labels, predicted, average="macro"))
    assert out["log_loss"] == pytest.approx(log_loss(test.labels, proba, labels=classes))
    assert out["brier_score"] == pytest.approx(brier_score_loss(test.labels, proba, labels=classes))
    assert out["per_class"][str(classes[0])]["support"] == 12 and out["mode"] == "stream"


@pytest.mark.parametrize("kind", ["int", "str"])
def test_counts_and_log_loss_equal_sklearn_bit_for_bit(kind):
    """The metrics textcw computes itself (textcw.metrics docstring) against sklearn.metrics, on
    random labels, predictions and probabilities: classes the test split lacks, labels never
    predicted, a test label the model never saw (sorting before or after the classes)."""
    rng = np.random.default_rng(7)
    from textcw.metrics import label_metrics

    for trial in range(60):
        k = int(rng.integers(2, 9))
        classes = np.arange(1, k + 1)
        y_true = rng.integers(0 if trial % 3 == 0 else 1, k + (trial % 2) + 1, size=int(rng.integers(1, 40)))
        y_pred = rng.integers(1, k + 1, size=y_true.shape[0])
        right = (rng.random(y_pred.shape[0]) < 0.5) & (y_true >= 1) & (y_true <= k)  # some right answers
        y_pred[right] = y_true[right]
        if kind == "str":
            classes, y_true, y_pred = (np.array([f"c{v:02d}" for v in a]) for a in (classes, y_true, y_pred))
        got = label_metrics(y_true, y_pred, classes)
        seen = np.unique(np.concatenate([y_true, y_pred]))
        labels = np.concatenate([classes, np.setdiff1d(seen, classes)])
        p, r, f, s = precision_recall_fscore_support(y_true, y_pred, labels=labels, zero_division=0)
        for label, *want in zip(labels, p, r, f, s):
            row = got["per_class"][str(label.item() if hasattr(label, "item") else label)]
            assert [row["precision"], row["recall"], row["f1"], row["support"]] == [float(w) for w in want[:3]] + [int(want[3])]
        assert got["macro_f1"] == float(f1_score(y_true, y_pred, labels=seen, average="macro", zero_division=0))
        proba = rng.dirichlet(np.ones(len(classes)), size=y_true.shape[0])
        proba[0, 0] = 0.0 if proba.shape[0] > 1 else proba[0, 0]  # a zero: clipped
        scores = ProbabilityScores(classes)
        scores.add(y_true, rng.choice(classes, size=y_true.shape[0]), proba)
        extra = np.setdiff1d(y_true, classes)
        if not extra.size:  # sklearn's columns are the sorted labels: comparable without extra labels
            want = log_loss(y_true, proba / proba.sum(axis=1, keepdims=True), labels=classes, normalize=False)
            mine = ProbabilityScores(classes)
            mine.add(y_true, rng.choice(classes, size=y_true.shape[0]), proba / proba.sum(axis=1, keepdims=True))
            assert mine._log_loss == want


def test_an_unseen_test_label_sorting_before_the_classes_gets_probability_zero():
    # ("a" sorts before the model's classes: sklearn's log_loss orders its columns by the sorted
    # labels, which here would have read the first document's P(b) as P(a))
    proba = np.array([[0.8, 0.2], [0.3, 0.7]])
    m = classification_metrics(["a", "b"], ["b", "c"], proba, classes=["b", "c"])
    assert m["log_loss"] == pytest.approx((-np.log(np.finfo(float).eps) - np.log(0.3)) / 2)
