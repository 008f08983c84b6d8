"""The multi-class k-constraint updates solve the problems the papers state
(docs/algorithms.md "Multi-class exact").

- ``exact`` equals the minimiser ``scipy.optimize.minimize`` finds for the joint problem over
  the stacked label blocks (means to 1e-6; covariances after the same projection the kernel
  makes: block diagonal of the covariance for ``full`` and ``diag-l2``, diagonal of the
  precision for ``diag-kl``): CW var and stdev (EMNLP 2009 eq. 4 with the constraints
  ``Pr[A_{y,r_j}] >= eta``), AROW (MLJ 2013 eqs. 27 and 29), PA, PA-I and PA-II.
- KKT: the multipliers read back from an ``exact`` update on larger problems are non-negative,
  every constraint holds under the joint covariance, active ones with equality, and ``D``
  matches the rule (``2 phi lambda`` or ``phi lambda / sqrt(v)``).
- Constraints: after ``seq`` each enforced constraint holds (covariance ``exact``, whose pair
  update is exact in the stored diagonal state; PA); after ``exact`` all ``k`` hold (PA).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import ndtri

from test_update_rules import kl, pack, random_spd, unpack
from textcw._csr import as_kernel_csr
from textcw.learners._kernels import constants as c
from textcw.learners._kernels import first_order_kbest, gaussian_diag_kbest, gaussian_exact_kbest, gaussian_full_kbest
from textcw.learners.gaussian import covariance_from_factor

PHI = ndtri(0.9)
D_FEATURES, LABELS = 2, 3


def stack(blocks):
    """Block-diagonal matrix of label blocks (label-major layout)."""
    d = blocks[0].shape[0]
    out = np.zeros((d * len(blocks),) * 2)
    for l, block in enumerate(blocks):
        out[l * d:(l + 1) * d, l * d:(l + 1) * d] = block
    return out


def differences(x, y, comp, K):
    """Columns g_j = f(x, y) - f(x, r_j) in the label-major layout."""
    d = len(x)
    G = np.zeros((d * K, len(comp)))
    for j, rc in enumerate(comp):
        G[y * d:(y + 1) * d, j] = x
        G[rc * d:(rc + 1) * d, j] = -x
    return G


def one_example(x, y):
    X = as_kernel_csr(x[None, :])
    return X.indptr, X.indices, X.data, np.array([y]), np.array([0])


def setup(seed, *, diagonal=False):
    """A mistake: mu0 random, y a label that does not score highest, Sigma0 per label."""
    rng = np.random.default_rng(seed)
    d, K = D_FEATURES, LABELS
    while True:
        mu0 = rng.normal(size=(d, K)) * 0.7
        x = rng.normal(size=d)
        scores = x @ mu0
        y = int(np.argmin(scores))
        if scores.max() - scores[y] > 0.3:
            break
    if diagonal:
        blocks = [np.diag(rng.uniform(0.3, 1.5, size=d)) for _ in range(K)]
    else:
        blocks = [random_spd(rng, d) for _ in range(K)]
    comp = [int(l) for l in np.argsort(-scores, kind="stable") if l != y]
    return mu0, blocks, x, y, comp


def solve_cw(rule, mu0, blocks, x, y, comp):
    """EMNLP 2009 eq. 4 with k = K-1 outer-bound constraints, over a full joint covariance."""
    K, d = len(blocks), len(x)
    Sigma0 = stack(blocks)
    m0 = mu0.T.ravel()
    G = differences(x, y, comp, K)
    n = d * K

    def parts(theta):
        mu, Sigma = unpack(theta, n)
        return mu, Sigma

    def constraint(theta, j):
        mu, Sigma = parts(theta)
        m, v = G[:, j] @ mu, G[:, j] @ Sigma @ G[:, j]
        return m - (PHI * v if rule == "var" else PHI * np.sqrt(v))

    result = minimize(lambda th: kl(*parts(th), m0, Sigma0), pack(m0, Sigma0), method="SLSQP",
                      constraints=[{"type": "ineq", "fun": constraint, "args": (j,)} for j in range(len(comp))],
                      options={"ftol": 1e-15, "maxiter": 5000})
    assert result.status in (0, 8), result.message
    mu, Sigma = parts(result.x)
    return mu.reshape(K, d).T, Sigma


@pytest.mark.parametrize("rule,code", [("var", c.CW_VAR), ("stdev", c.CW_STDEV)])
@pytest.mark.parametrize("seed", [0, 1])
def test_cw_exact_full_is_the_joint_minimiser(rule, code, seed):
    mu0, blocks, x, y, comp = setup(seed)
    mu, R = mu0.copy(), np.stack([np.linalg.cholesky(np.linalg.inv(b)).T for b in blocks])
    gaussian_full_kbest.multiclass_epoch(*one_example(x, y), mu, R, code, c.MC_EXACT, len(comp), PHI,
                                         1.0, 1.0, 0.0)
    want_mu, want_Sigma = solve_cw(rule, mu0, blocks, x, y, comp)
    np.testing.assert_allclose(mu, want_mu, rtol=1e-6, atol=1e-6)
    d = D_FEATURES
    for label in range(LABELS):  # the kernel keeps the block-diagonal part of the joint covariance
        np.testing.assert_allclose(covariance_from_factor(R[label]),
                                   want_Sigma[label * d:(label + 1) * d, label * d:(label + 1) * d],
                                   rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("rule,code", [("var", c.CW_VAR), ("stdev", c.CW_STDEV)])
@pytest.mark.parametrize("cov_code", [c.DIAG_KL, c.DIAG_L2])
@pytest.mark.parametrize("seed", [3])
def test_cw_exact_diagonal_is_the_projected_joint_minimiser(rule, code, cov_code, seed):
    mu0, blocks, x, y, comp = setup(seed, diagonal=True)
    mu, s = mu0.copy(), np.stack([np.diag(b) for b in blocks], axis=1)
    gaussian_diag_kbest.multiclass_epoch(*one_example(x, y), mu, s, code, cov_code, c.MC_EXACT,
                                         len(comp), PHI, 1.0, 1.0, 0.0)
    want_mu, want_Sigma = solve_cw(rule, mu0, blocks, x, y, comp)
    np.testing.assert_allclose(mu, want_mu, rtol=1e-6, atol=1e-6)
    # diag-kl: the diagonal of the joint precision (KL projection); diag-l2: of the covariance
    want = 1 / np.diag(np.linalg.inv(want_Sigma)) if cov_code == c.DIAG_KL else np.diag(want_Sigma)
    np.testing.assert_allclose(s.T.ravel(), want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("r", [0.3, 2.0])
def test_arow_exact_is_mlj_2013_full_multiclass_update(seed, r):
    mu0, blocks, x, y, comp = setup(seed)
    K, d = LABELS, D_FEATURES
    mu, R = mu0.copy(), np.stack([np.linalg.cholesky(np.linalg.inv(b)).T for b in blocks])
    gaussian_full_kbest.multiclass_epoch(*one_example(x, y), mu, R, c.AROW_SQUARED_HINGE, c.MC_EXACT,
                                         len(comp), 0.0, 1.0, r, 0.0)
    # eq. 27: min 0.5 (mu - mu0)' Sigma0^{-1} (mu - mu0) + xi^2 / (2r), g_j . mu >= 1 - xi
    Sigma0, m0 = stack(blocks), mu0.T.ravel()
    P0 = np.linalg.inv(Sigma0)
    G = differences(x, y, comp, K)
    result = minimize(lambda th: 0.5 * (th[:-1] - m0) @ P0 @ (th[:-1] - m0) + th[-1] ** 2 / (2 * r),
                      np.append(m0, 5.0), method="SLSQP",
                      constraints=[{"type": "ineq", "fun": lambda th, j=j: G[:, j] @ th[:-1] - 1 + th[-1]}
                                   for j in range(len(comp))],
                      options={"ftol": 1e-15, "maxiter": 2000})
    assert result.status in (0, 8), result.message
    np.testing.assert_allclose(mu, result.x[:-1].reshape(K, d).T, rtol=1e-6, atol=1e-6)
    # eq. 29: Sigma - Sigma f f' Sigma / (r + f' Sigma f), f = sum over labels of f(x, l)
    f = np.tile(x, K)
    joint = Sigma0 - np.outer(Sigma0 @ f, Sigma0 @ f) / (r + f @ Sigma0 @ f)
    for label in range(K):
        np.testing.assert_allclose(covariance_from_factor(R[label]),
                                   joint[label * d:(label + 1) * d, label * d:(label + 1) * d],
                                   rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("rule,code", [("pa", c.PA), ("pa1", c.PA1), ("pa2", c.PA2)])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_pa_exact_is_the_minimiser(rule, code, seed):
    rng = np.random.default_rng(seed)
    d, K, C = 3, 5, 0.15
    W0 = rng.normal(size=(d, K))
    x = rng.normal(size=d)
    y = int(np.argmin(x @ W0))
    comp = [int(l) for l in np.argsort(-(x @ W0), kind="stable") if l != y]
    W = W0.copy()
    first_order_kbest.multiclass_epoch(*one_example(x, y), W, code, c.MC_EXACT, len(comp), C)
    G = differences(x, y, comp, K)
    k, w0 = len(comp), W0.T.ravel()
    slack = rule != "pa"

    def objective(th):
        value = 0.5 * np.sum((th[:d * K] - w0) ** 2)
        if rule == "pa1":
            value += C * th[d * K:].sum()
        elif rule == "pa2":
            value += C * np.sum(th[d * K:] ** 2)
        return value

    cons = [{"type": "ineq", "fun": lambda th, j=j: G[:, j] @ th[:d * K] - 1 + (th[d * K + j] if slack else 0)}
            for j in range(k)]
    if rule == "pa1":
        cons += [{"type": "ineq", "fun": lambda th, j=j: th[d * K + j]} for j in range(k)]
    start = np.concatenate([w0, np.full(k, 5.0)]) if slack else w0
    result = minimize(objective, start, method="SLSQP", constraints=cons,
                      options={"ftol": 1e-15, "maxiter": 2000})
    assert result.status in (0, 8), result.message
    np.testing.assert_allclose(W, result.x[:d * K].reshape(K, d).T, rtol=1e-6, atol=1e-6)
    if rule == "pa":  # hard constraints: every competitor at margin >= 1
        margins = x @ W[:, y] - x @ W[:, comp]
        assert np.all(margins >= 1 - 1e-9)


# --------------------------------------------------------------------------- KKT on larger problems
def read_back(mu0, mu, s0, s, x, y, comp):
    """Multipliers and precision increments of a diag-kl exact update, from the state change."""
    nz = x != 0
    lam = np.array([-(mu[nz, rc] - mu0[nz, rc]) @ x[nz] / (s0[nz, rc] @ x[nz] ** 2) for rc in comp])
    D = np.array([np.mean((1 / s[nz, rc] - 1 / s0[nz, rc]) / x[nz] ** 2) for rc in comp])
    return lam, D


@pytest.mark.parametrize("rule,code", [("var", c.CW_VAR), ("stdev", c.CW_STDEV)])
def test_cw_exact_multipliers_satisfy_the_kkt_conditions(rule, code):
    rng = np.random.default_rng(7)
    K, d = 8, 12
    checked = active_and_inactive = 0
    for _ in range(200):
        mu0 = rng.normal(size=(d, K)) * rng.uniform(0.05, 3.0)
        s0 = rng.uniform(0.05, 2.0, size=(d, K))
        x = rng.normal(size=d) * (rng.random(d) < 0.6)
        if not x.any():
            continue
        scores = x @ mu0
        y = int(rng.integers(K))
        k = int(rng.integers(1, K))
        comp = [int(l) for l in np.lexsort((np.arange(K), -scores)) if l != y][:k]
        mu, s = mu0.copy(), s0.copy()
        gaussian_diag_kbest.multiclass_epoch(*one_example(x, y), mu, s, code, c.DIAG_KL, c.MC_EXACT, k,
                                             PHI, 1.0, 1.0, 0.0)
        lam, D = read_back(mu0, mu, s0, s, x, y, comp)
        nz = x != 0
        # the true label's mean moved by sum(lambda) Sigma_y x and its precision by sum(D) x^2
        np.testing.assert_allclose(mu[nz, y] - mu0[nz, y], lam.sum() * s0[nz, y] * x[nz], rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(1 / s[nz, y] - 1 / s0[nz, y], D.sum() * x[nz] ** 2, rtol=1e-8, atol=1e-10)
        # the joint covariance over the involved blocks, in their scores: diag(v) + update
        vy, vr = s0[nz, y] @ x[nz] ** 2, np.array([s0[nz, rc] @ x[nz] ** 2 for rc in comp])
        B = np.hstack([np.ones((k, 1)), -np.eye(k)])
        Lam = np.diag(np.concatenate([[vy], vr]))
        joint = np.linalg.inv(np.linalg.inv(Lam) + B.T @ np.diag(D) @ B)
        margins = scores[y] - scores[comp] + (B @ Lam @ B.T) @ lam
        v = np.diag(B @ joint @ B.T)
        gap = margins - (PHI * v if rule == "var" else PHI * np.sqrt(v))
        scale = 1e-9 * (1 + np.abs(margins).max())
        assert np.all(lam >= -1e-12)
        assert np.all(gap >= -scale)  # every constraint holds
        assert np.all(np.abs(gap[lam > 1e-12]) <= scale)  # active ones with equality
        want_D = 2 * PHI * lam if rule == "var" else PHI * lam / np.sqrt(v)
        np.testing.assert_allclose(D, want_D, rtol=1e-7, atol=1e-10)
        checked += 1
        active_and_inactive += bool(np.any(lam > 0) and np.any(lam == 0))
    assert checked > 150 and active_and_inactive > 20  # some constraints slack at the optimum


def test_arow_and_pa_exact_multipliers_satisfy_the_kkt_conditions():
    rng = np.random.default_rng(8)
    K, d, r, C = 7, 10, 0.5, 0.2
    for _ in range(200):
        W0 = rng.normal(size=(d, K)) * 0.3
        x = rng.normal(size=d) * (rng.random(d) < 0.6)
        if not x.any():
            continue
        y, k = int(rng.integers(K)), int(rng.integers(1, K))
        scores = x @ W0
        comp = [int(l) for l in np.lexsort((np.arange(K), -scores)) if l != y][:k]
        m0 = scores[y] - scores[comp]
        xx = x @ x
        for code in (c.PA, c.PA1, c.PA2):
            W = W0.copy()
            first_order_kbest.multiclass_epoch(*one_example(x, y), W, code, c.MC_EXACT, k, C)
            tau = np.array([-(W[:, rc] - W0[:, rc]) @ x / xx for rc in comp])
            m = m0 + xx * (tau.sum() + tau)
            grad = 1 - m - (tau / (2 * C) if code == c.PA2 else 0)
            upper = C if code == c.PA1 else np.inf
            assert np.all(tau >= -1e-12) and np.all(tau <= upper + 1e-12)
            inner = (tau > 1e-12) & (tau < upper - 1e-12)
            assert np.all(np.abs(grad[inner]) <= 1e-9)
            assert np.all(grad[tau <= 1e-12] <= 1e-9)
            assert np.all(grad[tau >= upper - 1e-12] >= -1e-9)
        s0 = rng.uniform(0.1, 2.0, size=(d, K))
        mu, s = W0.copy(), s0.copy()
        gaussian_diag_kbest.multiclass_epoch(*one_example(x, y), mu, s, c.AROW_SQUARED_HINGE, c.DIAG_KL,
                                             c.MC_EXACT, k, 0.0, 1.0, r, 0.0)
        vr = np.array([s0[:, rc] @ x**2 for rc in comp])
        lam = np.array([-(mu[:, rc] - W0[:, rc]) @ x for rc in comp]) / vr
        margins = m0 + (s0[:, y] @ x**2) * lam.sum() + vr * lam
        grad = 1 - margins - r * lam.sum()
        assert np.all(lam >= -1e-12)
        assert np.all(np.abs(grad[lam > 1e-12]) <= 1e-9) and np.all(grad[lam <= 1e-12] <= 1e-9)
        # eq. 29 on the diagonal of the precision: every label block gains x^2 / r (when the
        # mean moves: AROW updates Sigma only then, MLJ 2013 section 3)
        gain = np.outer(x**2, np.ones(K)) / r if lam.sum() > 0 else 0.0
        np.testing.assert_allclose(1 / s - 1 / s0, gain, rtol=1e-9, atol=1e-9)


# --------------------------------------------------------------------------- constraints after seq
@pytest.mark.parametrize("rule,code", [("var", c.CW_VAR), ("stdev", c.CW_STDEV)])
def test_every_constraint_seq_enforces_holds_afterwards(rule, code):
    # covariance="exact": each pair update meets its constraint with equality in the stored
    # diagonal state; later pairs raise mu_y . x and lower the variances, so it stays met.
    rng = np.random.default_rng(9)
    K, d = 6, 15
    enforced = 0
    for _ in range(150):
        mu0 = rng.normal(size=(d, K)) * 0.5
        s0 = rng.uniform(0.05, 2.0, size=(d, K))
        x = rng.normal(size=d) * (rng.random(d) < 0.5)
        if not x.any():
            continue
        y, k = int(rng.integers(K)), int(rng.integers(1, K))
        comp = [int(l) for l in np.lexsort((np.arange(K), -(x @ mu0))) if l != y][:k]
        mu, s = mu0.copy(), s0.copy()
        gaussian_exact_kbest.multiclass_epoch(*one_example(x, y), mu, s, code, c.MC_SEQ, k, PHI, 0.0)

        def gap(rc, mu, s):
            m, v = x @ mu[:, y] - x @ mu[:, rc], (s[:, y] + s[:, rc]) @ x**2
            return m - (PHI * v if rule == "var" else PHI * np.sqrt(v))

        for rc in comp:
            if gap(rc, mu0, s0) < 0:  # violated at the start, so seq enforced it
                enforced += 1
                assert gap(rc, mu, s) >= -1e-9
    assert enforced > 100


@pytest.mark.parametrize("code", [c.PA, c.PA1, c.PA2])
@pytest.mark.parametrize("strategy", [c.MC_SEQ, c.MC_EXACT])
def test_pa_constraints_hold_after_seq_and_exact(code, strategy):
    # PA's constraints are hard: margin >= 1 against every competitor updated (seq) or all k
    # (exact); PA-I and PA-II only approach it (their slack), but never lower a margin.
    rng = np.random.default_rng(10)
    K, d = 6, 12
    for _ in range(100):
        W0 = rng.normal(size=(d, K))
        x = rng.normal(size=d)
        y, k = int(rng.integers(K)), int(rng.integers(1, K))
        comp = [int(l) for l in np.lexsort((np.arange(K), -(x @ W0))) if l != y][:k]
        W = W0.copy()
        first_order_kbest.multiclass_epoch(*one_example(x, y), W, code, strategy, k, 0.5)
        before = x @ W0[:, y] - x @ W0[:, comp]
        after = x @ W[:, y] - x @ W[:, comp]
        if code == c.PA:
            assert np.all(after >= 1 - 1e-9)
        else:
            assert np.all(after >= before - 1e-9)
