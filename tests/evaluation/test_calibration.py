"""The calibration evaluator: entropy, probability bins and the reliability figure (EMNLP 2009 Fig. 2)."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.errors import InputError, ParameterError
from textcw.evaluation.calibration import (
    CalibrationReport,
    calibration,
    calibration_report,
    normalized_entropy,
    plot_calibration,
    probability_bins,
)


def test_normalized_entropy_is_one_for_uniform_and_zero_for_certain_rows():
    assert normalized_entropy(np.full((5, 4), 0.25)) == pytest.approx(1.0)
    assert normalized_entropy(np.eye(3)) == pytest.approx(0.0)
    proba = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    want = -np.mean([np.log(0.5), 0.2 * np.log(0.2) + 0.3 * np.log(0.3) + 0.5 * np.log(0.5)]) / np.log(3)
    assert normalized_entropy(proba) == pytest.approx(want)
    with pytest.raises(InputError, match=r"shape \(n, K\) with K >= 2"):
        normalized_entropy(np.ones(3))


def test_bins_count_mistakes_and_error_shares():
    confidence = np.array([0.05, 0.15, 0.15, 0.55, 0.99, 1.0, 0.1])
    correct = np.array([False, True, False, True, True, True, True])
    bins = probability_bins(confidence, correct)
    assert [b.count for b in bins] == [1, 3, 0, 0, 0, 1, 0, 0, 0, 2]  # 1.0 falls in the last bin
    assert bins[1].mistakes == 1 and bins[1].accuracy == pytest.approx(2 / 3)
    assert bins[1].mean_probability == pytest.approx((0.15 + 0.15 + 0.1) / 3)
    assert bins[2].accuracy is None and bins[2].mean_probability is None
    assert sum(b.error_share for b in bins) == pytest.approx(np.mean(~correct))
    assert (bins[0].low, bins[0].high, bins[9].low, bins[9].high) == (0.0, 0.1, 0.9, 1.0)


def test_report_follows_the_predicted_label_and_round_trips_through_json(tmp_path):
    classes = np.array(["a", "b", "c"])
    proba = np.array([[0.7, 0.2, 0.1], [0.3, 0.4, 0.3], [0.1, 0.1, 0.8], [0.35, 0.45, 0.2]])
    y = np.array(["a", "a", "c", "a"])
    report = calibration_report(proba, y, classes, learner="cw-var", task="toy")
    assert report.accuracy == pytest.approx(0.5)
    assert report.mean_probability_correct == pytest.approx((0.7 + 0.8) / 2)
    assert report.mean_probability_incorrect == pytest.approx((0.4 + 0.45) / 2)
    assert report.n_classes == 3 and report.n_test == 4
    ece = (1 * abs(0 - 0.4) + 1 * abs(0 - 0.45) + 1 * abs(1 - 0.7) + 1 * abs(1 - 0.8)) / 4
    assert report.expected_calibration_error == pytest.approx(ece)
    # the learner's own predictions decide which probability is the prediction probability
    other = calibration_report(proba, y, classes, predicted=np.array(["a", "a", "c", "a"]))
    assert other.accuracy == 1.0 and other.mean_probability_correct == pytest.approx((0.7 + 0.3 + 0.8 + 0.35) / 4)
    again = CalibrationReport.from_json(report.to_json(tmp_path / "r.json"))
    assert again == report and again.bins[7].count == 1
    assert report.to_dict()["bins"][4]["accuracy"] == 0.0 and report.to_dict()["bins"][3]["accuracy"] is None


@pytest.mark.parametrize("proba,y,fragment", [
    (np.ones((2, 3)) / 3, np.array(["a"]), "do not match 1 documents and 3 classes"),
    (np.ones((1, 3)), np.array(["a"]), "rows must sum to 1"),
    (np.ones((0, 3)), np.array([]), "no test documents"),
])
def test_bad_probabilities_are_refused(proba, y, fragment):
    with pytest.raises(InputError, match=fragment):
        calibration_report(proba, y, np.array(["a", "b", "c"]))
    with pytest.raises(InputError, match="must be among the classes"):
        calibration_report(np.ones((1, 3)) / 3, np.array(["a"]), np.array(["a", "b", "c"]), predicted=["z"])


def test_evaluator_trains_and_reports_on_the_test_split(regs, tmp_path):
    from textcw.evaluation.calibration import calibration

    run = calibration(bins=5)
    report = run("toy:multi", "cw-var", params={"multiclass": "seq"}, epochs=3)
    assert report.n_test == 120 and report.n_classes == 3 and len(report.bins) == 5
    assert report.accuracy > 0.7 and 0 < report.normalized_entropy < 1
    assert report.params["multiclass"] == "seq" and report.params["n_epochs"] == 3
    assert sum(b.count for b in report.bins) == 120
    sampled = run("toy:multi", "arow", params={"multiclass": "exact", "proba": "sampling"})
    assert sampled.learner == "arow" and sampled.task == "toy:multi"
    with pytest.raises(ParameterError, match="learner 'pa1' gives no label probabilities"):
        run("toy:multi", "pa1")
    with pytest.raises(ParameterError, match="bins=0 is invalid"):
        calibration(bins=0)
    pytest.importorskip("matplotlib")
    path = plot_calibration([report, sampled], tmp_path / "figs" / "calibration.png", title="toy")
    assert path.exists() and path.stat().st_size > 10_000
    assert report.plot(tmp_path / "one.png").exists()
