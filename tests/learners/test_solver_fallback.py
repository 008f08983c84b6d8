"""The joint CW multi-class solve (``multiclass="exact"``) is certified, or falls back.

Hildreth's sweeps (:func:`hildreth.cw_multipliers`) converge slowly when the true label's score
variance ``v_y`` is hundreds of times the competitors' ``v_r``: they can end at ``MAX_SWEEPS``
with the multipliers visibly off. :func:`hildreth.cw_solve` checks the KKT residual and then
continues with :func:`hildreth.cw_accelerated`. Here the multipliers are checked against
``scipy.optimize`` (the joint problem's KKT system solved by ``scipy.optimize.root``, and the
primal problem by ``minimize``), and the learners' ``n_solver_fallbacks_`` against the solves.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize, root
from scipy.special import ndtri

from textcw.learners._kernels import constants as c
from textcw.learners._kernels import hildreth
from textcw.learners.cw_stdev import CWStdev
from textcw.learners.cw_var import CWVar

PHI = float(ndtri(0.9))
RULES = [("var", c.CW_VAR), ("stdev", c.CW_STDEV)]


def margin_variances(vy, vr, D):
    """The margins' variances after the joint update, from the dense joint covariance."""
    k = len(vr)
    B = np.hstack([np.ones((k, 1)), -np.eye(k)])  # margin j = s_y - s_rj
    Lam = np.diag(np.concatenate([[vy], vr]))
    joint = np.linalg.inv(np.linalg.inv(Lam) + B.T @ np.diag(D) @ B)
    return np.diag(B @ joint @ B.T)


def kkt_gap(rule, m0, vy, vr, lam):
    """Constraint gaps ``m_j - phi g(u_j)`` at ``lam``, with ``D`` consistent with ``lam``.

    For stdev ``D_j = phi lambda_j / sqrt(u_j)`` depends on the variances it determines: a small
    fixed point, iterated to convergence here (it contracts: ``u`` is decreasing in ``D``).
    """
    margins = m0 + vy * lam.sum() + vr * lam
    if rule == "var":
        u = margin_variances(vy, vr, 2 * PHI * lam)
        return margins - PHI * u
    u = vy + vr
    for _ in range(200):
        new = margin_variances(vy, vr, PHI * lam / np.sqrt(u))
        if np.array_equal(new, u):  # a fixed point to the last bit: more rounds return it again
            break
        u = new
    return margins - PHI * np.sqrt(u)


def scipy_solution(rule, m0, vy, vr, active):
    """The multipliers of the constraints in ``active`` solved by scipy.optimize.root (the others 0)."""
    k = len(vr)

    def residual(z):
        lam = np.zeros(k)
        lam[active] = z
        return kkt_gap(rule, m0, vy, vr, lam)[active]

    start = np.full(active.sum(), 0.1)
    result = root(residual, start, method="hybr", options={"xtol": 1e-15})
    lam = np.zeros(k)
    lam[active] = result.x
    return lam


def solve(rule_code, m0, vy, vr):
    k = len(vr)
    lam, D, t = np.empty(k), np.empty(k), np.empty(k)
    code = hildreth.cw_solve(rule_code, m0, vy, vr, k, PHI, lam, D, t, np.empty(5 * k))
    return code, lam, D, t


def sweeps_only(rule_code, m0, vy, vr):
    k = len(vr)
    lam, D, t = np.empty(k), np.empty(k), np.empty(k)
    sweeps = hildreth.cw_multipliers(rule_code, m0, vy, vr, k, PHI, lam, D, t)
    return sweeps, lam


# v_y about 5000 times the competitors' variances: CW-stdev's sweeps stop at MAX_SWEEPS with the
# multipliers off (found by a random search over such instances; CW-var converges on it).
ILL = (np.array([0.00478029, -5.824e-05, -0.00079408]), 2454.20666745,
       np.array([0.52185513, 0.38435982, 0.5821442]))


def random_instances(seed, n, ratio):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        k = int(rng.integers(2, 6))
        vr = 10 ** rng.uniform(-3, 0, k)
        vy = vr.min() * ratio * 10 ** rng.uniform(-0.5, 0.5)
        m0 = rng.normal(size=k) * 10 ** rng.uniform(-2, 0.5)
        yield m0, vy, vr


def test_ill_conditioned_instance_needs_the_fallback_and_gets_the_optimum():
    rule, code = "stdev", c.CW_STDEV
    m0, vy, vr = ILL
    sweeps, swept = sweeps_only(code, m0, vy, vr)
    assert sweeps == hildreth.MAX_SWEEPS  # the sweeps alone do not converge
    solver, lam, D, t = solve(code, m0, vy, vr)
    assert solver == 1  # the fallback ran and certified the KKT conditions
    assert hildreth.cw_kkt_residual(code, m0, vy, vr, len(vr), PHI, lam, D, t) <= hildreth.KKT_TOLERANCE
    want = scipy_solution(rule, m0, vy, vr, lam > 0)
    np.testing.assert_allclose(lam, want, rtol=1e-7, atol=1e-12)
    # the sweeps' point was measurably worse than the certified one
    assert np.max(np.abs(swept - want) / want.max()) > 100 * np.max(np.abs(lam - want) / want.max())


@pytest.mark.parametrize("rule,code", RULES)
@pytest.mark.parametrize("ratio", [1.0, 30.0, 1000.0])
def test_multipliers_match_scipy_on_random_instances(rule, code, ratio):
    checked = 0
    for m0, vy, vr in random_instances(int(ratio) + code, 60, ratio):
        solver, lam, D, t = solve(code, m0, vy, vr)
        assert solver in (0, 1)
        if not np.any(lam > 0):
            assert np.all(kkt_gap(rule, m0, vy, vr, lam) >= 0)  # nothing violated at zero
            continue
        gap = kkt_gap(rule, m0, vy, vr, lam)
        scale = 1e-8 * (1 + np.abs(m0 + vy * lam.sum() + vr * lam).max())
        assert np.all(gap >= -scale)
        assert np.all(np.abs(gap[lam > 0]) <= scale)
        want = scipy_solution(rule, m0, vy, vr, lam > 0)
        np.testing.assert_allclose(lam, want, rtol=1e-6, atol=1e-12 * max(1.0, lam.max()))
        checked += 1
    assert checked > 20


def test_var_multipliers_minimise_the_primal_problem():
    """CW-var's joint problem in the label scores, solved by scipy.optimize.minimize (SLSQP)."""
    m0, vy, vr = ILL
    k = len(vr)
    solver, lam, _, _ = solve(c.CW_VAR, m0, vy, vr)
    assert solver == 0 and np.all(lam > 0)  # converged by the sweeps, every constraint active
    # the update moves the scores' mean by Lam B' lam (B: margins from scores)
    B = np.hstack([np.ones((k, 1)), -np.eye(k)])
    Lam = np.diag(np.concatenate([[vy], vr]))
    gap = kkt_gap("var", m0, vy, vr, lam)
    assert np.all(np.abs(gap) <= 1e-9)
    mean_shift = Lam @ B.T @ lam
    margins = m0 + B @ mean_shift
    u = margin_variances(vy, vr, 2 * PHI * lam)
    np.testing.assert_allclose(margins, PHI * u, rtol=1e-9)
    # the mean step is the smallest (in the Mahalanobis norm of Lam) meeting the constraints at u
    res = minimize(lambda z: 0.5 * z @ np.linalg.solve(Lam, z), np.zeros(k + 1), method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda z, j=j: m0[j] + (B @ z)[j] - PHI * u[j]}
                                for j in range(k)], options={"ftol": 1e-15, "maxiter": 500})
    np.testing.assert_allclose(res.x, mean_shift, rtol=1e-5, atol=1e-9)


def test_kkt_residual_flags_a_wrong_point():
    m0, vy, vr = ILL
    solver, lam, D, t = solve(c.CW_VAR, m0, vy, vr)
    k = len(vr)
    assert hildreth.cw_kkt_residual(c.CW_VAR, m0, vy, vr, k, PHI, lam, D, t) <= 1e-12
    lam[0] *= 1.01
    assert hildreth.cw_kkt_residual(c.CW_VAR, m0, vy, vr, k, PHI, lam, D, t) > 1e-6
    lam[0] = -1.0
    assert hildreth.cw_kkt_residual(c.CW_VAR, m0, vy, vr, k, PHI, lam, D, t) == np.inf


def ill_conditioned_data():
    """A true label whose one feature the competitors share with many others: ``v_y >> v_r``
    after the competitors' variances have shrunk on their frequent features."""
    rng = np.random.default_rng(5)
    n, d, K = 400, 6, 4
    X = np.abs(rng.normal(size=(n, d))) * (rng.random((n, d)) < 0.7)
    X[:, 0] = 1.0
    y = rng.integers(1, K, size=n)
    rare = rng.random(n) < 0.03
    y[rare] = 0
    X[rare] = 0.0
    X[rare, 0] = 1.0
    X[rare, 1] = 30.0
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("cls", [CWVar, CWStdev])
@pytest.mark.parametrize("covariance", ["diag-kl", "diag-l2", "full"])
def test_learners_record_the_fallbacks_per_epoch(cls, covariance):
    X, y = ill_conditioned_data()
    model = cls(eta=0.9, covariance=covariance, multiclass="exact", k=3, n_epochs=3).fit(X, y)
    assert len(model.n_solver_fallbacks_) == 3
    assert all(0 <= f <= u for f, u in zip(model.n_solver_fallbacks_, model.n_updates_))
    seq = cls(eta=0.9, covariance=covariance, multiclass="seq", k=3, n_epochs=3).fit(X, y)
    assert seq.n_solver_fallbacks_ == [0, 0, 0]  # no joint solve, no fallback
