"""Floored updates are counted (``n_variance_floored_``) and reported (VarianceFloorWarning).

The counter is checked against a plain-numpy twin of the diagonal update that records when the
floor stands in for a variance, and on the data where it fires: dense, low-dimensional, noisy.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import ndtri

from textcw.errors import VarianceFloorWarning
from textcw.learners._kernels import constants as c
from textcw.learners._kernels import gaussian_diag
from textcw.learners.cw_stdev import CWStdev
from textcw.learners.cw_var import CWVar

import reference as ref


def dense_noisy(seed=0, n=600, d=8, noise=0.15):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = np.where(X @ w > 0, 1.0, -1.0)
    y[rng.random(n) < noise] *= -1
    return sp.csr_matrix(X), y


def twin_floored(X, y, order, covariance, phi, floor):
    """The binary diagonal CW-stdev epoch in numpy, counting floored updates (docs/algorithms.md
    "Variance floor")."""
    d = X.shape[1]
    mu, s = np.zeros(d), np.ones(d)
    floored = 0
    for i in order:
        row = X[i]
        j, x = row.indices, row.data
        m = y[i] * (mu[j] @ x)
        v = s[j] @ x ** 2
        alpha, beta, cc = ref.cw_steps(ref.STDEV, m, v, phi)
        if alpha <= 0:
            continue
        mu[j] += alpha * y[i] * s[j] * x
        new = s[j] / (1 + cc * s[j] * x ** 2) if covariance == c.DIAG_KL else s[j] - beta * (s[j] * x) ** 2
        floored += bool(np.any(new <= floor))
        s[j] = np.maximum(new, floor)
    return floored, mu, s


@pytest.mark.parametrize("covariance", [c.DIAG_KL, c.DIAG_L2])
def test_kernel_counts_the_floored_updates_like_the_twin(covariance):
    X, y = dense_noisy()
    order = np.random.default_rng(1).permutation(X.shape[0]).astype(np.int64)
    phi, floor = float(ndtri(0.99)), 1e-12
    d = X.shape[1]
    mu, s = np.zeros(d), np.ones(d)
    counts = np.zeros(c.N_COUNTS, np.int64)
    mistakes, updates = gaussian_diag.binary_epoch(X.indptr, X.indices, X.data, y, order, mu, s,
                                                   c.CW_STDEV, covariance, phi, 0.0, 0.0, floor, counts)
    want, mu_ref, s_ref = twin_floored(X, y, order, covariance, phi, floor)
    assert counts[c.COUNT_FLOORED] == want > 0
    assert counts[c.COUNT_SOLVER_FALLBACKS] == 0
    np.testing.assert_allclose(s, s_ref, rtol=1e-9, atol=0)
    # without the counts array the kernel gives the same model
    mu2, s2 = np.zeros(d), np.ones(d)
    assert gaussian_diag.binary_epoch(X.indptr, X.indices, X.data, y, order, mu2, s2, c.CW_STDEV,
                                      covariance, phi, 0.0, 0.0, floor) == (mistakes, updates)
    assert np.array_equal(mu, mu2) and np.array_equal(s, s2)


@pytest.mark.parametrize("covariance", ["diag-kl", "diag-l2"])
def test_stdev_at_the_default_eta_floors_on_dense_noisy_data_and_warns_once(covariance):
    X, y = dense_noisy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = CWStdev(eta=0.99, covariance=covariance, n_epochs=3).fit(X, y)
    floor_warnings = [w for w in caught if issubclass(w.category, VarianceFloorWarning)]
    assert len(floor_warnings) == 1  # once per fit, whatever the number of epochs
    message = str(floor_warnings[0].message)
    assert message.startswith("CWStdev: ") and "left a variance at its floor (a * 1e-12)" in message
    assert "eta=0.99" in message and "n_variance_floored_" in message
    assert len(model.n_variance_floored_) == 3
    assert all(0 <= f <= u for f, u in zip(model.n_variance_floored_, model.n_updates_))
    assert sum(model.n_variance_floored_) > 0.1 * sum(model.n_updates_)
    assert model.sigma_.min() == pytest.approx(1e-12)  # the floor itself


def test_a_low_eta_on_the_same_data_stays_off_the_floor_without_warning():
    X, y = dense_noisy()
    with warnings.catch_warnings():
        warnings.simplefilter("error", VarianceFloorWarning)
        model = CWStdev(eta=0.6, n_epochs=2).fit(X, y)
    assert model.n_variance_floored_ == [0, 0]
    assert model.sigma_.min() > 1e-10


def test_clean_sparse_text_like_data_never_floors():
    rng = np.random.default_rng(3)
    X = sp.random(400, 300, density=0.03, random_state=4, format="csr")
    w = rng.normal(size=300)
    y = np.where(X @ w > 0, "a", "b")
    model = CWVar(eta=0.9).fit(X, y)
    assert model.n_variance_floored_ == [0] * 5 and model.n_solver_fallbacks_ == [0] * 5


def test_counters_cover_partial_fit_and_restart_with_fit():
    X, y = dense_noisy()
    model = CWStdev(eta=0.99)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.partial_fit(X[:300], y[:300], classes=[-1.0, 1.0])
        model.partial_fit(X[300:], y[300:])
    assert len(model.n_variance_floored_) == 2 == len(model.mistakes_)
    assert sum(issubclass(w.category, VarianceFloorWarning) for w in caught) == 1
    model.set_params(n_epochs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", VarianceFloorWarning)
        model.fit(X, y)
    assert len(model.n_variance_floored_) == 1


def test_multiclass_kernels_count_floored_updates():
    rng = np.random.default_rng(6)
    X = sp.csr_matrix(rng.normal(size=(500, 6)))
    W = rng.normal(size=(6, 4))
    y = np.argmax(X @ W, axis=1)
    noisy = rng.random(500) < 0.2
    y[noisy] = rng.integers(0, 4, size=int(noisy.sum()))
    for multiclass in ("top1", "seq", "par", "exact"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", VarianceFloorWarning)
            model = CWStdev(eta=0.99, multiclass=multiclass, k=2 if multiclass != "top1" else None,
                            n_epochs=2).fit(X, y)
        assert len(model.n_variance_floored_) == 2
        floored_any = model.sigma_.min() <= 1e-12 * (1 + 1e-9)
        assert (sum(model.n_variance_floored_) > 0) == floored_any


def test_the_warning_names_the_parameter_of_the_learner_and_needs_a_real_count():
    """AROW has no eta: its warning names r. A handful of floored updates on a toy problem is
    no reason to warn."""
    from textcw.learners.arow import AROW

    X, y = dense_noisy()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = AROW(r=1e-12, n_epochs=3).fit(X, y)  # a tiny r shrinks the variances to the floor
    messages = [str(w.message) for w in caught if issubclass(w.category, VarianceFloorWarning)]
    assert sum(model.n_variance_floored_) >= 10
    assert len(messages) == 1 and "stops depending on r=1e-12" in messages[0] and "eta" not in messages[0]
    assert "try a larger r" in messages[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error", VarianceFloorWarning)
        small = CWStdev(eta=0.99, n_epochs=1).fit(X[:12], y[:12])  # few updates, if any floored
    assert sum(small.n_variance_floored_) < 10
