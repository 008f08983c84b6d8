"""The k-competitor multi-class kernels agree with their plain-numpy twins to 1e-12.

The twins (tests/reference.py) are written from docs/algorithms.md "Multi-class" with dense
matrices: ``par`` as k
copies of the model averaged, ``exact`` as the joint problem over the stacked label blocks with
explicit inverses, Brent's method for each CW multiplier and an enumeration of active sets for
the AROW and PA quadratic programs. They check the closed forms of the kernels
(:mod:`textcw.learners._kernels.hildreth`), not just their arithmetic.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtri

import reference as ref
from sparse_data import random_sparse
from test_kernels import C_SCW, FLOOR, R_AROW, close, problem, run_kernel
from textcw._csr import as_kernel_csr
from textcw.learners._kernels import (
    common,
    first_order,
    first_order_kbest,
    gaussian_diag,
    gaussian_diag_kbest,
    gaussian_exact,
    gaussian_exact_kbest,
    gaussian_full,
    gaussian_full_kbest,
)
from textcw.learners._kernels import constants as c
from textcw.learners.gaussian import covariance_from_factor

STRATEGIES = [(c.MC_SEQ, ref.SEQ), (c.MC_PAR, ref.PAR), (c.MC_EXACT, ref.EXACT)]
CW = [(c.CW_VAR, ref.VAR), (c.CW_STDEV, ref.STDEV)]
AROW = [(c.AROW_SQUARED_HINGE, ref.AROW), (c.AROW_HINGE, ref.AROW_HINGE)]
SCW = [(c.SCW1, ref.SCW1), (c.SCW2, ref.SCW2)]  # seq and par: SCW has no joint soft problem
COVARIANCE = [(c.DIAG_KL, "diag-kl"), (c.DIAG_L2, "diag-l2")]
FIRST_ORDER = [(c.PERCEPTRON, ref.PERCEPTRON), (c.PA, ref.PA), (c.PA1, ref.PA1), (c.PA2, ref.PA2)]
K = 5


def dense_problem(seed, n, d, labels):
    """Like test_kernels.problem, with about 40% of the features active in a document.

    The full-covariance tests need a small ``d``; at text-like sparsity most documents would
    then hold a single feature, and ``exact`` leaves its active competitors with equal margins
    (so a later document on that one feature scores them equal up to rounding).
    """
    X = as_kernel_csr(random_sparse(n, d, 0.4, seed, empty_rows=(0, 7)))
    rng = np.random.default_rng(seed + 100)
    scores = X @ rng.normal(size=(d, labels))
    y = np.where(rng.random(n) < 0.1, rng.integers(0, labels, size=n), np.argmax(scores, axis=1))
    return X, y, rng.permutation(n).astype(np.int64)


def start_mean(d, labels, seed):
    """A random starting mean: labels that start equal are updated alike by ``exact`` (equal
    multipliers for equal constraints), so their scores then tie exactly in one summation order
    and not in another, and kernel and twin would rank them differently."""
    return np.random.default_rng(seed).normal(scale=0.1, size=(d, labels))


def combos(rules, strategies=STRATEGIES):
    """(rule, strategy) pairs the learners allow: exact needs a problem to solve jointly."""
    out = []
    for code, name in rules:
        for scode, sname in strategies:
            if scode == c.MC_EXACT and code in (c.AROW_HINGE, c.PERCEPTRON, c.SCW1, c.SCW2):
                continue
            out.append(pytest.param(code, name, scode, sname, id=f"{name}-{sname}"))
    return out


# --------------------------------------------------------------------------- competitor choice
def test_top_competitors_are_sorted_with_ties_to_the_lowest_label():
    rng = np.random.default_rng(0)
    out = np.empty(6, np.int64)
    for _ in range(500):
        scores = rng.integers(0, 4, size=7).astype(float)  # many ties
        y = int(rng.integers(7))
        k = int(rng.integers(1, 7))
        n = common.top_competitors(scores, y, k, out)
        assert n == k
        assert out[:k].tolist() == ref.competitors(scores, y, k)
        assert out[0] == common.top_competitor(scores, y)


# --------------------------------------------------------------------------- first order
@pytest.mark.parametrize("code,name,scode,sname", combos(FIRST_ORDER))
@pytest.mark.parametrize("k", [2, K - 1])
def test_first_order_kbest(code, name, scode, sname, k):
    X, y, order = problem(21, K=K)
    W = start_mean(X.shape[1], K, 3)
    W_ref = W.copy()
    for _ in range(3):
        got = run_kernel(first_order_kbest.multiclass_epoch, X, y.astype(np.int64), order, W, code,
                         scode, k, 0.3)
        want = ref.first_order_multiclass_kbest(X, y.astype(int), order, W_ref, name, sname, k, 0.3)
        assert got == want
    close(W, W_ref)


@pytest.mark.parametrize("code", [c.PERCEPTRON, c.PA, c.PA1, c.PA2])
def test_first_order_seq_with_one_competitor_is_top1_exactly(code):
    X, y, order = problem(22, K=K)
    W, W1 = np.zeros((X.shape[1], K)), np.zeros((X.shape[1], K))
    for _ in range(3):
        a = run_kernel(first_order.multiclass_top1_epoch, X, y.astype(np.int64), order, W, code, 0.3)
        b = run_kernel(first_order_kbest.multiclass_epoch, X, y.astype(np.int64), order, W1, code,
                       c.MC_SEQ, 1, 0.3)
        assert a == b
    assert np.array_equal(W, W1)


# --------------------------------------------------------------------------- Gaussian, diagonal
@pytest.mark.parametrize("code,rule,scode,sname", combos(CW + AROW + SCW))
@pytest.mark.parametrize("cov_code,cov", COVARIANCE)
def test_gaussian_diag_kbest(code, rule, scode, sname, cov_code, cov):
    X, y, order = problem(23, K=K, n=100)
    mu, s = start_mean(X.shape[1], K, 1), np.ones((X.shape[1], K))
    mu_ref, s_ref = mu.copy(), s.copy()
    for _ in range(2):
        got = run_kernel(gaussian_diag_kbest.multiclass_epoch, X, y.astype(np.int64), order, mu, s,
                         code, cov_code, scode, 3, ndtri(0.9), C_SCW, R_AROW, FLOOR)
        want = ref.gaussian_diag_multiclass_kbest(X, y.astype(int), order, mu_ref, s_ref, rule, cov,
                                                  sname, 3, 0.9, C_SCW, R_AROW, FLOOR)
        assert got == want
    close(mu, mu_ref)
    close(s, s_ref)
    assert np.all(s > 1e-6)  # well conditioned: the floor never fired


# --------------------------------------------------------------------------- Gaussian, full
@pytest.mark.parametrize("code,rule,scode,sname", combos(CW + AROW + SCW))
def test_gaussian_full_kbest(code, rule, scode, sname):
    X, y, order = dense_problem(24, 80, 12, 4)
    d = X.shape[1]
    mu, R = start_mean(d, 4, 2), np.repeat(np.eye(d)[None], 4, axis=0)
    mu_ref, Sigma = mu.copy(), np.repeat(np.eye(d)[None], 4, axis=0)
    for _ in range(2):
        got = run_kernel(gaussian_full_kbest.multiclass_epoch, X, y.astype(np.int64), order, mu, R,
                         code, scode, 2, ndtri(0.9), C_SCW, R_AROW, FLOOR)
        want = ref.gaussian_full_multiclass_kbest(X, y.astype(int), order, mu_ref, Sigma, rule, sname,
                                                  2, 0.9, C_SCW, R_AROW, FLOOR)
        assert got == want
    close(mu, mu_ref)
    for label in range(4):
        close(covariance_from_factor(R[label]), Sigma[label])


# --------------------------------------------------------------------------- Gaussian, exact diagonal
@pytest.mark.parametrize("code,rule,scode,sname", combos(CW, STRATEGIES[:2]))
def test_gaussian_exact_kbest(code, rule, scode, sname):
    X, y, order = problem(25, K=K, n=100)
    mu, s = np.zeros((X.shape[1], K)), np.ones((X.shape[1], K))
    mu_ref, s_ref = mu.copy(), s.copy()
    for _ in range(2):
        got = run_kernel(gaussian_exact_kbest.multiclass_epoch, X, y.astype(np.int64), order, mu, s,
                         code, scode, 3, ndtri(0.9), FLOOR)
        want = ref.gaussian_exact_multiclass_kbest(X, y.astype(int), order, mu_ref, s_ref, rule, sname,
                                                   3, 0.9, FLOOR)
        assert got == want
    close(mu, mu_ref)
    close(s, s_ref)


# --------------------------------------------------------------------------- one competitor
# AROW's exact update is MLJ 2013's full one, whose covariance uses every label: not its top-1
# reduction (test_multiclass_updates.py checks it against its own definition).
ONE = [(code, scode) for code in (c.CW_VAR, c.CW_STDEV, c.AROW_SQUARED_HINGE, c.AROW_HINGE)
       for scode in (c.MC_SEQ, c.MC_PAR, c.MC_EXACT)
       if not (scode == c.MC_EXACT and code in (c.AROW_SQUARED_HINGE, c.AROW_HINGE))]


@pytest.mark.parametrize("code,scode", ONE)
@pytest.mark.parametrize("cov_code", [c.DIAG_KL, c.DIAG_L2])
def test_one_competitor_reproduces_top1(code, cov_code, scode):
    # seq is the top-1 kernel bit for bit; par and exact equal it to rounding
    X, y, order = problem(26, K=4)
    args = (code, cov_code)
    mu, s = np.zeros((X.shape[1], 4)), np.ones((X.shape[1], 4))
    mu1, s1 = mu.copy(), s.copy()
    for _ in range(3):
        a = run_kernel(gaussian_diag.multiclass_top1_epoch, X, y.astype(np.int64), order, mu, s, *args,
                       ndtri(0.9), C_SCW, R_AROW, FLOOR)
        b = run_kernel(gaussian_diag_kbest.multiclass_epoch, X, y.astype(np.int64), order, mu1, s1,
                       *args, scode, 1, ndtri(0.9), C_SCW, R_AROW, FLOOR)
        assert a == b
    if scode == c.MC_SEQ:
        assert np.array_equal(mu, mu1) and np.array_equal(s, s1)
    close(mu, mu1)
    close(s, s1)


@pytest.mark.parametrize("code", [c.CW_VAR, c.CW_STDEV])
@pytest.mark.parametrize("scode", [c.MC_SEQ, c.MC_PAR, c.MC_EXACT])
def test_one_competitor_reproduces_top1_full(code, scode):
    X, y, order = dense_problem(27, 100, 15, 3)
    d = X.shape[1]
    mu, R = np.zeros((d, 3)), np.repeat(np.eye(d)[None], 3, axis=0)
    mu1, R1 = mu.copy(), R.copy()
    for _ in range(2):
        a = run_kernel(gaussian_full.multiclass_top1_epoch, X, y.astype(np.int64), order, mu, R, code,
                       ndtri(0.9), C_SCW, R_AROW, FLOOR)
        b = run_kernel(gaussian_full_kbest.multiclass_epoch, X, y.astype(np.int64), order, mu1, R1,
                       code, scode, 1, ndtri(0.9), C_SCW, R_AROW, FLOOR)
        assert a == b
    if scode == c.MC_SEQ:
        assert np.array_equal(mu, mu1) and np.array_equal(R, R1)
    close(mu, mu1)
    np.testing.assert_allclose(R1, R, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("code", [c.CW_VAR, c.CW_STDEV])
def test_exact_form_seq_with_one_competitor_is_top1_exactly(code):
    X, y, order = problem(28, K=4)
    mu, s = np.zeros((X.shape[1], 4)), np.ones((X.shape[1], 4))
    mu1, s1 = mu.copy(), s.copy()
    for _ in range(3):
        a = run_kernel(gaussian_exact.multiclass_top1_epoch, X, y.astype(np.int64), order, mu, s, code,
                       ndtri(0.9), FLOOR)
        b = run_kernel(gaussian_exact_kbest.multiclass_epoch, X, y.astype(np.int64), order, mu1, s1,
                       code, c.MC_SEQ, 1, ndtri(0.9), FLOOR)
        assert a == b
    assert np.array_equal(mu, mu1) and np.array_equal(s, s1)
