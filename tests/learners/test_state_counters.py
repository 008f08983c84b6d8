"""The Gaussian learners' per-epoch counters travel with the model's state."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import textcw
from textcw.errors import InputError, VarianceFloorWarning


@pytest.fixture()
def floored_model():
    # dense, low-dimensional, noisy: CW-stdev at eta 0.99 drives variances to the floor
    rng = np.random.RandomState(0)
    X = rng.rand(300, 5)
    y = (X[:, 0] + 0.3 * rng.randn(300) > 0.5).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarianceFloorWarning)
        model = textcw.make_learner("cw-stdev", n_epochs=3).fit(X, y)
    assert sum(model.n_variance_floored_) > 0
    return model, X, y


def test_state_dict_carries_the_counters_and_load_restores_them(floored_model):
    model, X, y = floored_model
    state = model.state_dict()
    assert state["counters"] == {"n_variance_floored": model.n_variance_floored_,
                                 "n_solver_fallbacks": model.n_solver_fallbacks_}
    copy = textcw.make_learner("cw-stdev").load_state_dict(state)
    assert copy.n_variance_floored_ == model.n_variance_floored_
    assert copy.n_solver_fallbacks_ == model.n_solver_fallbacks_
    np.testing.assert_array_equal(copy.decision_function(X), model.decision_function(X))


def test_the_counters_survive_a_portable_export(tmp_path):
    rng = np.random.RandomState(0)
    words = np.array(["alpha", "beta", "gamma", "delta", "epsilon"])
    docs = [" ".join(rng.choice(words, size=3)) for _ in range(300)]
    labels = [int(("alpha" in d) != (rng.rand() < 0.3)) for d in docs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarianceFloorWarning)
        model = textcw.make_pipeline("binary-bow", "cw-stdev", n_epochs=3).fit(docs, labels)
    learner = model.steps[-1][1]
    assert sum(learner.n_variance_floored_) > 0
    path = tmp_path / "model.textcw"
    textcw.export_model(model, path)
    back = textcw.import_model(path).steps[-1][1]
    assert back.n_variance_floored_ == learner.n_variance_floored_
    assert back.n_solver_fallbacks_ == learner.n_solver_fallbacks_


def test_a_state_without_counters_loads_without_them(floored_model):
    model, X, y = floored_model
    state = model.state_dict()
    del state["counters"]
    copy = textcw.make_learner("cw-stdev").load_state_dict(state)
    assert not hasattr(copy, "n_variance_floored_")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarianceFloorWarning)
        copy.partial_fit(X, y)  # counting starts again
    assert len(copy.n_variance_floored_) == 1


@pytest.mark.parametrize("counters, message", [
    ({"n_floored": [1]}, "counters must be a dict with keys among"),
    ({"n_variance_floored": [-1]}, "counter n_variance_floored must be a list of non-negative integers"),
    ({"n_variance_floored": "3"}, "counter n_variance_floored must be a list"),
    ([1, 2], "counters must be a dict"),
])
def test_bad_counters_are_refused(floored_model, counters, message):
    model, X, y = floored_model
    state = {**model.state_dict(), "counters": counters}
    with pytest.raises(InputError, match=message):
        textcw.make_learner("cw-stdev").load_state_dict(state)


def test_learners_without_counters_keep_the_plain_state():
    X = np.eye(4)
    model = textcw.make_learner("pa1").fit(X, [0, 1, 0, 1])
    assert "counters" not in model.state_dict()
    with pytest.raises(InputError, match="counters must be a dict with keys among \\[\\]"):
        textcw.make_learner("pa1").load_state_dict({**model.state_dict(), "counters": {"x": [1]}})
