"""Balanced Winnow: the numba kernels against the numpy reference, and the rule by hand."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import textcw
import winnow_reference as ref
from numpy.testing import assert_allclose, assert_array_equal
from textcw.errors import ParameterError
from textcw.plugins import use_registries
from textcw.testing import parametrize_with_checks

import textcw_example.plugin
from textcw_example import kernels
from textcw_example.winnow import BalancedWinnow

# The kit's fixtures (make_registries, binary_data, topic_corpus, ...).
pytest_plugins = ["textcw.testing.fixtures"]

SETTINGS = [  # (alpha, beta, theta, margin)
    (1.5, 0.5, 1.0, 0.0),
    (1.1, 0.9, 0.3, 0.5),  # thick threshold: updates without mistakes
    (2.0, 0.25, 0.0, 0.0),  # theta = 0: ties at the start
]


def random_csr(n, d, density, seed, *, empty_rows=(3,)):
    """Seeded CSR in the kernels' canonical form, values of both signs, some empty rows."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(scale=0.8, size=k)).tolil()
    for i in empty_rows:
        X[i, :] = 0
    X = X.tocsr()
    X.sum_duplicates()
    X.eliminate_zeros()
    X.indices = X.indices.astype(np.int64)
    X.indptr = X.indptr.astype(np.int64)
    return X


@pytest.fixture
def registries(make_registries):
    """The built-ins plus this plugin, in use for the test (whatever else is installed)."""
    regs = make_registries(textcw_example.plugin)
    with use_registries(regs):
        yield regs


# The kit's learner checks, one test each, so that every failing check shows at once.
@parametrize_with_checks([BalancedWinnow])
def test_passes_the_learner_checks(component, check):
    check(component)


@pytest.mark.parametrize("alpha, beta, theta, margin", SETTINGS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_kernel_matches_reference(seed, alpha, beta, theta, margin):
    X = random_csr(150, 40, 0.15, seed)
    rng = np.random.default_rng(100 + seed)
    y = np.where(X @ rng.normal(size=40) > 0.2, 1.0, -1.0)
    u, v = np.full(40, 0.7), np.full(40, 0.7)
    ru, rv = u.copy(), v.copy()
    for _ in range(3):
        order = rng.permutation(150).astype(np.int64)
        got = kernels.binary_epoch(X.indptr, X.indices, X.data, y, order, u, v,
                                   np.log(alpha), np.log(beta), theta, margin)
        want = ref.binary_epoch(X, y, order, ru, rv, alpha, beta, theta, margin)
        assert tuple(got) == want
        assert_allclose(u, ru, rtol=1e-12, atol=0)
        assert_allclose(v, rv, rtol=1e-12, atol=0)
    assert want[1] > 0, "the data must make the learner update, or the comparison is empty"


@pytest.mark.parametrize("alpha, beta, theta, margin", SETTINGS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_multiclass_kernel_matches_reference(seed, alpha, beta, theta, margin):
    X = random_csr(200, 30, 0.2, seed)
    rng = np.random.default_rng(200 + seed)
    y = np.argmax(X @ rng.normal(size=(30, 4)), axis=1).astype(np.int64)
    u, v = np.full((30, 4), 1.3), np.full((30, 4), 1.3)
    ru, rv = u.copy(), v.copy()
    for _ in range(3):
        order = rng.permutation(200).astype(np.int64)
        got = kernels.multiclass_epoch(X.indptr, X.indices, X.data, y, order, u, v,
                                       np.log(alpha), np.log(beta), theta, margin)
        want = ref.multiclass_epoch(X, y, order, ru, rv, alpha, beta, margin)
        assert tuple(got) == want
        assert_allclose(u, ru, rtol=1e-12, atol=0)
        assert_allclose(v, rv, rtol=1e-12, atol=0)
    assert want[1] > 0


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_learner_matches_reference_through_fit(fit_intercept):
    """fit() runs the kernel once per epoch over the rows in order when shuffle=False."""
    X = random_csr(120, 25, 0.2, seed=7)
    w = np.random.default_rng(8).normal(size=25)
    labels = np.where(X @ w > 0, "yes", "no")
    model = BalancedWinnow(alpha=1.3, beta=0.6, theta=0.4, margin=0.2, n_epochs=4,
                           shuffle=False, fit_intercept=fit_intercept).fit(X, labels)

    Xr = sp.hstack([X, np.ones((120, 1))], format="csr") if fit_intercept else X
    y = np.where(labels == "yes", 1.0, -1.0)  # classes_ = ["no", "yes"]: "yes" is +1
    u, v = np.ones(Xr.shape[1]), np.ones(Xr.shape[1])
    counts = [ref.binary_epoch(Xr, y, range(120), u, v, 1.3, 0.6, 0.4, 0.2) for _ in range(4)]

    assert model.mistakes_ == [m for m, _ in counts]
    assert model.n_updates_ == [n for _, n in counts]
    scale = np.max(np.abs(u))
    assert_allclose(model.coef_.ravel(), (u - v)[:25], rtol=1e-12, atol=1e-12 * scale)
    bias = (u - v)[25] if fit_intercept else 0.0
    assert_allclose(model.intercept_, [bias - 0.4], rtol=1e-12, atol=1e-12 * scale)


def test_promotion_and_demotion_by_hand():
    """theta = 0 with equal starting weights: both documents tie, so both update.

    Document 1, x = (1, 0, 2), label "pos" (+1): score 0 - 0 = 0, a tie, a mistake; promotion
    multiplies u by alpha ** x = (2, 1, 4) and v by beta ** x = (0.5, 1, 0.25).
    Document 2, x = (0, 3, 0), label "neg" (-1): score 0, a mistake; demotion multiplies u_1 by
    beta ** 3 = 0.125 and v_1 by alpha ** 3 = 8.
    """
    X = sp.csr_matrix(np.array([[1.0, 0, 2], [0, 3, 0]]))
    model = BalancedWinnow(alpha=2.0, beta=0.5, theta=0.0, n_epochs=1, shuffle=False)
    model.fit(X, ["pos", "neg"])
    # exp(x log alpha) equals alpha ** x up to rounding, hence allclose rather than equality.
    assert_allclose(model.coef_, [[2 - 0.5, 0.125 - 8, 4 - 0.25]], rtol=1e-14)
    assert_array_equal(model.intercept_, [0.0])
    assert model.mistakes_ == [2] and model.n_updates_ == [2]


def test_correct_documents_leave_the_model_alone():
    """theta = 1: document 2 scores -1 and is correctly negative, so only document 1 updates."""
    X = sp.csr_matrix(np.array([[1.0, 0, 2], [0, 3, 0]]))
    model = BalancedWinnow(alpha=2.0, beta=0.5, theta=1.0, n_epochs=1, shuffle=False)
    model.fit(X, ["pos", "neg"])
    assert_allclose(model.coef_, [[1.5, 0.0, 3.75]], rtol=1e-14)
    assert_array_equal(model.intercept_, [-1.0])
    assert model.mistakes_ == [1] and model.n_updates_ == [1]
    # The threshold is part of the decision: 1.5 * 1 - 1 > 0, but 1.5 * 0.5 - 1 < 0.
    assert_array_equal(model.predict(np.array([[1.0, 0, 0], [0.5, 0, 0]])), ["pos", "neg"])


def test_thick_threshold_updates_beyond_mistakes(binary_data):
    X, y = binary_data
    plain = BalancedWinnow(margin=0.0, random_state=0).fit(X, y)
    # Mistake-driven: every update is a mistake (no row of the fixture is empty).
    assert plain.n_updates_ == plain.mistakes_
    thick = BalancedWinnow(margin=2.0, random_state=0).fit(X, y)
    assert all(n >= m for n, m in zip(thick.n_updates_, thick.mistakes_))
    assert sum(thick.n_updates_) > sum(thick.mistakes_)


def test_multiclass_ignores_theta(multiclass_data):
    X, y = multiclass_data
    a = BalancedWinnow(theta=0.0, random_state=0).fit(X, y)
    b = BalancedWinnow(theta=5.0, random_state=0).fit(X, y)
    assert_array_equal(a.coef_, b.coef_)
    assert_array_equal(a.intercept_, np.zeros(3))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_coef_and_intercept_give_decision_function(binary_data, multiclass_data, fit_intercept):
    for X, y in (binary_data, multiclass_data):
        model = BalancedWinnow(fit_intercept=fit_intercept, random_state=0).fit(X, y)
        scores = np.asarray(X @ model.coef_.T) + model.intercept_
        assert_allclose(model.decision_function(X), scores.squeeze(), rtol=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fewer_mistakes_than_perceptron_when_irrelevant_attributes_abound(seed, registries):
    """Littlestone's setting: a 4-literal disjunction over 2000 boolean attributes.

    Winnow's mistake bound grows with log(d), the perceptron's with d, so on one online pass
    Balanced Winnow should make clearly fewer mistakes.
    """
    rng = np.random.RandomState(seed)
    n, d = 1500, 2000
    X = sp.random(n, d, density=20 / d, format="lil", random_state=rng, data_rvs=np.ones)
    relevant = rng.choice(d, 4, replace=False)
    for i in np.flatnonzero(rng.rand(n) < 0.3):  # make the relevant attributes occur often
        X[i, rng.choice(relevant)] = 1.0
    X = X.tocsr()
    y = np.where(np.asarray(X[:, relevant].sum(axis=1)).ravel() >= 1, "yes", "no")
    mistakes = {
        name: textcw.make_learner(name, n_epochs=1, shuffle=False)
        .fit(X, y).mistakes_[0]
        for name in ("perceptron", "balanced-winnow")
    }
    assert mistakes["balanced-winnow"] < 0.7 * mistakes["perceptron"], mistakes


@pytest.mark.parametrize("param, value, allowed", [
    ("alpha", 1.0, "> 1"),
    ("alpha", "big", "> 1"),
    ("beta", 1.0, "in (0, 1)"),
    ("beta", 0.0, "in (0, 1)"),
    ("theta", -0.5, ">= 0"),
    ("margin", -1e-9, ">= 0"),
    ("init_weight", 0.0, "> 0"),
])
def test_invalid_values_name_the_parameter_and_range(registries, param, value, allowed):
    with pytest.raises(ParameterError) as err:
        textcw.make_learner("balanced-winnow", **{param: value})
    message = str(err.value)
    assert f"{param}={value!r}" in message and allowed in message
    assert "\n" not in message


def test_unknown_parameter_lists_the_valid_ones(registries):
    with pytest.raises(ParameterError, match="unknown parameter 'eta'.*alpha.*beta.*margin"):
        textcw.make_learner("balanced-winnow", eta=0.9)
