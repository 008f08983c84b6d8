"""Every kernel agrees with its plain-numpy twin in tests/reference.py to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtri

import reference as ref
from conftest import random_sparse
from textcw._csr import as_kernel_csr
from textcw.learners._kernels import first_order, gaussian_diag
from textcw.learners._kernels import constants as c

FIRST_ORDER = [(c.PERCEPTRON, ref.PERCEPTRON), (c.PA, ref.PA), (c.PA1, ref.PA1), (c.PA2, ref.PA2)]
GAUSSIAN = [(c.CW_VAR, "var"), (c.CW_STDEV, "stdev")]
COVARIANCE = [(c.DIAG_KL, "diag-kl"), (c.DIAG_L2, "diag-l2")]


def problem(seed, n=200, d=200, K=None):
    # Text-like sparsity: about 10 active features per document.
    X = as_kernel_csr(random_sparse(n, d, 0.05, seed, empty_rows=(0, 7)))
    # Labels from a hidden linear model with 10% noise: realistic streams, on which the
    # variances shrink gradually (pure-noise labels are the numerical-guard tests' job).
    rng = np.random.default_rng(seed + 100)
    scores = X @ rng.normal(size=(X.shape[1], K or 1))
    noisy = rng.random(n) < 0.1
    if K:
        y = np.where(noisy, rng.integers(0, K, size=n), np.argmax(scores, axis=1))
    else:
        y = np.where(scores[:, 0] > 0, 1.0, -1.0) * np.where(noisy, -1.0, 1.0)
    order = rng.permutation(n).astype(np.int64)
    return X, y, order


def run_kernel(kernel, X, y, order, *args):
    return kernel(X.indptr, X.indices, X.data, y, order, *args)


@pytest.mark.parametrize("code,name", FIRST_ORDER)
@pytest.mark.parametrize("seed", [0, 1])
def test_first_order_binary(code, name, seed):
    X, y, order = problem(seed)
    w = np.zeros(X.shape[1])
    w_ref = w.copy()
    for _ in range(3):  # several epochs so the later ones start from a non-zero model
        got = run_kernel(first_order.binary_epoch, X, y, order, w, code, 0.3)
        want = ref.first_order_binary(X, y, order, w_ref, name, 0.3)
        assert got == want
    np.testing.assert_allclose(w, w_ref, rtol=0, atol=1e-12)
    assert np.any(w != 0)


@pytest.mark.parametrize("code,name", FIRST_ORDER)
def test_first_order_multiclass(code, name):
    X, y, order = problem(3, K=5)
    W = np.zeros((X.shape[1], 5))
    W_ref = W.copy()
    for _ in range(3):
        got = run_kernel(first_order.multiclass_top1_epoch, X, y.astype(np.int64), order, W, code, 0.3)
        want = ref.first_order_multiclass(X, y, order, W_ref, name, 0.3)
        assert got == want
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("code,rule", GAUSSIAN)
@pytest.mark.parametrize("cov_code,cov", COVARIANCE)
@pytest.mark.parametrize("eta", [0.7, 0.95])
def test_gaussian_diag_binary(code, rule, cov_code, cov, eta):
    X, y, order = problem(5)
    mu, s = np.zeros(X.shape[1]), np.full(X.shape[1], 0.7)
    mu_ref, s_ref = mu.copy(), s.copy()
    for _ in range(3):
        got = run_kernel(gaussian_diag.binary_epoch, X, y, order, mu, s, code, cov_code, ndtri(eta))
        want = ref.gaussian_diag_binary(X, y, order, mu_ref, s_ref, rule, cov, eta)
        assert got == want
    np.testing.assert_allclose(mu, mu_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s, s_ref, rtol=0, atol=1e-12)
    assert np.all(s > 1e-6) and np.all(s <= 0.7) and np.any(s < 0.7)


@pytest.mark.parametrize("code,rule", GAUSSIAN)
@pytest.mark.parametrize("cov_code,cov", COVARIANCE)
def test_gaussian_diag_multiclass(code, rule, cov_code, cov):
    X, y, order = problem(6, K=4)
    mu, s = np.zeros((X.shape[1], 4)), np.ones((X.shape[1], 4))
    mu_ref, s_ref = mu.copy(), s.copy()
    for _ in range(3):
        got = run_kernel(gaussian_diag.multiclass_top1_epoch, X, y.astype(np.int64), order, mu, s,
                         code, cov_code, ndtri(0.9))
        want = ref.gaussian_diag_multiclass(X, y, order, mu_ref, s_ref, rule, cov, 0.9)
        assert got == want
    np.testing.assert_allclose(mu, mu_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(s, s_ref, rtol=0, atol=1e-12)


def test_ties_count_as_mistakes_and_go_to_lowest_competitor():
    # One document, all scores zero: a tie is a mistake, and the competitor is label 0 (y = 2).
    X = as_kernel_csr(np.array([[1.0, 2.0]]))
    W = np.zeros((2, 3))
    mistakes, updates = first_order.multiclass_top1_epoch(
        X.indptr, X.indices, X.data, np.array([2]), np.array([0]), W, c.PERCEPTRON, 0.0)
    assert (mistakes, updates) == (1, 1)
    np.testing.assert_array_equal(W, [[-1, 0, 1], [-2, 0, 2]])


@pytest.mark.parametrize("rule", ["var", "stdev"])
def test_closed_forms_equal_the_papers_where_well_conditioned(rule):
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(2000):
        m, v, phi = rng.normal() * 2, rng.uniform(0.05, 5), rng.uniform(0.2, 2.5)
        want = ref.cw_steps_textbook(rule, m, v, phi)
        got = ref.cw_steps(rule, m, v, phi)[0]
        kernel = gaussian_diag.steps(c.CW_VAR if rule == "var" else c.CW_STDEV, m, v, phi)[0]
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
        assert kernel == pytest.approx(got, rel=1e-12, abs=1e-15)
        checked += want > 0
    assert checked > 500  # both the update and the no-update branch were exercised


@pytest.mark.parametrize("rule,code", [("var", c.CW_VAR), ("stdev", c.CW_STDEV)])
@pytest.mark.parametrize("cov", [c.DIAG_KL, c.DIAG_L2])
def test_constraint_holds_with_equality_after_update(rule, code, cov):
    # With one active feature the diagonal forms are exact, so the constraint is met with equality:
    # var: y mu.x = phi x' Sigma x;  stdev: y mu.x = phi sqrt(x' Sigma x).
    phi = ndtri(0.9)
    rng = np.random.default_rng(1)
    for _ in range(200):
        x_val, s0, mu0, y = rng.normal() * 3, rng.uniform(0.01, 4), rng.normal(), rng.choice([-1.0, 1.0])
        X = as_kernel_csr(np.array([[x_val]]))
        mu, s = np.array([mu0]), np.array([s0])
        gaussian_diag.binary_epoch(X.indptr, X.indices, X.data, np.array([y]), np.array([0]),
                                   mu, s, code, cov, phi)
        m, v = y * mu[0] * x_val, s[0] * x_val**2
        bound = phi * v if rule == "var" else phi * np.sqrt(v)
        m_before, v_before = y * mu0 * x_val, s0 * x_val**2
        violated = m_before < (phi * v_before if rule == "var" else phi * np.sqrt(v_before))
        if violated:
            assert m == pytest.approx(bound, rel=1e-9, abs=1e-12)
        else:
            assert (mu[0], s[0]) == (mu0, s0)
