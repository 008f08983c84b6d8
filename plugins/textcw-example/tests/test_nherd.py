"""NHERD: the numba kernels against the numpy twin, the diagonal forms against the full update,
and the Gaussian views (sigma_, predict_proba) that come from textcw's base class."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import textcw
import nherd_reference as ref
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import ndtr
from textcw.errors import ParameterError
from textcw.kernels import VARIANCE_FLOOR
from textcw.testing import learner_under_test, parametrize_with_checks

from textcw_example.nherd import NHERD

FORMS = ("diag-kl", "diag-l2", "exact")


def random_csr(n, d, density, seed):
    """Seeded CSR, values of both signs, one empty row."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(scale=0.8, size=k)).tolil()
    X[3, :] = 0
    X = X.tocsr()
    X.eliminate_zeros()
    return X


def binary_problem(seed):
    X = random_csr(150, 40, 0.15, seed)
    y = np.where(X @ np.random.default_rng(100 + seed).normal(size=40) > 0.2, 1, -1)
    return X, y


def multiclass_problem(seed):
    X = random_csr(200, 30, 0.2, seed)
    y = np.argmax(X @ np.random.default_rng(200 + seed).normal(size=(30, 4)), axis=1)
    return X, y


# The kit's learner checks, one pytest item per check and covariance form.
@parametrize_with_checks([learner_under_test(NHERD(covariance=form), name=f"NHERD-{form}")
                          for form in FORMS])
def test_passes_the_learner_checks(component, check):
    check(component)


@pytest.mark.parametrize("covariance", FORMS)
@pytest.mark.parametrize("C, a", [(1.0, 1.0), (0.05, 2.5), (20.0, 0.3)])
@pytest.mark.parametrize("seed", [0, 1])
def test_binary_epoch_matches_reference(seed, C, a, covariance):
    """One unshuffled epoch of fit: the learner's state is the twin's to 1e-12."""
    X, y = binary_problem(seed)
    model = NHERD(C=C, a=a, covariance=covariance, n_epochs=1, shuffle=False).fit(X, y)
    mu, s = np.zeros(40), np.full(40, a)
    want = ref.binary_epoch(X, y.astype(float), np.arange(150), mu, s, covariance, C,
                            a * VARIANCE_FLOOR)
    assert (model.mistakes_[0], model.n_updates_[0]) == want
    assert 0 < want[1] < 150  # updates happen, and the empty row is not one of them
    state = model.fitted_state()
    assert_allclose(state["mu"], mu, rtol=1e-12, atol=1e-15)
    assert_allclose(state["s"], s, rtol=1e-12, atol=0)
    assert model.n_variance_floored_ == [0]


@pytest.mark.parametrize("covariance", FORMS)
@pytest.mark.parametrize("C, a", [(1.0, 1.0), (0.05, 2.5)])
@pytest.mark.parametrize("seed", [0, 1])
def test_multiclass_epoch_matches_reference(seed, C, a, covariance):
    X, y = multiclass_problem(seed)
    model = NHERD(C=C, a=a, covariance=covariance, n_epochs=1, shuffle=False).fit(X, y)
    mu, s = np.zeros((30, 4)), np.full((30, 4), a)
    want = ref.multiclass_epoch(X, y, np.arange(200), mu, s, covariance, C, a * VARIANCE_FLOOR)
    assert (model.mistakes_[0], model.n_updates_[0]) == want and want[1] > 0
    state = model.fitted_state()
    assert_allclose(state["mu"], mu, rtol=1e-12, atol=1e-15)
    assert_allclose(state["s"], s, rtol=1e-12, atol=0)


@pytest.mark.parametrize("covariance", ["diag-kl", "exact"])
def test_floor_keeps_variances_positive_and_is_counted(covariance):
    """A huge C shrinks variances past a * 1e-12: the floor stands in, the twin agrees."""
    X, y = binary_problem(2)
    C, a = 1e30, 1.0
    model = NHERD(C=C, a=a, covariance=covariance, n_epochs=1, shuffle=False)
    with pytest.warns(textcw.errors.VarianceFloorWarning):
        model.fit(X, y)
    mu, s = np.zeros(40), np.full(40, a)
    ref.binary_epoch(X, y.astype(float), np.arange(150), mu, s, covariance, C, a * VARIANCE_FLOOR)
    assert model.n_variance_floored_[0] > 10
    assert model.sigma_.min() == a * VARIANCE_FLOOR
    assert_allclose(model.fitted_state()["s"], s, rtol=1e-12, atol=0)


def test_drop_needs_no_floor():
    """diag-l2 takes at most the fraction s_j x_j^2 / v off s_j (c / (1 + c v) < 1 / v), so even a
    huge C leaves a document with two or more features above the floor."""
    X, y = binary_problem(2)
    model = NHERD(C=1e30, covariance="diag-l2", n_epochs=1, shuffle=False).fit(X, y)
    mu, s = np.zeros(40), np.full(40, 1.0)
    want = ref.binary_epoch(X, y.astype(float), np.arange(150), mu, s, "diag-l2", 1e30, 0.0)
    assert model.n_updates_[0] == want[1] > 0 and model.n_variance_floored_ == [0]
    assert_allclose(model.fitted_state()["s"], s, rtol=1e-9, atol=0)


@pytest.mark.parametrize("covariance", FORMS)
@pytest.mark.parametrize("C", [0.1, 1.0, 7.0])
def test_with_one_feature_every_form_is_the_full_update(covariance, C):
    """With one feature the diagonal is the whole matrix: the paper's full update, as printed."""
    rng = np.random.default_rng(5)
    x = rng.normal(scale=1.5, size=60)
    y = np.where(rng.random(60) < 0.7, 1, -1)
    model = NHERD(C=C, a=0.8, covariance=covariance, n_epochs=1, shuffle=False)
    model.fit(sp.csr_matrix(x[:, None]), y)
    mu, Sigma = np.zeros(1), np.full((1, 1), 0.8)
    for xi, yi in zip(x, y):
        mu, Sigma = ref.full_update(mu, Sigma, np.array([xi]), yi, C)
    assert_allclose(model.coef_[0], mu, rtol=1e-12)
    assert_allclose(model.sigma_[0], np.diag(Sigma), rtol=1e-12)


def test_full_update_is_the_precision_update():
    """The docstring's derivation, numerically: Sigma - Sigma x x' Sigma (C^2 v + 2C)/(1 + Cv)^2
    is (Sigma^{-1} + (2C + C^2 v) x x')^{-1}, and the herd's linear map A Sigma A'."""
    rng = np.random.default_rng(9)
    B = rng.normal(size=(6, 6))
    Sigma, x, C = B @ B.T + np.eye(6), rng.normal(size=6), 0.7
    _, new = ref.full_update(np.zeros(6), Sigma, x, 1, C)
    v = x @ Sigma @ x
    assert_allclose(new, np.linalg.inv(np.linalg.inv(Sigma) + (2 * C + C * C * v) * np.outer(x, x)),
                    rtol=1e-10)
    A = np.eye(6) - C * np.outer(Sigma @ x, x) / (1 + C * v)
    assert_allclose(new, A @ Sigma @ A.T, rtol=1e-10)


def test_gaussian_views_come_from_the_base_class():
    X, y = binary_problem(0)
    model = NHERD(C=0.5, covariance="diag-l2", fit_intercept=True).fit(X, y)
    s = model.fitted_state()["s"]
    assert_array_equal(model.sigma_, s[None, :40])
    scores = model.decision_function(X)
    var = X.multiply(X) @ s[:40] + s[40]
    assert_allclose(model.margin_variance(X), var, rtol=1e-12)
    proba = model.predict_proba(X)
    assert_allclose(proba[:, 1], ndtr(scores / np.sqrt(var)), rtol=1e-12)
    assert_allclose(proba.sum(axis=1), 1.0)
    Xm, ym = multiclass_problem(0)
    multi = NHERD(covariance="exact").fit(Xm, ym)
    assert multi.sigma_.shape == (4, 30) and np.all(multi.sigma_ > 0)
    assert_allclose(multi.predict_proba(Xm).sum(axis=1), 1.0, atol=1e-8)


def test_registered_and_validated():
    model = textcw.make_learner("nherd", C=0.1, covariance="exact")
    assert isinstance(model, NHERD) and model.get_params()["C"] == 0.1
    X, y = binary_problem(0)
    for bad in ({"covariance": "full"}, {"C": 0.0}, {"a": -1.0}):
        with pytest.raises(ParameterError, match=next(iter(bad))):
            NHERD(**bad).fit(X, y)
    fitted = NHERD().fit(X, y)
    fitted.set_params(covariance="diag-l2")
    with pytest.raises(ParameterError, match="covariance"):
        fitted.partial_fit(X, y)


def test_nherd_self_tunes_from_its_own_declaration():
    """"auto" and the tune grid come from NHERD's ``tuning``: no core table names it."""
    from textcw.learners.selftune import SelfTuning, tune_grid

    X, y = binary_problem(5)
    model = NHERD(C="auto", n_epochs=2).fit(X, y)
    grid = [{"C": [c["C"]]} for c in model.tuning_["candidates"]]
    reference = SelfTuning(NHERD(n_epochs=2), grid=grid).fit(X, y)
    assert model.tuned_params_ == reference.best_params_
    assert_array_equal(model.coef_, reference.best_estimator_.coef_)
    assert tune_grid(NHERD, quick=True) == {"C": [1e-3, 1e-1]}


@pytest.mark.parametrize("covariance", FORMS)
@pytest.mark.parametrize("C, a", [(1.0, 1.0), (0.05, 2.5), (1e30, 1.0)])
@pytest.mark.parametrize("problem", ["binary", "multiclass"])
def test_the_epoch_loop_equals_the_hand_written_kernels_exactly(problem, C, a, covariance):
    """textcw's loop over NHERD's step gives the state, counts and counters of the kernels
    written by hand before it (tests/nherd_kernels_before.py), bit for bit, over shuffled epochs
    (C=1e30 drives variances to the floor, so the floor counts are compared too)."""
    import warnings

    import nherd_kernels_before as before
    from textcw.kernels import COUNT_FLOORED, N_COUNTS

    from textcw_example.nherd import FORM_CODES

    X, y = binary_problem(3) if problem == "binary" else multiclass_problem(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", textcw.errors.VarianceFloorWarning)
        model = NHERD(C=C, a=a, covariance=covariance, n_epochs=3, random_state=7).fit(X, y)
    binary = problem == "binary"
    shape = (X.shape[1],) if binary else (X.shape[1], 4)
    mu, s = np.zeros(shape), np.full(shape, a)
    yk = np.where(y == model.classes_[1], 1.0, -1.0) if binary else np.searchsorted(model.classes_, y)
    epoch = before.binary_epoch if binary else before.multiclass_epoch
    rng = np.random.RandomState(7)
    results, floored = [], []
    for _ in range(3):
        counts = np.zeros(N_COUNTS, np.int64)
        results.append(epoch(X.indptr, X.indices, X.data, yk, rng.permutation(X.shape[0]), mu, s,
                             FORM_CODES[covariance], C, a * VARIANCE_FLOOR, counts))
        floored.append(int(counts[COUNT_FLOORED]))
    state = model.fitted_state()
    assert_array_equal(state["mu"], mu)
    assert_array_equal(state["s"], s)
    assert list(zip(model.mistakes_, model.n_updates_)) == results
    assert model.n_variance_floored_ == floored
    if C == 1e30 and covariance != "diag-l2":  # diag-l2 shrinks at most s_j x_j^2 / v of s_j
        assert max(floored) > 0
