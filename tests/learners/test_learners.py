"""Behaviour of the learners through their public (scikit-learn) interface."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtr
from sklearn.base import clone

import textcw
from textcw.errors import InputError, ParameterError

ALL = ["perceptron", "averaged-perceptron", "pa", "pa1", "pa2", "sgd", "sop", "cw-var", "cw-stdev",
       "arow", "scw1", "scw2"]
GAUSSIAN = ["cw-var", "cw-stdev", "arow", "scw1", "scw2"]
# Every learner at its defaults plus every structural variant (the covariance forms and SOP full).
VARIANTS = [(name, {}) for name in ALL] + [
    ("sop", {"covariance": "full"}),
    ("cw-var", {"covariance": "diag-l2"}), ("cw-var", {"covariance": "exact"}),
    ("cw-var", {"covariance": "full"}), ("cw-stdev", {"covariance": "exact"}),
    ("cw-stdev", {"covariance": "full"}), ("arow", {"covariance": "full"}),
    ("arow", {"covariance": "diag-l2", "loss": "hinge"}), ("scw2", {"covariance": "full"}),
    ("sgd", {"loss": "log", "learning_rate": "invscaling", "eta0": 0.5}),
]
VARIANT_IDS = [name + "".join(f"-{v}" for v in params.values()) for name, params in VARIANTS]


def state_arrays(model):
    return {name: array.copy() for name, array in model._state.items()}


@pytest.mark.parametrize("name,params", VARIANTS, ids=VARIANT_IDS)
@pytest.mark.parametrize("problem", ["binary_problem", "multiclass_problem"])
def test_same_seed_gives_bit_identical_model(name, params, problem, request):
    X, y = request.getfixturevalue(problem)
    a = textcw.make_learner(name, random_state=7, **params).fit(X, y)
    b = textcw.make_learner(name, random_state=7, **params).fit(X, y)
    c = textcw.make_learner(name, random_state=8, **params).fit(X, y)
    assert a.mistakes_ == b.mistakes_ and a.n_updates_ == b.n_updates_
    for key, array in state_arrays(a).items():
        assert np.array_equal(array, b._state[key]), key
    assert not np.array_equal(a.coef_, c.coef_)


@pytest.mark.parametrize("name,params", VARIANTS, ids=VARIANT_IDS)
@pytest.mark.parametrize("problem", ["binary_problem", "multiclass_problem"])
def test_partial_fit_once_equals_one_unshuffled_epoch(name, params, problem, request):
    X, y = request.getfixturevalue(problem)
    fitted = textcw.make_learner(name, n_epochs=1, shuffle=False, **params).fit(X, y)
    online = textcw.make_learner(name, **params).partial_fit(X, y, classes=np.unique(y))
    assert fitted.mistakes_ == online.mistakes_ and fitted.n_updates_ == online.n_updates_
    for key, array in state_arrays(fitted).items():
        assert np.array_equal(array, online._state[key]), key
    # and a second call continues where the first stopped, like a second unshuffled epoch
    twice = textcw.make_learner(name, n_epochs=2, shuffle=False, **params).fit(X, y)
    online.partial_fit(X, y)
    assert online.mistakes_ == twice.mistakes_
    np.testing.assert_array_equal(online.coef_, twice.coef_)


@pytest.mark.parametrize("name,params", VARIANTS, ids=VARIANT_IDS)
def test_dense_input_equals_csr_input(name, params, binary_problem):
    X, y = binary_problem
    a = textcw.make_learner(name, random_state=0, **params).fit(X, y)
    b = textcw.make_learner(name, random_state=0, **params).fit(X.toarray(), y)
    assert np.array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X.toarray()))
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


def test_canonical_csr_is_read_in_place_with_either_index_type(binary_problem):
    from textcw._csr import as_kernel_csr

    X, y = binary_problem
    X64 = as_kernel_csr(X)
    X32 = sp.csr_matrix((X64.data, X64.indices.astype(np.int32), X64.indptr.astype(np.int32)),
                        shape=X64.shape)
    assert X32.indices.dtype == np.int32
    model = textcw.make_learner("cw-stdev", random_state=0)
    for matrix in (X32, X64):
        assert model._check_X(matrix, reset=True) is matrix  # no copy
    a = textcw.make_learner("cw-stdev", random_state=0).fit(X32, y)
    b = textcw.make_learner("cw-stdev", random_state=0).fit(X64, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.sigma_, b.sigma_)


@pytest.mark.parametrize("defect", ["unsorted", "duplicate", "explicit zero", "nan", "out of range",
                                    "float32", "bad indptr"])
def test_non_canonical_csr_is_canonicalised_or_refused(defect):
    from textcw.learners._kernels.common import kernel_ready

    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 4.0]]))
    data, indices, indptr = X.data.copy(), X.indices.copy(), X.indptr.copy()
    assert kernel_ready(indptr, indices, data, 3)
    if defect == "unsorted":
        indices[[2, 3]] = indices[[3, 2]]
        data[[2, 3]] = data[[3, 2]]
    elif defect == "duplicate":
        indices[3] = indices[2]
    elif defect == "explicit zero":
        data[0] = 0.0
    elif defect == "nan":
        data[1] = np.nan
    elif defect == "out of range":
        indices[1] = 3
    elif defect == "bad indptr":
        indptr[1] = 3
        indptr[2] = 2
    if defect != "float32":
        assert not kernel_ready(indptr, indices, data, 3)
    if defect in ("unsorted", "duplicate", "explicit zero", "float32"):
        messy = sp.csr_matrix((data.astype(np.float32) if defect == "float32" else data, indices, indptr),
                              shape=(2, 3))
        canonical = sp.csr_matrix(messy.toarray().astype(np.float64))
        model = textcw.make_learner("pa1", n_epochs=1, shuffle=False).fit(messy, [0, 1])
        reference = textcw.make_learner("pa1", n_epochs=1, shuffle=False).fit(canonical, [0, 1])
        np.testing.assert_array_equal(model.coef_, reference.coef_)
    elif defect == "nan":
        with pytest.raises(InputError, match="NaN or infinite"):
            textcw.make_learner("pa1").fit(sp.csr_matrix((data, indices, indptr), shape=(2, 3)), [0, 1])


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


@pytest.mark.parametrize("covariance", ["diag-kl", "diag-l2", "exact", "full"])
@pytest.mark.parametrize("problem", ["binary_problem", "multiclass_problem"])
def test_cw_stdev_mistakes_do_not_depend_on_initial_scale(covariance, problem, request):
    # NIPS 2008, Lemma 3: the stdev algorithm is invariant to Sigma_1 = a I (mu scales with
    # sqrt(a), Sigma with a). The variance floor is relative to a, so the guard keeps this.
    X, y = request.getfixturevalue(problem)
    params = dict(eta=0.7, covariance=covariance, n_epochs=2, random_state=0)
    base = textcw.make_learner("cw-stdev", a=1.0, **params).fit(X, y)
    for a in (1e-3, 0.5, 40.0):
        other = textcw.make_learner("cw-stdev", a=a, **params).fit(X, y)
        assert other.mistakes_ == base.mistakes_
        np.testing.assert_array_equal(other.predict(X), base.predict(X))
        np.testing.assert_allclose(other.coef_, np.sqrt(a) * base.coef_, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(other.sigma_, a * base.sigma_, rtol=1e-6)


def test_binary_probability_is_the_closed_form(binary_problem):
    X, y = binary_problem
    model = textcw.make_learner("cw-var", random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    mu, s = model.coef_[0], model.sigma_[0]
    Xd = X.toarray()
    with np.errstate(invalid="ignore"):  # 0/0 for the empty documents, set below
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
        ("perceptron", {"n_epochs": 0}, "n_epochs must be an integer in [1, 1000000]"),
        ("cw-var", {"covariance": "diagonal"}, "covariance must be one of 'diag-kl', 'diag-l2'"),
    ],
)
def test_invalid_parameters_are_refused_with_the_range(name, params, fragment):
    with pytest.raises(ParameterError, match=re.escape(fragment)):
        textcw.make_learner(name, **params)


def test_unknown_parameter_lists_valid_ones():
    with pytest.raises(ParameterError, match="unknown parameter 'C' for learner 'cw-var'; valid parameters: a, average, covariance, dtype, eta"):
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
        (np.ones((3, 2)), [0, 0, 0], "only one class"),
        (np.ones((3, 2)), [0.5, 1.25, 2.0], "Unknown label type: continuous"),
        (np.ones((3, 0)), [0, 1, 0], r"0 feature\(s\)"),
        (np.ones((2, 2)) * 1j, [0, 1], "Complex data not supported"),
        (np.ones((2, 2)), None, "requires y to be passed"),
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
    for method in (model.predict, model.decision_function):
        with pytest.raises(InputError, match="X has 39 features, but PassiveAggressive is expecting 40"):
            method(X[:, :39])


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


def test_partial_fit_stream_may_start_with_one_class(binary_problem):
    X, y = binary_problem
    first = np.flatnonzero(y == "pos")[:3]
    model = textcw.make_learner("arow").partial_fit(X[first], y[first], classes=["neg", "pos"])
    assert len(model.mistakes_) == 1 and model.n_updates_ == [3]
    model.partial_fit(X, y)
    assert np.mean(model.predict(X) == y) > 0.8


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


# --------------------------------------------------------------------------- full covariance, SOP, SGD
@pytest.mark.parametrize("name,diagonal", [("cw-var", "diag-kl"), ("arow", "diag-kl"), ("scw1", "diag-kl"),
                                           ("sop", "diag")])
def test_full_covariance_refuses_a_d_that_does_not_fit(name, diagonal):
    # 10^6 features: one matrix would take 8 TB.
    X = sp.csr_matrix((np.ones(3), ([0, 1, 1], [5, 7, 999_999])), shape=(2, 1_000_000))
    model = textcw.make_learner(name, covariance="full")
    with pytest.raises(ParameterError, match=f"covariance='full' needs a 1000000 x 1000000 matrix "
                                             rf"\(8000.0 GB\).*use covariance='{diagonal}'"):
        model.fit(X, [0, 1])


def test_full_covariance_budget_counts_every_label_block(monkeypatch):
    import textcw.learners.linalg as linalg

    monkeypatch.setattr(linalg, "full_matrix_budget", lambda: 3 * 30 * 30 * 8)  # 3 blocks of 30^2
    X = np.eye(30)
    textcw.make_learner("cw-var", covariance="full").fit(X, np.arange(30) % 3)
    with pytest.raises(ParameterError, match="needs 4 matrices of 30 x 30, one per label"):
        textcw.make_learner("cw-var", covariance="full").fit(X, np.arange(30) % 4)


@pytest.mark.parametrize("name", GAUSSIAN)
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_full_covariance_views_and_probabilities(name, fit_intercept, binary_problem):
    X, y = binary_problem
    model = textcw.make_learner(name, covariance="full", fit_intercept=fit_intercept,
                                random_state=0).fit(X, y)
    Sigma = model.covariance_
    d = 40 + fit_intercept
    assert Sigma.shape == (d, d) and np.array_equal(Sigma, Sigma.T)
    assert np.linalg.eigvalsh(Sigma).min() > 0
    np.testing.assert_allclose(model.sigma_[0], np.diag(Sigma)[:40], rtol=1e-12)
    Xd = X.toarray()
    Xa = np.hstack([Xd, np.ones((300, 1))]) if fit_intercept else Xd
    var = np.einsum("ij,jk,ik->i", Xa, Sigma, Xa)
    np.testing.assert_allclose(model.margin_variance(X), var, rtol=1e-9, atol=1e-15)
    scores = model.decision_function(X)
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.where(scores == 0, 0.5, ndtr(scores / np.sqrt(var)))
    np.testing.assert_allclose(model.predict_proba(X)[:, 1], expected, rtol=1e-9)


def test_full_covariance_multiclass_views(multiclass_problem):
    X, y = multiclass_problem
    model = textcw.make_learner("cw-stdev", covariance="full", eta=0.8, random_state=0).fit(X, y)
    assert model.coef_.shape == (4, 30) and model.sigma_.shape == (4, 30)
    assert model.covariance_.shape == (4, 30, 30)
    for k in range(4):
        np.testing.assert_allclose(model.sigma_[k], np.diag(model.covariance_[k]), rtol=1e-12)
    var = model.margin_variance(X)
    assert var.shape == (400, 4)
    Xd = X.toarray()
    np.testing.assert_allclose(var[:, 2], np.einsum("ij,jk,ik->i", Xd, model.covariance_[2], Xd), rtol=1e-9,
                               atol=1e-15)
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0, rtol=1e-12)
    assert np.mean(model.predict(X) == y) > 0.8


def test_diagonal_models_have_no_full_matrix(binary_problem):
    X, y = binary_problem
    model = textcw.make_learner("arow").fit(X, y)
    with pytest.raises(AttributeError, match="covariance_ exists only for covariance='full'.*sigma_"):
        model.covariance_


def test_changing_the_covariance_form_after_fitting_is_refused(binary_problem):
    X, y = binary_problem
    model = textcw.make_learner("cw-var").partial_fit(X, y, classes=["neg", "pos"])
    model.set_params(covariance="full")
    with pytest.raises(ParameterError, match=re.escape(
            "CWVar: covariance was 'diag-kl' when the model was fitted and is now 'full'; covariance "
            "decides the shape of the fitted state, so the fitted model cannot be continued by "
            "partial_fit with covariance='full': call fit() to start over with the new value, or "
            "set_params(covariance='diag-kl') to keep the fitted model")):
        model.partial_fit(X, y)
    model.fit(X, y)  # fit starts over with the new form
    assert model.covariance_.shape == (40, 40)


@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_sop_decision_function_is_the_papers_score(covariance, binary_problem):
    import reference as ref

    X, y = binary_problem
    model = textcw.make_learner("sop", covariance=covariance, a=0.5, n_epochs=1, shuffle=False).fit(X, y)
    vsum, A = np.zeros(40), (0.5 * np.eye(40) if covariance == "full" else np.full(40, 0.5))
    ref.sop_binary(X, model._encode(y), np.arange(300), vsum, A, full=covariance == "full")
    Xd = X.toarray()
    if covariance == "full":
        want = [vsum @ np.linalg.solve(A + np.outer(x, x), x) for x in Xd]
        np.testing.assert_allclose(model.coef_[0], np.linalg.solve(A, vsum), rtol=1e-10, atol=1e-12)
    else:
        want = [np.sum(vsum * x / (A + x * x)) for x in Xd]
        np.testing.assert_allclose(model.coef_[0], vsum / A, rtol=1e-12)
    np.testing.assert_allclose(model.decision_function(X), want, rtol=1e-10, atol=1e-12)


def test_sop_multiclass_scores(multiclass_problem):
    X, y = multiclass_problem
    for covariance in ("diag", "full"):
        model = textcw.make_learner("sop", covariance=covariance, random_state=0).fit(X, y)
        scores = model.decision_function(X)
        assert scores.shape == (400, 4)
        np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(scores, axis=1)])
        assert np.mean(model.predict(X) == y) > 0.8


def test_sgd_refuses_a_decay_that_wipes_out_the_weights():
    with pytest.raises(ParameterError, match="eta0=2.0 with alpha=0.5 is invalid; learning_rate='constant' "
                                             "needs eta0 \\* alpha < 1"):
        textcw.make_learner("sgd", learning_rate="constant", eta0=2.0, alpha=0.5)
    textcw.make_learner("sgd", learning_rate="decay", eta0=2.0, alpha=0.5)  # never flips a sign


@pytest.mark.parametrize("name,params", [(n, {}) for n in GAUSSIAN] + [("cw-var", {"covariance": "full"}),
                                                                        ("cw-stdev", {"covariance": "exact"})])
def test_gaussian_learners_classify_blobs_with_consistent_probabilities(name, params):
    # What sklearn's check_classifiers_train asserts, except predict == argmax(predict_proba) for
    # multi-class problems (see test_sklearn.py): binary probabilities agree with predict.
    from sklearn.datasets import make_blobs
    from sklearn.preprocessing import StandardScaler

    X, y = make_blobs(n_samples=300, random_state=0, cluster_std=0.1)
    X = StandardScaler().fit_transform(X)
    for labels in (y, (y > 0).astype(int)):
        model = textcw.make_learner(name, random_state=0, fit_intercept=True, **params).fit(X, labels)
        proba = model.predict_proba(X)
        assert proba.shape == (300, len(np.unique(labels)))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert np.mean(model.predict(X) == labels) > 0.83
        if len(np.unique(labels)) == 2:
            np.testing.assert_array_equal(np.argmax(proba, axis=1), model.predict(X))
