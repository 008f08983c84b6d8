"""Every kernel agrees with its plain-numpy twin in tests/reference.py to 1e-12."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtri

import reference as ref
from sparse_data import random_sparse
from textcw._csr import as_kernel_csr, contract_met
from textcw.learners._kernels import (
    averaged,
    common,
    first_order,
    gaussian_diag,
    gaussian_exact,
    gaussian_full,
    gaussian_rules,
    linalg,
    second_order,
    sgd,
)
from textcw.learners._kernels import constants as c
from textcw.learners.gaussian import covariance_from_factor

FIRST_ORDER = [(c.PERCEPTRON, ref.PERCEPTRON), (c.PA, ref.PA), (c.PA1, ref.PA1), (c.PA2, ref.PA2)]
CW = [(c.CW_VAR, ref.VAR), (c.CW_STDEV, ref.STDEV)]
RULES = CW + [(c.AROW_SQUARED_HINGE, ref.AROW), (c.AROW_HINGE, ref.AROW_HINGE),
              (c.SCW1, ref.SCW1), (c.SCW2, ref.SCW2)]
COVARIANCE = [(c.DIAG_KL, "diag-kl"), (c.DIAG_L2, "diag-l2")]
LOSSES = [(c.HINGE, "hinge"), (c.LOG, "log"), (c.MODIFIED_HUBER, "modified_huber")]
SCHEDULES = [(c.DECAY, "decay"), (c.CONSTANT, "constant"), (c.INVSCALING, "invscaling")]
C_SCW, R_AROW = 0.6, 0.8
FLOOR = 0.7 * c.VARIANCE_FLOOR  # the learners pass a * VARIANCE_FLOOR; a = 0.7 below


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


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- first order
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
    close(w, w_ref)
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
    close(W, W_ref)


def test_ties_count_as_mistakes_and_go_to_lowest_competitor():
    # One document, all scores zero: a tie is a mistake, and the competitor is label 0 (y = 2).
    X = as_kernel_csr(np.array([[1.0, 2.0]]))
    W = np.zeros((2, 3))
    mistakes, updates = first_order.multiclass_top1_epoch(
        X.indptr, X.indices, X.data, np.array([2]), np.array([0]), W, c.PERCEPTRON, 0.0)
    assert (mistakes, updates) == (1, 1)
    np.testing.assert_array_equal(W, [[-1, 0, 1], [-2, 0, 2]])


# --------------------------------------------------------------------------- averaged perceptron
@pytest.mark.parametrize("K", [None, 4])
def test_averaged_perceptron(K):
    X, y, order = problem(8, K=K)
    shape = (X.shape[1],) if K is None else (X.shape[1], K)
    mu, w, u, count = np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(1)
    history = [np.zeros(shape)]
    kernel = averaged.binary_epoch if K is None else averaged.multiclass_top1_epoch
    twin = ref.averaged_perceptron_binary if K is None else ref.averaged_perceptron_multiclass
    yk = y if K is None else y.astype(np.int64)
    for half in (order[:120], order[120:], order):  # split calls continue the same average
        got = run_kernel(kernel, X, yk, half, mu, w, u, count)
        want, mean = twin(X, y, half, history)
        assert got == want
        close(mu, mean)
        close(w, history[-1])
    assert count[0] == 400


# --------------------------------------------------------------------------- SGD
@pytest.mark.parametrize("loss_code,loss", LOSSES)
@pytest.mark.parametrize("schedule_code,schedule", SCHEDULES)
def test_sgd_binary(loss_code, loss, schedule_code, schedule):
    X, y, order = problem(9)
    # A strong decay (alpha eta0 = 0.05) so the scaled weights are folded back several times.
    alpha, eta0 = 0.1, 0.5
    w, count = np.zeros(X.shape[1]), np.zeros(1)
    w_ref, count_ref = w.copy(), count.copy()
    for _ in range(3):
        got = run_kernel(sgd.binary_epoch, X, y, order, w, count, loss_code, schedule_code, alpha, eta0, 0.6)
        want = ref.sgd_binary(X, y, order, w_ref, count_ref, loss, schedule, alpha, eta0, 0.6)
        assert got == want
    close(w, w_ref)
    assert count[0] == count_ref[0] == 600 and np.any(w != 0)


def test_sgd_rescales_tiny_scale():
    # 400 decays of (1 - 0.1) shrink the scale to 1e-18, far below the 1e-9 fold threshold.
    X, y, order = problem(9)
    order = np.tile(order, 2)
    w, count = np.zeros(X.shape[1]), np.zeros(1)
    w_ref, count_ref = w.copy(), count.copy()
    got = run_kernel(sgd.binary_epoch, X, y, order, w, count, c.HINGE, c.CONSTANT, 0.2, 0.5, 0.5)
    want = ref.sgd_binary(X, y, order, w_ref, count_ref, "hinge", "constant", 0.2, 0.5, 0.5)
    assert got == want
    np.testing.assert_allclose(w, w_ref, rtol=1e-12, atol=1e-300)
    assert np.all(np.isfinite(w))


@pytest.mark.parametrize("loss_code,loss", LOSSES)
def test_sgd_multiclass(loss_code, loss):
    X, y, order = problem(10, K=4)
    W, count = np.zeros((X.shape[1], 4)), np.zeros(1)
    W_ref, count_ref = W.copy(), count.copy()
    for _ in range(3):
        got = run_kernel(sgd.multiclass_top1_epoch, X, y.astype(np.int64), order, W, count,
                         loss_code, c.DECAY, 0.01, 0.5, 0.5)
        want = ref.sgd_multiclass(X, y, order, W_ref, count_ref, loss, "decay", 0.01, 0.5, 0.5)
        assert got == want
    close(W, W_ref)


# --------------------------------------------------------------------------- second-order perceptron
def test_sop_diag_binary():
    X, y, order = problem(11)
    d = X.shape[1]
    mu, vsum, A = np.zeros(d), np.zeros(d), np.full(d, 0.5)
    vsum_ref, A_ref = vsum.copy(), A.copy()
    for _ in range(3):
        got = run_kernel(second_order.binary_diag_epoch, X, y, order, mu, vsum, A)
        assert got == ref.sop_binary(X, y, order, vsum_ref, A_ref, full=False)
    close(vsum, vsum_ref)
    close(A, A_ref)
    close(mu, vsum_ref / A_ref)


def test_sop_full_binary():
    X, y, order = problem(12, d=40)
    d = X.shape[1]
    mu, vsum, R = np.zeros(d), np.zeros(d), np.eye(d) * np.sqrt(0.5)
    vsum_ref, A_ref = vsum.copy(), 0.5 * np.eye(d)
    for _ in range(3):
        got = run_kernel(second_order.binary_full_epoch, X, y, order, mu, vsum, R)
        assert got == ref.sop_binary(X, y, order, vsum_ref, A_ref, full=True)
    close(vsum, vsum_ref)
    close(R.T @ R, A_ref)
    close(mu, np.linalg.solve(A_ref, vsum_ref))


@pytest.mark.parametrize("full", [False, True])
def test_sop_multiclass(full):
    X, y, order = problem(13, d=30, K=3)
    d, K = X.shape[1], 3
    mu, vsum = np.zeros((d, K)), np.zeros((d, K))
    vsum_ref = vsum.copy()
    if full:
        A = np.repeat((np.eye(d) * np.sqrt(2.0))[None], K, axis=0)
        A_ref = np.repeat((2.0 * np.eye(d))[None], K, axis=0)
        kernel = second_order.multiclass_full_epoch
    else:
        A, A_ref = np.full((d, K), 2.0), np.full((d, K), 2.0)
        kernel = second_order.multiclass_diag_epoch
    for _ in range(3):
        got = run_kernel(kernel, X, y.astype(np.int64), order, mu, vsum, A)
        assert got == ref.sop_multiclass(X, y, order, vsum_ref, A_ref, full)
    close(vsum, vsum_ref)
    if full:
        for k in range(K):
            close(A[k].T @ A[k], A_ref[k])
            close(mu[:, k], np.linalg.solve(A_ref[k], vsum_ref[:, k]))
    else:
        close(mu, vsum_ref / A_ref)


# --------------------------------------------------------------------------- Gaussian, diagonal
@pytest.mark.parametrize("code,rule", RULES)
@pytest.mark.parametrize("cov_code,cov", COVARIANCE)
@pytest.mark.parametrize("eta", [0.7, 0.95])
def test_gaussian_diag_binary(code, rule, cov_code, cov, eta):
    X, y, order = problem(5)
    mu, s = np.zeros(X.shape[1]), np.full(X.shape[1], 0.7)
    mu_ref, s_ref = mu.copy(), s.copy()
    for _ in range(3):
        got = run_kernel(gaussian_diag.binary_epoch, X, y, order, mu, s, code, cov_code,
                         ndtri(eta), C_SCW, R_AROW, FLOOR)
        want = ref.gaussian_diag_binary(X, y, order, mu_ref, s_ref, rule, cov, eta, C_SCW, R_AROW, FLOOR)
        assert got == want
    close(mu, mu_ref)
    close(s, s_ref)
    # Well-conditioned: the variances shrank, but nowhere near the floor.
    assert np.all(s > 1e-6) and np.all(s <= 0.7) and np.any(s < 0.7)


@pytest.mark.parametrize("code,rule", RULES)
@pytest.mark.parametrize("cov_code,cov", COVARIANCE)
def test_gaussian_diag_multiclass(code, rule, cov_code, cov):
    X, y, order = problem(6, K=4)
    mu, s = np.zeros((X.shape[1], 4)), np.ones((X.shape[1], 4))
    mu_ref, s_ref = mu.copy(), s.copy()
    for _ in range(3):
        got = run_kernel(gaussian_diag.multiclass_top1_epoch, X, y.astype(np.int64), order, mu, s,
                         code, cov_code, ndtri(0.9), C_SCW, R_AROW, FLOOR)
        want = ref.gaussian_diag_multiclass(X, y, order, mu_ref, s_ref, rule, cov, 0.9, C_SCW, R_AROW, FLOOR)
        assert got == want
    close(mu, mu_ref)
    close(s, s_ref)


# --------------------------------------------------------------------------- Gaussian, full
@pytest.mark.parametrize("code,rule", RULES)
@pytest.mark.parametrize("eta", [0.7, 0.95])
def test_gaussian_full_binary(code, rule, eta):
    X, y, order = problem(14, d=60)
    d = X.shape[1]
    mu, R = np.zeros(d), np.eye(d) / np.sqrt(0.7)
    mu_ref, Sigma = mu.copy(), 0.7 * np.eye(d)
    for _ in range(3):
        got = run_kernel(gaussian_full.binary_epoch, X, y, order, mu, R, code, ndtri(eta), C_SCW,
                         R_AROW, FLOOR)
        want = ref.gaussian_full_binary(X, y, order, mu_ref, Sigma, rule, eta, C_SCW, R_AROW, FLOOR)
        assert got == want
    close(mu, mu_ref)
    close(covariance_from_factor(R), Sigma)
    assert np.all(np.tril(R, -1) == 0)
    assert np.all(np.linalg.eigvalsh(Sigma) > 1e-9)  # far above the floor: the guard never fired


@pytest.mark.parametrize("code,rule", RULES)
def test_gaussian_full_multiclass(code, rule):
    X, y, order = problem(15, d=30, K=3)
    d, K = X.shape[1], 3
    mu, R = np.zeros((d, K)), np.repeat(np.eye(d)[None], K, axis=0)
    mu_ref, Sigma = mu.copy(), np.repeat(np.eye(d)[None], K, axis=0)
    for _ in range(3):
        got = run_kernel(gaussian_full.multiclass_top1_epoch, X, y.astype(np.int64), order, mu, R,
                         code, ndtri(0.9), C_SCW, R_AROW, FLOOR)
        want = ref.gaussian_full_multiclass(X, y, order, mu_ref, Sigma, rule, 0.9, C_SCW, R_AROW, FLOOR)
        assert got == want
    close(mu, mu_ref)
    for k in range(K):
        close(covariance_from_factor(R[k]), Sigma[k])


# --------------------------------------------------------------------------- Gaussian, exact diagonal
@pytest.mark.parametrize("code,rule", CW)
@pytest.mark.parametrize("eta", [0.7, 0.95])
def test_gaussian_exact_binary(code, rule, eta):
    X, y, order = problem(16)
    mu, s = np.zeros(X.shape[1]), np.full(X.shape[1], 0.7)
    mu_ref, s_ref = mu.copy(), s.copy()
    for _ in range(3):
        got = run_kernel(gaussian_exact.binary_epoch, X, y, order, mu, s, code, ndtri(eta), FLOOR)
        want = ref.gaussian_exact_binary(X, y, order, mu_ref, s_ref, rule, eta, FLOOR)
        assert got == want
    close(mu, mu_ref)
    close(s, s_ref)
    assert np.all(s > 1e-6) and np.any(s < 0.7)


@pytest.mark.parametrize("code,rule", CW)
def test_gaussian_exact_multiclass(code, rule):
    X, y, order = problem(17, K=4)
    mu, s = np.zeros((X.shape[1], 4)), np.ones((X.shape[1], 4))
    mu_ref, s_ref = mu.copy(), s.copy()
    for _ in range(3):
        got = run_kernel(gaussian_exact.multiclass_top1_epoch, X, y.astype(np.int64), order, mu, s,
                         code, ndtri(0.9), FLOOR)
        want = ref.gaussian_exact_multiclass(X, y, order, mu_ref, s_ref, rule, 0.9, FLOOR)
        assert got == want
    close(mu, mu_ref)
    close(s, s_ref)


# --------------------------------------------------------------------------- closed forms
@pytest.mark.parametrize("rule", [ref.VAR, ref.STDEV])
def test_closed_forms_equal_the_papers_where_well_conditioned(rule):
    rng = np.random.default_rng(0)
    checked = 0
    code = c.CW_VAR if rule == ref.VAR else c.CW_STDEV
    for _ in range(2000):
        m, v, phi = rng.normal() * 2, rng.uniform(0.05, 5), rng.uniform(0.2, 2.5)
        want = ref.cw_steps_textbook(rule, m, v, phi)
        got = ref.cw_steps(rule, m, v, phi)[0]
        kernel = gaussian_rules.steps(code, m, v, phi, 1.0, 1.0)[0]
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
        assert kernel == pytest.approx(got, rel=1e-12, abs=1e-15)
        checked += want > 0
    assert checked > 500  # both the update and the no-update branch were exercised


def test_scw2_stable_form_equals_the_published_formula():
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(2000):
        m, v, phi, C = rng.normal() * 2, rng.uniform(0.05, 5), rng.uniform(0.2, 2.5), rng.uniform(0.05, 5)
        want = ref.scw2_alpha_textbook(m, v, phi, C)
        got = gaussian_rules.steps(c.SCW2, m, v, phi, C, 1.0)[0]
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
        checked += want > 0
    assert checked > 500


def test_scw2_tends_to_cw_stdev_and_scw1_caps_it():
    rng = np.random.default_rng(2)
    for _ in range(200):
        m, v, phi = rng.normal(), rng.uniform(0.05, 5), rng.uniform(0.2, 2.5)
        stdev = gaussian_rules.steps(c.CW_STDEV, m, v, phi, 1.0, 1.0)[0]
        assert gaussian_rules.steps(c.SCW2, m, v, phi, 1e12, 1.0)[0] == pytest.approx(stdev, rel=1e-9, abs=1e-12)
        assert gaussian_rules.steps(c.SCW1, m, v, phi, 0.1, 1.0)[0] == min(0.1, stdev)


def test_stdev_steps_stay_finite_for_confident_mistakes():
    # alpha v phi large: the papers' sqrt_u cancels to 0 and beta divides by zero.
    for m, v in [(-50.0, 1e-12), (-1e6, 1e-8), (-3.0, 1e-30)]:
        alpha, beta, cc = gaussian_rules.steps(c.CW_STDEV, m, v, 2.33, 1.0, 1.0)
        assert np.isfinite([alpha, beta, cc]).all() and alpha > 0 and beta > 0 and cc > 0
        assert v / (1 + cc * v) > 0  # the margin variance after the update, from the precision form


# --------------------------------------------------------------------------- building blocks
def test_kernel_ready_equals_its_twin():
    rng = np.random.default_rng(20)
    verdicts = set()
    for trial in range(400):
        X = random_sparse(6, 8, 0.4, trial, empty_rows=(1,))
        data, indices, indptr = X.data.copy(), X.indices.astype(np.int64), X.indptr.astype(np.int64)
        defect = trial % 5
        if defect == 1 and len(data) > 1:  # swap two entries: unsorted or fine across rows
            a, b = rng.choice(len(data), 2, replace=False)
            indices[[a, b]] = indices[[b, a]]
        elif defect == 2 and len(data):
            data[rng.integers(len(data))] = rng.choice([0.0, np.nan, np.inf])
        elif defect == 3 and len(data):
            indices[rng.integers(len(data))] = rng.choice([-1, 8, 3])
        elif defect == 4:
            indptr[rng.integers(1, 6)] += rng.choice([-2, 2])
        want = ref.kernel_ready(indptr, indices, data, 8)
        assert common.kernel_ready(indptr, indices, data, 8) == want
        assert common.kernel_ready(indptr.astype(np.int32), indices.astype(np.int32), data, 8) == want
        assert contract_met(indptr, indices, data, 8) == want  # the numpy check of small inputs
        verdicts.add(want)
    assert verdicts == {True, False}


def test_triangular_kernels_equal_numpy():
    rng = np.random.default_rng(21)
    for d in (1, 2, 7, 30):
        A = rng.normal(size=(d, d))
        R = np.linalg.cholesky(A @ A.T + d * np.eye(d)).T.copy()
        x = rng.normal(size=d)
        z, out = np.empty(d), np.empty(d)
        linalg.forward_solve(R, x, z)
        np.testing.assert_allclose(z, np.linalg.solve(R.T, x), rtol=1e-12, atol=1e-12)
        linalg.back_solve(R, z, out)
        np.testing.assert_allclose(out, np.linalg.solve(R.T @ R, x), rtol=1e-10, atol=1e-12)
        w = rng.normal(size=d)
        if d > 2:
            w[: d // 2] = 0.0  # leading zeros are skipped
        want = ref.cholesky_update(R, w)
        linalg.cholesky_update(R, w.copy())
        np.testing.assert_allclose(R, want, rtol=1e-12, atol=1e-12)
        assert np.all(np.tril(R, -1) == 0)
