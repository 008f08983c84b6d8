"""Pass-by-pass training equals fit(n_epochs=k); tuning picks the lowest held-out error."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.errors import ParameterError
from textcw.evaluation.data import dev_split, featurize, load_task
from textcw.evaluation.specs import LearnerSpec, TaskSpec
from textcw.evaluation.training import build, predictions_per_pass
from textcw.evaluation.tune import GridPoint, choose, tune_learner
from textcw.learners.base import OnlineLinearClassifier
from textcw.plugins import default_registries


def online_learners():
    regs = default_registries()
    return [e.name for e in regs.learners if isinstance(e.factory(), OnlineLinearClassifier)]


@pytest.fixture(scope="module")
def toy(regs):
    out = {}
    for name in ("binary", "multi"):
        task = load_task(TaskSpec(f"toy:{name}"))
        tr, te = dev_split(task, 0.25, 0)
        X_train, X_test = featurize(task, tr, te)
        out[name] = (X_train, task.labels[tr], X_test, task.labels[te])
    return out


@pytest.mark.parametrize("name", online_learners())
@pytest.mark.parametrize("kind", ["binary", "multi"])
def test_each_pass_is_what_fit_with_that_many_epochs_returns(toy, name, kind):
    X, y, X_test, _ = toy[kind]
    spec = LearnerSpec(name)
    per_pass = list(predictions_per_pass(build(spec, seed=5), X, y, X_test, 4))
    assert [k for k, _, _ in per_pass] == [1, 2, 3, 4]
    for k, predicted, seconds in per_pass:
        est = build(spec, passes=k, seed=5).fit(X, y)
        assert np.array_equal(predicted, est.predict(X_test)), f"{name} after {k} passes"
        assert seconds >= 0
    assert all(a[2] <= b[2] for a, b in zip(per_pass, per_pass[1:]))   # cumulative training time


def test_learners_without_passes_are_refused(toy):
    X, y, X_test, _ = toy["binary"]
    with pytest.raises(ParameterError, match=r"^LinearSVM has no passes \(no n_epochs parameter\)$"):
        list(predictions_per_pass(build(LearnerSpec("svm")), X, y, X_test, 3))


def test_tune_chooses_the_lowest_error_and_fewest_passes(toy):
    X, y, X_dev, y_dev = toy["binary"]
    result = tune_learner(LearnerSpec("cw-var"), X, y, X_dev, y_dev, grid={"eta": [0.6, 0.9]}, max_passes=5)
    assert [p.params for p in result.grid] == [{"eta": 0.6}, {"eta": 0.9}]
    best = min(min(p.errors) for p in result.grid)
    chosen = next(p for p in result.grid if p.params == result.params)
    assert result.dev_error == best == min(chosen.errors)
    assert result.passes == chosen.errors.index(best) + 1
    assert all(len(p.errors) == 5 for p in result.grid)


def test_ties_go_to_the_middle_point_and_fewest_passes():
    points = [GridPoint({"eta": e}, errs) for e, errs in
              [(0.5, [3.0, 1.0]), (0.6, [1.0, 1.0]), (0.7, [2.0, 1.0]), (0.8, [4.0, 5.0])]]
    point, passes, error = choose(points)
    # three points reach 1.0; the middle of them is eta=0.6, which first reaches it after 1 pass
    assert (point.params, passes, error) == ({"eta": 0.6}, 1, 1.0)
    point, passes, _ = choose(points[:1] + points[2:])
    assert (point.params, passes) == ({"eta": 0.5}, 2)   # two tied: the lower middle


def test_tune_batch_learner_has_no_passes(toy):
    X, y, X_dev, y_dev = toy["binary"]
    result = tune_learner(LearnerSpec("svm"), X, y, X_dev, y_dev, grid={"C": [0.1, 1.0]})
    assert result.passes is None and all(len(p.errors) == 1 for p in result.grid)
    assert type(result).from_json(result.to_json()) == result


def test_fixed_parameters_are_not_tuned(regs):
    from textcw.evaluation.grids import grid_for

    assert grid_for("cw-var", {"eta": 0.9}) == {}
    assert "eta" in grid_for("cw-var", {})
    assert grid_for("perceptron", {}) == {}
