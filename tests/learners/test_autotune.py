"""``"auto"`` hyperparameters: the learner chooses them by its candidates' online mistakes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone

import textcw
from textcw.errors import InputError, ParameterError
from textcw.learners.autotune import candidates
from textcw.learners.selftune import SelfTuning


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # variance-floor warnings of some candidates
        yield


@pytest.fixture(scope="module")
def problem():
    rng = np.random.RandomState(3)
    X = sp.random(240, 40, density=0.15, random_state=rng, format="csr")
    X.data = rng.gamma(2.0, size=X.nnz)
    w = rng.randn(40)
    y = (X @ w + 0.3 * rng.randn(240) > 0).astype(int)
    return X, y


CASES = [("cw-stdev", ("eta",)), ("cw-var", ("eta",)), ("arow", ("r",)), ("scw1", ("eta", "C")),
         ("scw2", ("eta",)), ("pa1", ("C",)), ("pa2", ("C",))]


@pytest.mark.parametrize("name, auto", CASES, ids=[f"{n}-{'+'.join(a)}" for n, a in CASES])
def test_fit_becomes_the_candidate_with_the_fewest_online_mistakes(problem, name, auto):
    X, y = problem
    model = textcw.make_learner(name, n_epochs=3, **dict.fromkeys(auto, "auto")).fit(X, y)
    # the same candidates, each run on its own over the first (shuffled) pass
    grid = candidates(model, X, list(auto))
    errors = []
    for candidate in grid:
        alone = textcw.make_learner(name, n_epochs=1, **candidate).fit(X, y)
        errors.append(alone.mistakes_[0])
    best = grid[int(np.argmin(errors))]
    assert model.tuned_params_ == pytest.approx(best, rel=0, abs=0)
    assert model.tuning_["online_error"] == pytest.approx([e / X.shape[0] for e in errors])
    # the learner is exactly the learner fitted with the winning values
    reference = textcw.make_learner(name, n_epochs=3, **best).fit(X, y)
    np.testing.assert_array_equal(model.decision_function(X), reference.decision_function(X))
    assert model.mistakes_ == reference.mistakes_
    assert all(model.get_params()[p] == "auto" for p in auto)  # fit does not change parameters


def test_partial_fit_follows_the_stream_like_self_tuning(problem):
    X, y = problem
    model = textcw.make_learner("arow", r="auto")
    tuner = SelfTuning(textcw.make_learner("arow", r=1.0),
                       grid=[{"r": [c["r"]]} for c in candidates(model, X[:60], ["r"])])
    for start in range(0, 240, 60):
        model.partial_fit(X[start:start + 60], y[start:start + 60], classes=[0, 1])
        tuner.partial_fit(X[start:start + 60], y[start:start + 60], classes=[0, 1])
        assert model.tuned_params_ == tuner.best_params_
        np.testing.assert_array_equal(model.decision_function(X), tuner.decision_function(X))
    assert model.tuning_["n_online"] == 240


def test_the_choice_is_fixed_after_fit_and_partial_fit_continues_the_winner(problem):
    X, y = problem
    model = textcw.make_learner("cw-stdev", eta="auto", n_epochs=2).fit(X[:120], y[:120])
    chosen = dict(model.tuned_params_)
    reference = textcw.make_learner("cw-stdev", n_epochs=2, **chosen).fit(X[:120], y[:120])
    model.partial_fit(X[120:], y[120:])
    reference.partial_fit(X[120:], y[120:])
    assert model.tuned_params_ == chosen
    np.testing.assert_array_equal(model.decision_function(X), reference.decision_function(X))


def test_state_dict_records_the_chosen_values(problem):
    X, y = problem
    model = textcw.make_learner("scw1", eta="auto", C="auto", n_epochs=1).fit(X, y)
    state = model.state_dict()
    assert state["tuned"] == model.tuned_params_
    copy = textcw.make_learner("scw1", eta="auto", C="auto").load_state_dict(state)
    assert copy.tuned_params_ == model.tuned_params_
    np.testing.assert_array_equal(copy.decision_function(X), model.decision_function(X))
    with pytest.raises(InputError, match=r"needs the state to record the values chosen for \['eta', 'C'\]"):
        textcw.make_learner("scw1", eta="auto", C="auto").load_state_dict({**state, "tuned": {"eta": 0.9}})
    with pytest.raises(InputError, match="needs the state to record the values chosen for no parameter"):
        textcw.make_learner("scw1").load_state_dict(state)
    with pytest.raises(InputError, match="'tuned' entry"):
        textcw.make_learner("scw1", eta="auto", C="auto").load_state_dict(
            {**state, "tuned": {"eta": float("nan"), "C": 1.0}})


def test_a_pipeline_with_auto_exports_and_imports(tmp_path):
    docs = ["good fine great", "bad awful poor", "fine good", "poor bad", "great good fine",
            "awful bad"] * 10
    labels = [1, 0, 1, 0, 1, 0] * 10
    model = textcw.make_pipeline("binary-bow", "cw-stdev", eta="auto").fit(docs, labels)
    path = tmp_path / "model.textcw"
    textcw.export_model(model, path)
    back = textcw.import_model(path)
    assert back.steps[-1][1].tuned_params_ == model.steps[-1][1].tuned_params_
    np.testing.assert_array_equal(back.decision_function(docs), model.decision_function(docs))


def test_clone_keeps_auto_and_a_numeric_refit_forgets_the_choice(problem):
    X, y = problem
    model = textcw.make_learner("pa1", C="auto").fit(X, y)
    assert clone(model).get_params()["C"] == "auto"
    model.set_params(C=0.5).fit(X, y)
    assert not hasattr(model, "tuned_params_") and not hasattr(model, "tuning_")


def test_errors():
    with pytest.raises(ParameterError, match="a must be"):
        textcw.make_learner("cw-stdev", a="auto")
    with pytest.raises(ParameterError, match="unknown parameter 'C'"):
        textcw.make_learner("pa", C="auto")
    with pytest.raises(ParameterError, match="eta='auto' is chosen when the learner is fitted"):
        textcw.make_learner("cw-stdev", eta="auto").phi
