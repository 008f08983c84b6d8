"""Weighted examples: ``sample_weight`` and ``class_weight`` (docs/algorithms.md "Weighted examples").

The kernels are checked against the weighted twins of tests/reference.py (written from the
derivation: the perceptron's step ``s``, PA-I/PA-II and SCW ``C -> s C``, AROW ``r -> r / s``,
SGD's gradient times ``s``), the derivations themselves against a numerical minimisation of the
weighted objective, and "a weight of 2 is the document seen twice" exactly where theory says
it holds.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize_scalar
from scipy.special import ndtri

import reference as ref
from sparse_data import random_sparse
from textcw._csr import as_kernel_csr
from textcw.errors import InputError, ParameterError
from textcw.learners._kernels import constants as c
from textcw.learners._kernels import first_order, gaussian_diag, sgd
from textcw.learners.arow import AROW
from textcw.learners.averaged_perceptron import AveragedPerceptron
from textcw.learners.cw_stdev import CWStdev
from textcw.learners.cw_var import CWVar
from textcw.learners.passive_aggressive import PassiveAggressive, PassiveAggressiveI, PassiveAggressiveII
from textcw.learners.perceptron import Perceptron
from textcw.learners.scw import SCW1, SCW2
from textcw.learners.sgd import SGD


def problem(seed, n=120, d=80, K=None):
    X = as_kernel_csr(random_sparse(n, d, 0.08, seed, empty_rows=(0,)))
    rng = np.random.default_rng(seed + 7)
    scores = X @ rng.normal(size=(X.shape[1], K or 1))
    if K:
        y = np.argmax(scores, axis=1).astype(np.int64)
    else:
        y = np.where(scores[:, 0] > 0, 1.0, -1.0) * np.where(rng.random(n) < 0.1, -1.0, 1.0)
    order = rng.permutation(n).astype(np.int64)
    weights = rng.uniform(0.2, 3.0, size=n)
    return X, y, order, weights


def run(kernel, X, y, order, *args):
    return kernel(X.indptr, X.indices, X.data, y, order, *args)


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


FIRST_ORDER = [(c.PERCEPTRON, ref.PERCEPTRON), (c.PA1, ref.PA1), (c.PA2, ref.PA2)]
GAUSSIAN = [(c.AROW_SQUARED_HINGE, ref.AROW), (c.AROW_HINGE, ref.AROW_HINGE), (c.SCW1, ref.SCW1),
            (c.SCW2, ref.SCW2)]
FORMS = [(c.DIAG_KL, "diag-kl"), (c.DIAG_L2, "diag-l2")]


# --------------------------------------------------------------------------- kernels vs twins
@pytest.mark.parametrize("code, name", FIRST_ORDER)
def test_first_order_kernels_follow_the_weighted_twins(code, name):
    X, y, order, weights = problem(1)
    w = np.zeros(X.shape[1])
    w_ref = w.copy()
    counts = run(first_order.binary_epoch, X, y, order, w, code, 0.3, weights)
    assert counts == ref.first_order_binary(X, y, order, w_ref, name, C=0.3, weights=weights)
    close(w, w_ref)
    X, y, order, weights = problem(2, K=4)
    W = np.zeros((X.shape[1], 4))
    W_ref = W.copy()
    counts = run(first_order.multiclass_top1_epoch, X, y, order, W, code, 0.3, weights)
    assert counts == ref.first_order_multiclass(X, y, order, W_ref, name, C=0.3, weights=weights)
    close(W, W_ref)


@pytest.mark.parametrize("loss, schedule", [(c.HINGE, c.DECAY), (c.LOG, c.CONSTANT),
                                            (c.MODIFIED_HUBER, c.INVSCALING)])
def test_sgd_kernels_follow_the_weighted_twins(loss, schedule):
    losses = {c.HINGE: "hinge", c.LOG: "log", c.MODIFIED_HUBER: "modified_huber"}
    schedules = {c.DECAY: "decay", c.CONSTANT: "constant", c.INVSCALING: "invscaling"}
    X, y, order, weights = problem(3)
    w, count = np.zeros(X.shape[1]), np.zeros(1)
    w_ref, count_ref = w.copy(), count.copy()
    args = (0.01, 0.5, 0.5)
    counts = run(sgd.binary_epoch, X, y, order, w, count, loss, schedule, *args, weights)
    assert counts == ref.sgd_binary(X, y, order, w_ref, count_ref, losses[loss], schedules[schedule], *args,
                                    weights=weights)
    close(w, w_ref)
    X, y, order, weights = problem(4, K=3)
    W, count = np.zeros((X.shape[1], 3)), np.zeros(1)
    W_ref, count_ref = W.copy(), count.copy()
    counts = run(sgd.multiclass_top1_epoch, X, y, order, W, count, loss, schedule, *args, weights)
    assert counts == ref.sgd_multiclass(X, y, order, W_ref, count_ref, losses[loss], schedules[schedule],
                                        *args, weights=weights)
    close(W, W_ref)


@pytest.mark.parametrize("form, form_name", FORMS)
@pytest.mark.parametrize("code, name", GAUSSIAN)
def test_diagonal_gaussian_kernels_follow_the_weighted_twins(code, name, form, form_name):
    eta, C, r = 0.8, 0.7, 1.5
    X, y, order, weights = problem(5)
    mu, s = np.zeros(X.shape[1]), np.ones(X.shape[1])
    mu_ref, s_ref = mu.copy(), s.copy()
    counts = run(gaussian_diag.binary_epoch, X, y, order, mu, s, code, form, ndtri(eta), C, r, 0.0,
                 np.zeros(c.N_COUNTS, np.int64), weights)
    assert counts == ref.gaussian_diag_binary(X, y, order, mu_ref, s_ref, name, form_name, eta=eta,
                                              C=C, r=r, weights=weights)
    close(mu, mu_ref)
    close(s, s_ref)
    X, y, order, weights = problem(6, K=3)
    mu, s = np.zeros((X.shape[1], 3)), np.ones((X.shape[1], 3))
    mu_ref, s_ref = mu.copy(), s.copy()
    counts = run(gaussian_diag.multiclass_top1_epoch, X, y, order, mu, s, code, form, ndtri(eta), C, r,
                 0.0, np.zeros(c.N_COUNTS, np.int64), weights)
    assert counts == ref.gaussian_diag_multiclass(X, y, order, mu_ref, s_ref, name, form_name, eta=eta,
                                                  C=C, r=r, weights=weights)
    close(mu, mu_ref)
    close(s, s_ref)


# --------------------------------------------------------------------------- unit weights
LEARNERS = [Perceptron, PassiveAggressiveI, PassiveAggressiveII, SGD, AROW, SCW1, SCW2]


@pytest.mark.parametrize("K", [None, 3])
@pytest.mark.parametrize("learner", LEARNERS)
def test_unit_weights_give_the_unweighted_model_bit_for_bit(learner, K):
    X, y, _, _ = problem(7, K=K)
    plain = learner(n_epochs=2).fit(X, y)
    weighted = learner(n_epochs=2).fit(X, y, sample_weight=np.ones(len(y)))
    assert np.array_equal(plain.coef_, weighted.coef_)
    assert plain.mistakes_ == weighted.mistakes_


@pytest.mark.parametrize("code", [c.PERCEPTRON, c.PA1, c.PA2])
def test_the_kernels_weighted_path_with_unit_weights_is_the_unweighted_path(code):
    X, y, order, _ = problem(8)
    w1, w2 = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    assert run(first_order.binary_epoch, X, y, order, w1, code, 0.4) == \
        run(first_order.binary_epoch, X, y, order, w2, code, 0.4, np.ones(len(y)))
    assert np.array_equal(w1, w2)


def test_a_zero_weight_skips_the_document():
    X, y, _, _ = problem(9)
    keep = np.arange(len(y)) % 3 != 0
    weights = np.where(keep, 1.0, 0.0)
    for learner in (Perceptron, PassiveAggressive, CWVar, AROW):  # 0 and 1 are defined for all
        skipped = learner(shuffle=False).fit(X, y, sample_weight=weights)
        dropped = learner(shuffle=False).fit(X[keep], y[keep])
        assert np.array_equal(skipped.coef_, dropped.coef_), learner


# --------------------------------------------------------------------------- the derivations
def test_pa1_weight_s_minimises_the_weighted_pa1_objective():
    """JMLR 2006 eq. 4 with the slack weighted: min_w ||w - w_t||^2 / 2 + s C xi, xi >= 1 - y w.x.
    The minimiser lies on w_t + tau y x, so a one-dimensional search over tau finds it."""
    x = np.array([0.5, -1.0, 2.0])
    X = as_kernel_csr(sp.csr_matrix(x[None, :]))
    q = x @ x
    for s, C in [(2.0, 0.05), (0.3, 0.1), (5.0, 1.0)]:
        w = np.zeros(3)
        run(first_order.binary_epoch, X, np.array([1.0]), np.array([0], np.int64), w, c.PA1, C,
            np.array([s]))

        def objective(tau):
            return 0.5 * tau * tau * q + s * C * max(0.0, 1.0 - tau * q)

        best = minimize_scalar(objective, bounds=(0.0, 2.0 / q), method="bounded",
                               options={"xatol": 1e-12})
        np.testing.assert_allclose(w, best.x * x, atol=1e-8)
        np.testing.assert_allclose(w, min(s * C, 1.0 / q) * x, rtol=1e-15)


@pytest.mark.parametrize("loss", ["squared_hinge", "hinge"])
def test_arow_weight_s_is_arow_with_r_over_s(loss):
    X, y, _, _ = problem(10)
    s = 2.5
    weighted = AROW(r=3.0, loss=loss, shuffle=False, n_epochs=1).fit(X, y, sample_weight=np.full(len(y), s))
    scaled = AROW(r=3.0 / s, loss=loss, shuffle=False, n_epochs=1).fit(X, y)
    assert np.array_equal(weighted.coef_, scaled.coef_)
    assert np.array_equal(weighted.sigma_, scaled.sigma_)


def test_arow_weighted_objective_matches_a_numerical_minimum():
    """MLJ 2013 eq. 3 with the example's terms weighted by s, for one feature (a 1-d Gaussian):
    KL(N(mu, S) || N(0, a)) + s/(2r) (1 - y mu x)^2 + s/(2r) x^2 S, minimised over (mu, S)."""
    from scipy.optimize import minimize

    a, r, s, x = 1.0, 2.0, 3.0, 1.5
    # fit needs two classes: an empty document of the other class, which moves nothing
    model = AROW(r=r, a=a, n_epochs=1).fit(as_kernel_csr(sp.csr_matrix([[x], [0.0]])), [1, 0],
                                           sample_weight=[s, 1.0])

    def objective(p):
        mu, S = p[0], np.exp(p[1])
        kl = 0.5 * (np.log(a / S) + S / a + mu * mu / a - 1.0)
        return kl + s / (2 * r) * (1 - mu * x) ** 2 + s / (2 * r) * x * x * S

    best = minimize(objective, [0.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-14})
    np.testing.assert_allclose(model.coef_[0, 0], best.x[0], atol=1e-6)
    np.testing.assert_allclose(model.sigma_[0, 0], np.exp(best.x[1]), atol=1e-6)


def test_scw_weight_s_is_scw_with_sC():
    X, y, _, _ = problem(11)
    for learner in (SCW1, SCW2):
        weighted = learner(C=0.2, shuffle=False, n_epochs=1).fit(X, y, sample_weight=np.full(len(y), 4.0))
        scaled = learner(C=0.8, shuffle=False, n_epochs=1).fit(X, y)
        assert np.array_equal(weighted.coef_, scaled.coef_)


# --------------------------------------------------------------------------- weight 2 vs twice
def _one_document(x, label=1.0):
    return as_kernel_csr(sp.csr_matrix(np.asarray(x, float)[None, :])), np.array([label])


def test_perceptron_weight_two_is_two_presentations_only_when_both_are_mistakes():
    """w += 2 y x equals two steps y x exactly when the second presentation is a mistake too."""
    X, y = _one_document([1.0, 0.0, 0.0])
    order = np.array([0], np.int64)
    for start, still_wrong in [([-3.0, 1.0, 0.0], True), ([-0.5, 1.0, 0.0], False)]:
        twice, weighted = np.array(start), np.array(start)
        run(first_order.binary_epoch, X, y, order, twice, c.PERCEPTRON, 1.0)
        run(first_order.binary_epoch, X, y, order, twice, c.PERCEPTRON, 1.0)
        run(first_order.binary_epoch, X, y, order, weighted, c.PERCEPTRON, 1.0, np.array([2.0]))
        assert np.array_equal(weighted, np.array(start) + 2 * np.array([1.0, 0.0, 0.0]))
        assert np.array_equal(twice, weighted) == still_wrong


def test_sgd_hinge_constant_rate_weight_two_is_two_presentations_inside_the_margin():
    """With alpha = 0 and a constant rate, the hinge's slope is 1 for every margin below 1, so
    the second presentation takes the same step as the first as long as the first leaves the
    margin below 1 (here eta ||x||^2 = 0.05): 2 eta y x either way. With alpha > 0 the decay is
    applied once, not twice, so the equality is exact only for alpha = 0."""
    X, _ = _one_document([0.6, -0.8])  # ||x|| = 1
    twice = SGD(learning_rate="constant", eta0=0.05, alpha=0.0, n_epochs=1, shuffle=False)
    weighted = SGD(learning_rate="constant", eta0=0.05, alpha=0.0, n_epochs=1, shuffle=False)
    # two classes are needed for fit: a far-away document of the other class, weighted 0
    # fit needs two classes: an empty document of the other class, which moves nothing
    Xs = as_kernel_csr(sp.vstack([X, X, sp.csr_matrix([[0.0, 0.0]])]).tocsr())
    twice.fit(Xs, [1, 1, 0], sample_weight=[1.0, 1.0, 1.0])
    weighted.fit(Xs, [1, 1, 0], sample_weight=[2.0, 0.0, 1.0])
    np.testing.assert_allclose(twice.coef_, weighted.coef_, rtol=0, atol=1e-16)
    np.testing.assert_allclose(weighted.coef_[0], 2 * 0.05 * np.array([0.6, -0.8]), rtol=1e-15)


# --------------------------------------------------------------------------- class_weight
def test_balanced_class_weight_raises_the_minority_recall():
    rng = np.random.default_rng(0)
    n_major, n_minor = 900, 100
    X = np.vstack([rng.normal(0.0, 1.0, size=(n_major, 5)), rng.normal(0.8, 1.0, size=(n_minor, 5))])
    y = np.r_[np.zeros(n_major, int), np.ones(n_minor, int)]
    # PA-I's weight acts through its cap s C only: with C = 1 these steps are rarely capped, so a
    # small C (strong regularisation) is where class weights matter; likewise AROW's r / s.
    for learner, params in ((PassiveAggressiveI, {"C": 0.01}), (SGD, {}), (AROW, {"r": 10.0}),
                            (Perceptron, {})):
        recall = {}
        for cw in (None, "balanced"):
            model = learner(class_weight=cw, fit_intercept=True, **params).fit(X, y)
            recall[cw] = np.mean(model.predict(X[y == 1]) == 1)
        assert recall["balanced"] > recall[None] + 0.1, (learner.__name__, recall)


def test_balanced_weights_are_n_over_classes_times_count():
    X, y = np.eye(4), np.array([0, 0, 0, 1])
    a = PassiveAggressiveI(class_weight="balanced", shuffle=False, n_epochs=1).fit(X, y)
    b = PassiveAggressiveI(shuffle=False, n_epochs=1).fit(X, y, sample_weight=[4 / 6] * 3 + [2.0])
    assert np.array_equal(a.coef_, b.coef_)
    c_ = PassiveAggressiveI(class_weight={1: 2.0}, shuffle=False, n_epochs=1).fit(X, y, sample_weight=[0.5] * 4)
    d = PassiveAggressiveI(shuffle=False, n_epochs=1).fit(X, y, sample_weight=[0.5, 0.5, 0.5, 1.0])
    assert np.array_equal(c_.coef_, d.coef_)


# --------------------------------------------------------------------------- refusals
X_SMALL, Y_SMALL = np.eye(4), np.array([0, 1, 0, 1])
TWOS = np.full(4, 2.0)


@pytest.mark.parametrize("learner, names", [
    (PassiveAggressive(), ["PA-I", "PA-II"]),
    (CWVar(), ["AROW", "SCW"]), (CWStdev(), ["AROW", "SCW"]),
    (AveragedPerceptron(), ["no weighted update"]),
    (Perceptron(multiclass="seq"), ["multiclass='top1'"]),
    (AROW(covariance="full"), ["diag-kl"]),
])
def test_learners_without_a_weighted_update_refuse_weights_other_than_0_and_1(learner, names):
    y = np.array([0, 1, 2, 1]) if getattr(learner, "multiclass", "top1") != "top1" else Y_SMALL
    with pytest.raises(ParameterError) as error:
        learner.fit(X_SMALL, y, sample_weight=TWOS)
    for name in names:
        assert name in str(error.value)
    learner.fit(X_SMALL, y, sample_weight=[1.0, 0.0, 1.0, 1.0])  # 0 and 1: defined for all


@pytest.mark.parametrize("weights, message", [
    ([1.0, -1.0, 1.0, 1.0], "finite numbers"), ([1.0, np.nan, 1.0, 1.0], "finite numbers"),
    ([1.0, 1e101, 1.0, 1.0], "finite numbers"), ([1.0, 1.0], "one weight per document"),
    ([0.0] * 4, "every sample weight is zero"), ([1.0, 0.0, 1.0, 0.0], "two classes"),
    (["a"] * 4, "array of numbers"),
])
def test_bad_sample_weights_are_input_errors(weights, message):
    with pytest.raises(InputError, match=message):
        PassiveAggressiveI().fit(X_SMALL, Y_SMALL, sample_weight=weights)


def test_balanced_is_refused_by_partial_fit_and_bad_class_weights_are_parameter_errors():
    with pytest.raises(ParameterError, match="partial_fit does not see"):
        SGD(class_weight="balanced").partial_fit(X_SMALL, Y_SMALL, classes=[0, 1])
    SGD(class_weight={0: 2.0}).partial_fit(X_SMALL, Y_SMALL, classes=[0, 1])  # a dict is fine
    with pytest.raises(ParameterError, match="not among the classes"):
        SGD(class_weight={7: 2.0}).fit(X_SMALL, Y_SMALL)
    with pytest.raises(ParameterError, match="class_weight"):
        SGD(class_weight="heavy").fit(X_SMALL, Y_SMALL)
    with pytest.raises(ParameterError, match="'auto'"):
        PassiveAggressiveI(C="auto").fit(X_SMALL, Y_SMALL, sample_weight=TWOS)


def test_partial_fit_weights_equal_fit_weights_for_one_pass():
    X, y, _, weights = problem(12)
    labels = np.where(y > 0, 1, 0)
    a = PassiveAggressiveII(n_epochs=1, shuffle=False).fit(X, labels, sample_weight=weights)
    b = PassiveAggressiveII().partial_fit(X, labels, classes=[0, 1], sample_weight=weights)
    assert np.array_equal(a.coef_, b.coef_)
