"""SelfTuning: the candidate with the fewest online mistakes, counted as each candidate alone counts them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

import textcw
from sparse_data import random_sparse
from textcw.errors import InputError, ParameterError
from textcw.learners.inputs import check_features
from textcw.learners.cw_var import CWVar
from textcw.learners.selftune import Axis, SelfTuning, auto_params, data_scale, default_grid, tune_grid
from textcw.testing import make_registries


def _labels(X, n_classes, seed):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(X.shape[1], n_classes))
    scores = np.asarray(X @ W) + 0.3 * rng.normal(size=(X.shape[0], n_classes))
    return np.argmax(scores, axis=1) if n_classes > 2 else (scores[:, 0] > 0).astype(int)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # variance-floor warnings of extreme candidates
        yield


SELF_TUNING = ("arow", "cw-stdev", "cw-var", "pa1", "pa2", "scw1", "scw2")


@pytest.mark.parametrize("name", SELF_TUNING)
@pytest.mark.parametrize("n_classes", [2, 4])
def test_choice_is_the_fewest_online_mistakes_of_each_candidate_run_alone(name, n_classes):
    X = random_sparse(300, 40, 0.2, seed=3)
    y = _labels(X, n_classes, seed=4)
    tuned = SelfTuning(textcw.make_learner(name, n_epochs=3)).fit(X, y)
    order = np.random.RandomState(0).permutation(X.shape[0])  # fit's first (shuffled) pass
    alone = []
    for params in tuned.candidates_:
        model = textcw.make_learner(name, n_epochs=3, **params)
        model.partial_fit(X[order], y[order], classes=np.unique(y))
        alone.append(model.mistakes_[0])
    assert tuned.online_mistakes_.tolist() == alone
    assert tuned.best_index_ == int(np.argmin(alone))
    assert tuned.n_online_ == X.shape[0]
    np.testing.assert_array_equal(tuned.online_error_, np.array(alone) / X.shape[0])
    # the winner is exactly the learner's own fit with the winning values (same orders)
    reference = textcw.make_learner(name, n_epochs=3, **tuned.best_params_).fit(X, y)
    np.testing.assert_array_equal(tuned.best_estimator_.coef_, reference.coef_)
    assert tuned.best_estimator_.mistakes_ == reference.mistakes_
    np.testing.assert_array_equal(tuned.predict(X), reference.predict(X))
    np.testing.assert_array_equal(tuned.decision_function(X), reference.decision_function(X))


def test_the_self_tuning_learners_are_those_whose_class_declares_it():
    registered = make_registries().learners
    tuned = sorted(name for name in registered.names() if auto_params(registered.get(name).factory))
    assert tuned == list(SELF_TUNING)
    assert auto_params(textcw.make_learner("scw1")) == ("eta", "C")
    assert auto_params(textcw.make_learner("sop")) == ()  # a tune grid, no "auto"
    assert tune_grid(textcw.make_learner("sop"), quick=True) == {"a": [1.0]}


class _MyCW(CWVar):
    """A subclass: inherits its parent's tuning, "auto" included, with no table to edit."""


def test_a_subclass_self_tunes_like_its_parent():
    X = random_sparse(200, 30, 0.2, seed=3)
    y = _labels(X, 3, seed=4)
    mine = _MyCW(eta="auto", n_epochs=2).fit(X, y)
    theirs = CWVar(eta="auto", n_epochs=2).fit(X, y)
    assert mine.tuned_params_ == theirs.tuned_params_
    np.testing.assert_array_equal(mine.coef_, theirs.coef_)


def test_a_learner_class_declares_its_own_tuning():
    from textcw.learners.params import SCALE
    from textcw.learners.perceptron import Perceptron

    class Damped(Perceptron):
        constraints = {**Perceptron.constraints, "damping": SCALE}
        tuning = (Axis("damping", "inverse-squared-norm", (0.5, 2.0), grid=(0.1, 1.0)),)

    assert Damped.constraints["damping"].contains("auto")  # the declaration admits "auto"
    assert not Perceptron.constraints.get("damping")
    assert tune_grid(Damped) == {"damping": [0.1, 1.0]}
    with pytest.raises(TypeError, match=r"Typo.tuning: Axis\(param='dampng'.* must be an Axis naming one of"):
        type("Typo", (Perceptron,), {"tuning": (Axis("dampng", grid=(1.0,)),)})
    with pytest.raises(TypeError, match=r"unit must be one of"):
        Axis("C", "per-feature", (1.0,))


def test_partial_fit_keeps_every_candidate_learning_and_the_running_counts():
    X = random_sparse(400, 30, 0.25, seed=5)
    y = _labels(X, 3, seed=6)
    grid = {"r": [0.01, 1.0, 100.0]}
    tuned = SelfTuning(textcw.make_learner("arow"), grid=grid)
    alone = [textcw.make_learner("arow", r=r) for r in grid["r"]]
    running = np.zeros(3, dtype=int)
    for start in range(0, 400, 100):
        batch = slice(start, start + 100)
        tuned.partial_fit(X[batch], y[batch], classes=[0, 1, 2])
        for i, model in enumerate(alone):
            model.partial_fit(X[batch], y[batch], classes=[0, 1, 2])
            running[i] += model.mistakes_[-1]
        assert tuned.online_mistakes_.tolist() == running.tolist()
        assert tuned.best_index_ == int(np.argmin(running))
    assert tuned.n_online_ == 400
    for model, candidate in zip(alone, tuned.estimators_):
        np.testing.assert_array_equal(model.coef_, candidate.coef_)
    # partial_fit after fit continues every candidate (the losers from their first pass)
    fitted = SelfTuning(textcw.make_learner("arow", n_epochs=2), grid=grid).fit(X[:300], y[:300])
    before = fitted.online_mistakes_.copy()
    loser = next(i for i in range(3) if i != fitted.best_index_)
    fitted.partial_fit(X[300:], y[300:])
    assert fitted.n_online_ == 400
    assert (fitted.online_mistakes_ >= before).all()
    assert fitted.estimators_[loser].mistakes_[-1] == fitted.online_mistakes_[loser] - before[loser]


def test_the_choice_changes_when_the_stream_does():
    """A candidate that wins on the first batches loses once the data favour another."""
    X, y = make_classification(600, 20, n_informative=10, flip_y=0.0, class_sep=2.0, random_state=0)
    Xn, yn = make_classification(3000, 20, n_informative=10, flip_y=0.45, random_state=1)
    grid = {"C": [1e-4, 100.0]}
    tuned = SelfTuning(textcw.make_learner("pa1"), grid=grid)
    tuned.partial_fit(X, y, classes=[0, 1])
    first = tuned.best_index_
    for start in range(0, 3000, 500):
        tuned.partial_fit(Xn[start:start + 500], yn[start:start + 500])
    counts = tuned.online_mistakes_
    assert tuned.best_index_ == int(np.argmin(counts))
    assert tuned.best_index_ != first


def test_default_grids_make_online_mistakes_independent_of_the_feature_scale():
    """Each default grid is stated in the data's units (module docstring), so multiplying the
    features by 4 (exact in floating point) gives the same candidates' mistakes."""
    X = random_sparse(300, 30, 0.3, seed=7)
    y = _labels(X, 3, seed=8)
    for name in ("arow", "pa1", "pa2", "scw2", "cw-stdev", "cw-var"):
        small = SelfTuning(textcw.make_learner(name, n_epochs=1)).fit(X, y)
        large = SelfTuning(textcw.make_learner(name, n_epochs=1)).fit(4.0 * X, y)
        assert large.scale_ == pytest.approx(16.0 * small.scale_, rel=1e-12)
        diff = np.abs(small.online_mistakes_ - large.online_mistakes_)
        # CW-var's eta goes through Phi and back (phi = Phi^-1(eta)): equal to rounding
        assert diff.max() <= (1 if name == "cw-var" else 0), name
        np.testing.assert_array_equal(small.predict(X), large.predict(4.0 * X))


def test_default_grid_values_follow_the_units():
    X = random_sparse(50, 10, 0.5, seed=9)
    q = data_scale(check_features(X))
    norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    assert q == np.median(norms)
    assert data_scale(check_features(X), fit_intercept=True) == q + 1.0
    arow = default_grid(textcw.make_learner("arow", a=2.0), check_features(X))
    assert [c["r"] for c in arow] == pytest.approx([m * 2.0 * q for m in (0.01, 0.1, 1, 10, 100)])
    pa = default_grid(textcw.make_learner("pa1"), check_features(X))
    assert [c["C"] for c in pa] == pytest.approx([m / q for m in (0.01, 0.1, 1, 10)])
    stdev = default_grid(textcw.make_learner("cw-stdev"), check_features(X))
    assert [c["eta"] for c in stdev] == pytest.approx([0.598706, 0.691462, 0.841345, 0.977250, 0.999968], abs=1e-6)
    assert len(default_grid(textcw.make_learner("scw1"), check_features(X))) == 9


def test_clone_and_get_params_round_trip():
    tuned = SelfTuning(textcw.make_learner("cw-stdev", n_epochs=2), grid={"eta": [0.7, 0.9]})
    params = tuned.get_params(deep=True)
    assert params["learner__n_epochs"] == 2 and params["grid"] == {"eta": [0.7, 0.9]}
    copy = clone(tuned)
    assert copy.get_params(deep=False)["grid"] == {"eta": [0.7, 0.9]}
    assert copy.learner is not tuned.learner
    assert copy.learner.get_params() == tuned.learner.get_params()
    copy.set_params(learner__n_epochs=1, grid={"eta": [0.8]})
    assert copy.learner.n_epochs == 1 and tuned.learner.n_epochs == 2
    X = random_sparse(100, 10, 0.4, seed=1)
    y = _labels(X, 2, seed=2)
    fitted = tuned.fit(X, y)
    assert not hasattr(clone(fitted), "estimators_")
    assert clone(fitted).fit(X, y).best_params_ == fitted.best_params_


def test_probabilities_only_for_learners_that_have_them():
    X = random_sparse(100, 10, 0.4, seed=1)
    y = _labels(X, 2, seed=2)
    gaussian = SelfTuning(textcw.make_learner("arow"), grid={"r": [0.1, 1.0]}).fit(X, y)
    np.testing.assert_array_equal(gaussian.predict_proba(X), gaussian.best_estimator_.predict_proba(X))
    first_order = SelfTuning(textcw.make_learner("pa1")).fit(X, y)
    assert not hasattr(first_order, "predict_proba")


def test_bad_input_is_a_clear_error():
    X = random_sparse(60, 8, 0.5, seed=1)
    y = _labels(X, 2, seed=2)
    with pytest.raises(ParameterError, match="Perceptron declares no self-tuning parameter"):
        SelfTuning(textcw.make_learner("perceptron")).fit(X, y)
    with pytest.raises(ParameterError, match="has no parameter 'C'"):
        SelfTuning(textcw.make_learner("arow"), grid={"C": [1.0]}).fit(X, y)
    with pytest.raises(ParameterError, match="eta=1.5 is invalid"):
        SelfTuning(textcw.make_learner("cw-var"), grid={"eta": [0.9, 1.5]}).fit(X, y)
    with pytest.raises(ParameterError, match="non-empty list"):
        SelfTuning(textcw.make_learner("arow"), grid={"r": []}).fit(X, y)
    with pytest.raises(ParameterError, match="more than 64"):
        SelfTuning(textcw.make_learner("arow"), grid={"r": list(range(1, 66))}).fit(X, y)
    with pytest.raises(ParameterError, match="online learner with partial_fit"):
        SelfTuning(object()).fit(X, y)
    with pytest.raises(InputError, match="needs classes="):
        SelfTuning(textcw.make_learner("arow")).partial_fit(X, y)
    with pytest.raises(InputError, match="expecting 8 features"):
        SelfTuning(textcw.make_learner("arow")).fit(X, y).predict(X[:, :4])
