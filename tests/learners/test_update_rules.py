"""Each update solves the optimisation problem its paper states.

- CW var and stdev, full and exact diagonal forms: after an update the constraint holds with
  equality (JMLR 2012 eqs. 18 and 31, section 6.2).
- AROW: the new mean zeroes the gradient of its objective (MLJ 2013, eq. 3).
- Independently of the closed forms, one kernel step equals the minimiser that a generic solver
  (``scipy.optimize.minimize``) finds for each rule's problem: CW var, CW stdev, AROW (both
  losses), SCW-I and SCW-II (Wang, Zhao, Hoi 2012, whose SCW-II step is derived in
  ``gaussian_rules.scw2_alpha``), and CW's exact diagonal form.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import ndtri

from textcw._csr import as_kernel_csr
from textcw.learners._kernels import constants as c
from textcw.learners._kernels import gaussian_diag, gaussian_exact, gaussian_full
from textcw.learners.gaussian import covariance_from_factor

PHI = ndtri(0.9)


def random_spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T / d + 0.2 * np.eye(d)


def factor_of(Sigma):
    """Upper Cholesky factor R of the precision, P = Sigma^{-1} = R' R."""
    return np.linalg.cholesky(np.linalg.inv(Sigma)).T.copy()


def full_step(rule, mu0, Sigma0, x, y, *, phi=PHI, C=1.0, r=1.0):
    X = as_kernel_csr(x[None, :])
    mu, R = mu0.copy(), factor_of(Sigma0)
    gaussian_full.binary_epoch(X.indptr, X.indices, X.data, np.array([float(y)]), np.array([0]),
                               mu, R, rule, phi, C, r, 0.0)
    return mu, covariance_from_factor(R)


def diag_step(kernel_args, mu0, s0, x, y, exact=False):
    X = as_kernel_csr(x[None, :])
    mu, s = mu0.copy(), s0.copy()
    kernel = gaussian_exact.binary_epoch if exact else gaussian_diag.binary_epoch
    kernel(X.indptr, X.indices, X.data, np.array([float(y)]), np.array([0]), mu, s, *kernel_args)
    return mu, s


# --------------------------------------------------------------------------- constraint equality
@pytest.mark.parametrize("rule,code", [("var", c.CW_VAR), ("stdev", c.CW_STDEV)])
def test_full_update_meets_the_constraint_with_equality(rule, code):
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(300):
        d = int(rng.integers(1, 7))
        mu0, Sigma0 = rng.normal(size=d), random_spd(rng, d)
        x, y = rng.normal(size=d) * rng.uniform(0.1, 3), rng.choice([-1, 1])
        m0, v0 = y * mu0 @ x, x @ Sigma0 @ x
        mu, Sigma = full_step(code, mu0, Sigma0, x, y)
        m, v = y * mu @ x, x @ Sigma @ x
        bound = PHI * v if rule == "var" else PHI * np.sqrt(v)
        if m0 < (PHI * v0 if rule == "var" else PHI * np.sqrt(v0)):
            checked += 1
            assert m == pytest.approx(bound, rel=1e-9, abs=1e-12)
            assert np.linalg.eigvalsh(Sigma).min() > 0
        else:
            np.testing.assert_array_equal(mu, mu0)
    assert checked > 100


@pytest.mark.parametrize("rule,code", [("var", c.CW_VAR), ("stdev", c.CW_STDEV)])
@pytest.mark.parametrize("scale", [1.0, 1e-18])
def test_exact_update_meets_the_diagonal_constraint_with_equality(rule, code, scale):
    # scale = 1e-18: variances as small as on long noisy streams; the solve in t = m + alpha v
    # keeps the root accurate where a solve in alpha loses it to rounding.
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(300):
        d = int(rng.integers(1, 30))
        s0 = rng.uniform(0.01, 2.0, size=d) * scale
        mu0 = rng.normal(size=d) * np.sqrt(scale)
        x, y = rng.normal(size=d), rng.choice([-1, 1])
        m0, v0 = y * mu0 @ x, s0 @ x**2
        mu, s = diag_step((code, PHI, 0.0), mu0, s0, x, y, exact=True)
        m, v = y * mu @ x, s @ x**2
        bound = PHI * v if rule == "var" else PHI * np.sqrt(v)
        if m0 < (PHI * v0 if rule == "var" else PHI * np.sqrt(v0)):
            checked += 1
            # mu = mu0 + alpha y s0 x is exact only to rounding of mu0's size (a confident
            # mistake cancels mu0 almost entirely), so m is known to that precision
            assert m == pytest.approx(bound, rel=1e-10, abs=1e-13 * np.abs(mu0 * x).sum())
            assert np.all(s > 0) and np.all(s <= s0)
            # the mean moved along Sigma_old x, as the update prescribes
            np.testing.assert_allclose(mu - mu0, (m - m0) / v0 * y * s0 * x, rtol=1e-9, atol=1e-300)
        else:
            np.testing.assert_array_equal(s, s0)
    assert checked > 100


@pytest.mark.parametrize("covariance", ["full", c.DIAG_KL, c.DIAG_L2])
def test_arow_mean_zeroes_the_gradient_of_its_objective(covariance):
    # grad of 0.5 (mu - mu0)' Sigma0^{-1} (mu - mu0) + (1/(2r)) max(0, 1 - y mu.x)^2
    rng = np.random.default_rng(2)
    for _ in range(200):
        d, r = int(rng.integers(1, 6)), rng.uniform(0.05, 5)
        mu0, x, y = rng.normal(size=d), rng.normal(size=d), rng.choice([-1, 1])
        if covariance == "full":
            Sigma0 = random_spd(rng, d)
            mu, _ = full_step(c.AROW_SQUARED_HINGE, mu0, Sigma0, x, y, r=r)
        else:
            s0 = rng.uniform(0.05, 2, size=d)
            Sigma0 = np.diag(s0)
            mu, _ = diag_step((c.AROW_SQUARED_HINGE, covariance, 0.0, 0.0, r, 0.0), mu0, s0, x, y)
        gradient = np.linalg.solve(Sigma0, mu - mu0) - max(0.0, 1 - y * mu @ x) / r * y * x
        np.testing.assert_allclose(gradient, 0.0, atol=1e-10)


# --------------------------------------------------------------------------- against a generic solver
def kl(mu, Sigma, mu0, Sigma0):
    P0 = np.linalg.inv(Sigma0)
    diff = mu - mu0
    return 0.5 * (np.trace(P0 @ Sigma) + diff @ P0 @ diff - len(mu)
                  + np.linalg.slogdet(Sigma0)[1] - np.linalg.slogdet(Sigma)[1])


def unpack(theta, d):
    """mu and Sigma = L L' from a vector; L lower triangular with a positive (exp) diagonal."""
    mu = theta[:d]
    L = np.zeros((d, d))
    L[np.tril_indices(d)] = theta[d:d + d * (d + 1) // 2]
    L[np.diag_indices(d)] = np.exp(np.diag(L))
    return mu, L @ L.T


def pack(mu, Sigma):
    L = np.linalg.cholesky(Sigma)
    L[np.diag_indices(len(mu))] = np.log(np.diag(L))
    return np.concatenate([mu, L[np.tril_indices(len(mu))]])


def solve_problem(rule, mu0, Sigma0, x, y, *, C=1.0, r=1.0):
    """Minimise each rule's objective over (mu, Sigma) with scipy, from (mu0, Sigma0)."""
    d = len(mu0)
    n = d + d * (d + 1) // 2

    def parts(theta):
        mu, Sigma = unpack(theta[:n], d)
        return mu, Sigma, y * mu @ x, x @ Sigma @ x

    def objective(theta):
        mu, Sigma, m, v = parts(theta)
        value = kl(mu, Sigma, mu0, Sigma0)
        if rule == "scw1":
            value += C * theta[n]
        elif rule == "scw2":
            value += C * max(0.0, PHI * np.sqrt(v) - m) ** 2
        elif rule == "arow":
            value += (max(0.0, 1 - m) ** 2 + v) / (2 * r)
        elif rule == "arow-hinge":
            value += (theta[n] + v) / (2 * r)
        return value

    constraints = []
    if rule == "var":
        constraints.append(lambda t: parts(t)[2] - PHI * parts(t)[3])
    elif rule == "stdev":
        constraints.append(lambda t: parts(t)[2] - PHI * np.sqrt(parts(t)[3]))
    elif rule == "scw1":
        constraints += [lambda t: t[n], lambda t: parts(t)[2] + t[n] - PHI * np.sqrt(parts(t)[3])]
    elif rule == "arow-hinge":
        constraints += [lambda t: t[n], lambda t: parts(t)[2] + t[n] - 1.0]
    start = pack(mu0, Sigma0)
    if rule in ("scw1", "arow-hinge"):
        start = np.append(start, 10.0)
    result = minimize(objective, start, method="SLSQP",
                      constraints=[{"type": "ineq", "fun": f} for f in constraints],
                      options={"ftol": 1e-14, "maxiter": 2000})
    # status 8: at the optimum to rounding, the line search cannot improve further
    assert result.status in (0, 8), result.message
    mu, Sigma, _, _ = parts(result.x)
    return mu, Sigma


RULES = [("var", c.CW_VAR, {}), ("stdev", c.CW_STDEV, {}), ("arow", c.AROW_SQUARED_HINGE, {"r": 0.7}),
         ("arow-hinge", c.AROW_HINGE, {"r": 0.7}), ("arow-hinge", c.AROW_HINGE, {"r": 4.0}),
         ("scw1", c.SCW1, {"C": 0.3}), ("scw1", c.SCW1, {"C": 30.0}), ("scw2", c.SCW2, {"C": 0.3}),
         ("scw2", c.SCW2, {"C": 5.0})]


@pytest.mark.parametrize("rule,code,params", RULES, ids=[f"{r}-{p}" for r, _, p in RULES])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_step_is_the_minimiser_scipy_finds(rule, code, params, seed):
    rng = np.random.default_rng(10 + seed)
    d = 2
    mu0, Sigma0 = rng.normal(size=d) * 0.5, random_spd(rng, d)
    x = rng.normal(size=d)
    y = -np.sign(mu0 @ x)  # a mistake, so every rule updates
    mu, Sigma = full_step(code, mu0, Sigma0, x, y, **params)
    assert not np.allclose(mu, mu0)
    want_mu, want_Sigma = solve_problem(rule, mu0, Sigma0, x, y, **params)
    np.testing.assert_allclose(mu, want_mu, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(Sigma, want_Sigma, rtol=1e-5, atol=1e-6)


def test_scw1_cap_binds_and_the_common_scw2_misprint_is_not_the_minimiser():
    # C = 0.3 caps SCW-I's step below CW-stdev's: the solver agrees (test above) and the
    # constraint is then not met. SCW-II with gamma's squares misprinted as doubles
    # (v * 2, phi * 2) gives a different, non-optimal step.
    rng = np.random.default_rng(3)
    mu0, Sigma0 = np.array([0.4, -0.2]), random_spd(rng, 2)
    x, y = np.array([1.0, 0.5]), -1
    m, v, C = y * mu0 @ x, x @ Sigma0 @ x, 0.3
    n = v + 1 / (2 * C)
    gamma_misprint = PHI * np.sqrt(PHI * 2 * m * m * v * 2 + 4 * n * v * (n + v * PHI * 2))
    alpha_misprint = (-(2 * m * n + PHI * 2 * m * v) + gamma_misprint) / (2 * (n * n + n * v * PHI * 2))
    mu, _ = full_step(c.SCW2, mu0, Sigma0, x, y, C=C)
    alpha = (mu - mu0) @ x / (y * v)
    want_mu, _ = solve_problem("scw2", mu0, Sigma0, x, y, C=C)
    np.testing.assert_allclose(mu, want_mu, rtol=1e-5)
    assert abs(alpha - alpha_misprint) > 1e-3
    stdev_mu, _ = full_step(c.CW_STDEV, mu0, Sigma0, x, y)
    capped_mu, capped_Sigma = full_step(c.SCW1, mu0, Sigma0, x, y, C=C)
    assert (capped_mu - mu0) @ x / (y * v) == pytest.approx(C)
    assert y * capped_mu @ x < PHI * np.sqrt(x @ capped_Sigma @ x)
    assert not np.allclose(stdev_mu, capped_mu)


@pytest.mark.parametrize("rule,code", [("var", c.CW_VAR), ("stdev", c.CW_STDEV)])
def test_exact_diagonal_step_is_the_minimiser_over_diagonal_covariances(rule, code):
    rng = np.random.default_rng(4)
    d = 3
    for _ in range(3):
        mu0, s0 = rng.normal(size=d) * 0.3, rng.uniform(0.2, 2, size=d)
        x = rng.normal(size=d)
        y = -np.sign(mu0 @ x)
        mu, s = diag_step((code, PHI, 0.0), mu0, s0, x, y, exact=True)

        def objective(theta):
            return kl(theta[:d], np.diag(np.exp(theta[d:])), mu0, np.diag(s0))

        def constraint(theta):
            m, v = y * theta[:d] @ x, np.exp(theta[d:]) @ x**2
            return m - (PHI * v if rule == "var" else PHI * np.sqrt(v))

        result = minimize(objective, np.concatenate([mu0, np.log(s0)]), method="SLSQP",
                          constraints=[{"type": "ineq", "fun": constraint}],
                          options={"ftol": 1e-14, "maxiter": 2000})
        assert result.status in (0, 8), result.message
        np.testing.assert_allclose(mu, result.x[:d], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s, np.exp(result.x[d:]), rtol=1e-5, atol=1e-6)
