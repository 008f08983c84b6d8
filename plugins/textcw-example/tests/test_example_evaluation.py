"""The plugin's metrics and design: the kit's checks, and ``textcw evaluate`` dispatching on them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from textcw.errors import ParameterError
from textcw.evaluation.contract import Fold
from textcw.testing import design_under_test, metric_under_test, parametrize_with_checks

from test_example_cli import textcw_cli
from textcw_example.evaluators import ShuffleSplit
from textcw_example.metrics import AUCPerClass, CostError

HERE = Path(__file__).resolve().parent
COSTS, UNIT_COSTS = HERE / "costs.csv", HERE / "unit-costs.csv"


@parametrize_with_checks([
    metric_under_test(AUCPerClass),
    metric_under_test(CostError, costs=str(COSTS), n_classes=(2,)),
    design_under_test(ShuffleSplit, rounds=2),
])
def test_evaluation_contract(component, check):
    check(component)


def test_auc_per_class_matches_sklearn_on_each_class():
    labels = np.asarray(["a", "b", "c"], dtype=object)
    truth = labels[[0, 1, 2, 0, 1, 2, 0, 1]]
    scores = np.random.default_rng(0).normal(size=(8, 3))
    fold = Fold(truth, truth, labels, scores=scores)
    got = AUCPerClass()(fold)
    assert got == {c: roc_auc_score(truth == c, scores[:, j]) for j, c in enumerate(labels)}
    two = labels[[0, 1, 0, 1]]
    binary = AUCPerClass()(Fold(two, two, labels[:2], scores=np.array([-2.0, 1.0, -1.0, 3.0])))
    assert binary == {"a": 1.0, "b": 1.0}  # the single column scores "b", its negation "a"
    only_a = AUCPerClass()(Fold(labels[[0, 0]], labels[[0, 0]], labels[:2], scores=np.array([-1.0, 1.0])))
    assert only_a == {}  # no class has both outcomes in the fold: no AUC rather than a made-up one


def test_cost_error_weighs_each_mistake_by_its_cost():
    labels = np.asarray(["neg", "pos"], dtype=object)
    truth = labels[[0, 0, 1, 1]]
    predicted = labels[[1, 0, 0, 1]]  # one false positive (cost 1), one false negative (cost 5)
    assert CostError(costs=str(COSTS))(Fold(truth, predicted, labels)) == 1.5
    with pytest.raises(ParameterError, match="has no option 'cost'.*did you mean 'costs'"):
        CostError(cost=str(COSTS))
    with pytest.raises(ParameterError, match="needs costs="):
        CostError()
    with pytest.raises(ValueError, match="must be 3x3"):
        CostError(costs=str(COSTS))(Fold(truth, predicted, labels, labels=np.asarray(["a", "neg", "pos"])))


def test_evaluate_dispatches_on_the_plugins_design_and_metrics(tmp_path):
    report_path = tmp_path / "report.json"
    run = textcw_cli("evaluate", "--corpus", "synthetic-text:200", "--learner", "pa,arow",
                     "--design", "shuffle-split:rounds=2", "--compare", "mcnemar",
                     "--metric", f"error,auc-per-class,cost-error:costs={UNIT_COSTS}",
                     "--json-out", str(report_path))
    assert run.returncode == 0, run.stderr
    assert "test error (%), 2 random 80%/20% splits" in run.stdout
    assert "AUC per class" in run.stdout and "mean misclassification cost" in run.stdout
    report = json.loads(report_path.read_text())
    assert report["design"] == "shuffle-split" and [m["name"] for m in report["metrics"]] == [
        "error", "auc-per-class", "cost-error"]
    for cell in report["cells"]:
        assert len(cell["fold_errors"]) == 2
        # unit costs off the diagonal: the mean cost is the error rate, fold by fold
        assert np.allclose(np.asarray(cell["metrics"]["cost-error"]) * 100, cell["fold_errors"])
        for auc in cell["metrics"]["auc-per-class"]:  # two classes: each one's AUC is the other's
            assert set(auc) == {"neg", "pos"} and auc["neg"] == pytest.approx(auc["pos"]) and 0.5 < auc["pos"] <= 1


def test_evaluate_refuses_an_undeclared_design_option():
    run = textcw_cli("evaluate", "--corpus", "synthetic-text:200", "--learner", "pa",
                     "--design", "shuffle-split:round=2")
    assert run.returncode == 2 and run.stdout == ""
    assert "design 'shuffle-split' has no option 'round'" in run.stderr and "did you mean 'rounds'?" in run.stderr
    run = textcw_cli("evaluate", "--corpus", "synthetic-text:200", "--learner", "pa",
                     "--design", "shuffle-split", "--folds", "3")
    assert run.returncode == 2 and "--folds does not apply to design 'shuffle-split'" in run.stderr


def test_the_documented_command_runs():
    # docs/plugins.md, section 9, as written
    run = textcw_cli(*"evaluate --corpus synthetic-text:200 --learner pa,arow --design shuffle-split:rounds=2 "
                      "--metric error,auc-per-class --compare mcnemar".split())
    assert run.returncode == 0, run.stderr
    assert "McNemar vs pa" in run.stdout and "AUC per class, 2 random 80%/20% splits" in run.stdout
    # stdout is a pipe here, so the tables are tab-separated lines
    assert "\nsynthetic-text:200\tneg\t" in run.stdout and "\nsynthetic-text:200\tpos\t" in run.stdout
