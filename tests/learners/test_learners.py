"""Behaviour of the learners through their public (scikit-learn) interface."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtr
from sklearn.base import clone

import textcw
from textcw.errors import InputError, ParameterError

ALL = ["perceptron", "pa", "pa1", "pa2", "cw-var", "cw-stdev"]
GAUSSIAN = ["cw-var", "cw-stdev"]


@pytest.mark.parametrize("name", ALL)
def test_same_seed_gives_bit_identical_model(name, multiclass_problem):
    X, y = multiclass_problem
    a = textcw.make_learner(name, random_state=7).fit(X, y)
    b = textcw.make_learner(name, random_state=7).fit(X, y)
    c = textcw.make_learner(name, random_state=8).fit(X, y)
    assert np.array_equal(a.coef_, b.coef_) and a.mistakes_ == b.mistakes_
    assert not np.array_equal(a.coef_, c.coef_)


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("problem", ["binary_problem", "multiclass_problem"])
def test_partial_fit_once_equals_one_unshuffled_epoch(name, problem, request):
    X, y = request.getfixturevalue(problem)
    fitted = textcw.make_learner(name, n_epochs=1, shuffle=False).fit(X, y)
    online = textcw.make_learner(name).partial_fit(X, y, classes=np.unique(y))
    assert np.array_equal(fitted.coef_, online.coef_)
    assert fitted.mistakes_ == online.mistakes_
    if name in GAUSSIAN:
        assert np.array_equal(fitted.sigma_, online.sigma_)


@pytest.mark.parametrize("name", ALL)
def test_dense_input_equals_csr_input(name, binary_problem):
    X, y = binary_problem
    a = textcw.make_learner(name, random_state=0).fit(X, y)
    b = textcw.make_learner(name, random_state=0).fit(X.toarray(), y)
    assert np.array_equal(a.coef_, b.coef_)
    assert np.array_equal(a.predict(X), b.predict(X.toarray()))


def test_unsorted_and_duplicate_indices_are_canonicalised(binary_problem):
    X, y = binary_problem
    coo = X.tocoo()
    # Split every value into two duplicate entries, in reversed order.
    rows = np.concatenate([coo.row, coo.row])[::-1]
    cols = np.concatenate([coo.col, coo.col])[::-1]
    vals = np.concatenate([coo.data / 2, coo.data / 2])[::-1]
    messy = sp.csr_matrix((vals, (rows, cols)), shape=X.shape)
    messy.has_canonical_format = False
    a = textcw.make_learner("cw-var", random_state=0).fit(X, y)
    b = textcw.make_learner("cw-var", random_state=0).fit(messy, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-12)


def test_binary_attributes_and_label_convention(binary_problem):
    X, y = binary_problem
    model = textcw.make_learner("cw-var", n_epochs=3, random_state=0).fit(X, y)
    assert list(model.classes_) == ["neg", "pos"]
    assert model.coef_.shape == (1, 40) and model.sigma_.shape == (1, 40)
    assert model.intercept_.tolist() == [0.0]
    assert model.n_features_in_ == 40
    assert len(model.mistakes_) == 3 and all(isinstance(m, int) for m in model.mistakes_)
    assert model.mistakes_[0] > model.mistakes_[-1]
    scores = model.decision_function(X)
    # classes_[1] is the +1 label: positive scores predict "pos".
    np.testing.assert_array_equal(model.predict(X), np.where(scores > 0, "pos", "neg"))
    assert np.mean(model.predict(X) == y) > 0.85


def test_multiclass_attributes(multiclass_problem):
    X, y = multiclass_problem
    model = textcw.make_learner("cw-var", random_state=0).fit(X, y)
    assert model.coef_.shape == (4, 30) and model.sigma_.shape == (4, 30)
    scores = model.decision_function(X)
    assert scores.shape == (400, 4)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(scores, axis=1)])
    assert np.mean(model.predict(X) == y) > 0.8


def test_fit_intercept_learns_an_offset():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 2))
    y = (X[:, 0] + 3.0 > 0.5 * X[:, 1] + 2.5).astype(int)  # separator offset from the origin
    with_bias = textcw.make_learner("pa1", fit_intercept=True, random_state=0).fit(X, y)
    assert with_bias.intercept_.shape == (1,) and with_bias.intercept_[0] != 0
    assert with_bias.coef_.shape == (1, 2)
    np.testing.assert_allclose(with_bias.decision_function(X), X @ with_bias.coef_[0] + with_bias.intercept_[0])


@pytest.mark.parametrize("problem", ["binary_problem", "multiclass_problem"])
def test_cw_stdev_mistakes_do_not_depend_on_initial_scale(problem, request):
    # NIPS 2008, Lemma 3: the stdev algorithm is invariant to Sigma_1 = a I.
    X, y = request.getfixturevalue(problem)
    base = textcw.make_learner("cw-stdev", eta=0.7, a=1.0, n_epochs=2, random_state=0).fit(X, y)
    for a in (1e-3, 0.5, 40.0):
        other = textcw.make_learner("cw-stdev", eta=0.7, a=a, n_epochs=2, random_state=0).fit(X, y)
        assert other.mistakes_ == base.mistakes_
        np.testing.assert_array_equal(other.predict(X), base.predict(X))


def test_binary_probability_is_the_closed_form(binary_problem):
    X, y = binary_problem
    model = textcw.make_learner("cw-var", random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    mu, s = model.coef_[0], model.sigma_[0]
    Xd = X.toarray()
    expected = ndtr((Xd @ mu) / np.sqrt((Xd**2) @ s))
    empty = ~np.any(Xd != 0, axis=1)
    expected[empty] = 0.5  # no features: no evidence either way
    np.testing.assert_allclose(proba[:, 1], expected, rtol=1e-12)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_multiclass_probabilities_match_sampling(multiclass_problem):
    X, y = multiclass_problem
    model = textcw.make_learner("cw-stdev", n_epochs=1, random_state=0).fit(X[:60], y[:60])
    proba = model.predict_proba(X[:20])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    scores = model.decision_function(X[:20])
    var = model.margin_variance(X[:20])
    rng = np.random.default_rng(0)
    draws = scores[:, :, None] + np.sqrt(var)[:, :, None] * rng.normal(size=(20, 4, 40000))
    wins = np.argmax(draws, axis=1)
    sampled = np.stack([(wins == k).mean(axis=1) for k in range(4)], axis=1)
    # Documents without features have four identical, certain scores: every label is equally
    # likely to win (sampling's argmax would always pick the first).
    empty = np.all(var == 0, axis=1)
    assert empty.any() and not empty.all()
    np.testing.assert_allclose(proba[empty], 0.25)
    np.testing.assert_allclose(proba[~empty], sampled[~empty], atol=0.015)


def test_first_order_learners_have_no_probabilities():
    assert not hasattr(textcw.make_learner("pa1"), "predict_proba")


@pytest.mark.parametrize(
    "name,params,fragment",
    [
        ("cw-stdev", {"eta": 0.5}, "eta=0.5 is invalid; eta must be a number in (0.5, 1)"),
        ("cw-var", {"eta": 1.0}, "eta must be a number in (0.5, 1)"),
        ("cw-var", {"a": 0}, "a must be a number > 0"),
        ("pa1", {"C": -1.0}, "C must be a number > 0"),
        ("pa2", {"C": "big"}, "C='big' is invalid"),
        ("perceptron", {"n_epochs": 0}, "n_epochs must be an integer >= 1"),
        ("cw-var", {"covariance": "diagonal"}, "covariance must be one of 'diag-kl', 'diag-l2'"),
    ],
)
def test_invalid_parameters_are_refused_with_the_range(name, params, fragment):
    with pytest.raises(ParameterError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        textcw.make_learner(name, **params)


def test_unknown_parameter_lists_valid_ones():
    with pytest.raises(ParameterError, match="unknown parameter 'C' for learner 'cw-var'; valid parameters: a, covariance, eta"):
        textcw.make_learner("cw-var", C=1.0)


def test_sklearn_fit_validates_too(binary_problem):
    X, y = binary_problem
    model = textcw.make_learner("pa1")
    model.set_params(C=0.0)
    with pytest.raises(ParameterError, match="C=0.0 is invalid"):
        model.fit(X, y)


@pytest.mark.parametrize(
    "X,y,fragment",
    [
        (np.array([[1.0, np.nan], [0.0, 1.0]]), [0, 1], "contains 1 NaN or infinite value"),
        (np.array([[1.0, np.inf], [0.0, 1.0]]), [0, 1], "NaN or infinite"),
        (np.ones((3, 2)), [0, 0, 0], "single class"),
        (np.ones((3, 2)), [0, 1], "X has 3 rows but y has 2 labels"),
        (np.ones((2, 2)), np.array([1, "a"], dtype=object), "mixes label types"),
        (np.ones(4), [0, 1, 0, 1], "1-d"),
        (np.zeros((0, 3)), np.array([]), "0 rows"),
        ([["a", "b"], ["c", "d"]], [0, 1], "must be numeric"),
    ],
)
def test_bad_training_input_gives_clear_errors(X, y, fragment):
    with pytest.raises(InputError, match=fragment):
        textcw.make_learner("cw-var").fit(X, y)


def test_feature_count_mismatch_at_predict(binary_problem):
    X, y = binary_problem
    model = textcw.make_learner("pa").fit(X, y)
    with pytest.raises(InputError, match="has 39 features but the model was fitted with 40"):
        model.predict(X[:, :39])


def test_partial_fit_label_checks(multiclass_problem):
    X, y = multiclass_problem
    model = textcw.make_learner("cw-var")
    with pytest.raises(InputError, match="first partial_fit call needs classes"):
        model.partial_fit(X, y)
    model.partial_fit(X[:50], y[:50], classes=[0, 1, 2, 3, 4])
    with pytest.raises(InputError, match=r"labels \[7\] are not among the declared classes"):
        model.partial_fit(X[:2], [7, 7])
    # A class declared up front but first seen late is learned when it arrives.
    rows = [0, 1, 2, 4, 5]  # row 3 has no features
    model.partial_fit(X[rows], [4] * 5)
    assert model.coef_.shape == (5, 30)
    assert np.all(model.predict(X[rows]) == 4)


def test_clone_and_get_params_round_trip():
    model = textcw.make_learner("cw-stdev", eta=0.8, covariance="diag-l2", n_epochs=2)
    copy = clone(model)
    assert copy.get_params() == model.get_params()
    assert copy.get_params()["covariance"] == "diag-l2"


def test_unfitted_model_has_no_coef():
    model = textcw.make_learner("cw-var")
    assert not hasattr(model, "coef_")
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        model.predict(np.ones((1, 3)))
