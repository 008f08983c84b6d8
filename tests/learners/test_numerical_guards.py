"""Numerical guards: noisy streams leave every model finite, with positive variances and a
symmetric positive definite full covariance (see the docstrings of
textcw.learners._kernels.gaussian_diag and gaussian_full for the failure they prevent)."""

from __future__ import annotations

import numpy as np
import pytest

import textcw
from sparse_data import random_sparse
from textcw.corpus.synthetic import make_synthetic
from textcw.learners._kernels.constants import VARIANCE_FLOOR

GUARDED = [(name, cov) for name in ("cw-var", "cw-stdev") for cov in ("diag-kl", "diag-l2", "exact", "full")]
GUARDED += [(name, cov) for name in ("arow", "scw1", "scw2") for cov in ("diag-kl", "diag-l2", "full")]
# Aggressive settings: the regime where the papers' updates shrink variances fastest.
AGGRESSIVE = {"cw-var": {"eta": 0.99}, "cw-stdev": {"eta": 0.99}, "scw1": {"eta": 0.99, "C": 100.0},
              "scw2": {"eta": 0.99, "C": 100.0}, "arow": {"r": 0.01}}


def assert_healthy(model, X):
    for name, array in model._state.items():
        assert np.all(np.isfinite(array)), f"{name} has NaN or inf"
    if "s" in model._state:
        s = model._state["s"]
        assert s.min() >= model.a * VARIANCE_FLOOR > 0
    if "R" in model._state:
        blocks = model.covariance_ if model.covariance_.ndim == 3 else model.covariance_[None]
        for Sigma in blocks:
            assert np.array_equal(Sigma, Sigma.T)
            assert np.linalg.eigvalsh(Sigma).min() > 0
            np.linalg.cholesky(Sigma)  # raises if not positive definite
    var = model.margin_variance(X)
    nonempty = np.diff(X.indptr) > 0 if hasattr(X, "indptr") else np.any(X != 0, axis=1)
    assert np.all(var[nonempty] > 0) and np.all(np.isfinite(var))
    proba = model.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)


def test_cw_stdev_on_a_small_noisy_problem_no_longer_collapses():
    # Before the floor: variances underflowed to exactly 0 within two epochs, |mu| reached 1e6
    # and the mistakes per epoch rose (78, 131, 143, ...) to chance level.
    X = random_sparse(300, 40, 0.15, seed=1, empty_rows=(5, 17))
    w = np.random.default_rng(2).normal(size=40)
    y = np.where(X @ w + 0.3 * np.random.default_rng(3).normal(size=300) > 0, 1, -1)
    model = textcw.make_learner("cw-stdev", eta=0.99, covariance="diag-kl", n_epochs=8,
                                random_state=0).fit(X, y)
    assert_healthy(model, X)
    assert np.abs(model.coef_).max() < 100
    assert model.mistakes_[-1] < model.mistakes_[0] / 2
    assert np.mean(model.predict(X) == y) > 0.9


@pytest.mark.slow
@pytest.mark.parametrize("name,covariance", GUARDED)
def test_a_noisy_stream_of_1e5_updates_keeps_the_model_healthy(name, covariance):
    X, _ = make_synthetic(60_000, random_state=5)
    y = np.random.default_rng(6).choice([-1, 1], size=60_000)  # pure label noise
    model = textcw.make_learner(name, covariance=covariance, n_epochs=4, random_state=0,
                                **AGGRESSIVE[name]).fit(X, y)
    assert sum(model.n_updates_) >= 100_000
    assert_healthy(model, X[:2000])
    # and the same on a sparse text-like stream with empty documents, 334 epochs of 300
    Xs = random_sparse(300, 40, 0.15, seed=1, empty_rows=(5, 17))
    ys = np.random.default_rng(7).choice([-1, 1], size=300)
    model = textcw.make_learner(name, covariance=covariance, n_epochs=334, random_state=0,
                                **AGGRESSIVE[name]).fit(Xs, ys)
    assert sum(model.n_updates_) >= 30_000  # SCW memorises part of the noise, so fewer
    assert_healthy(model, Xs)


@pytest.mark.slow
@pytest.mark.parametrize("covariance", ["diag-kl", "exact", "full"])
def test_multiclass_noisy_stream_keeps_the_model_healthy(covariance):
    X, _ = make_synthetic(40_000, random_state=8)
    y = np.random.default_rng(9).integers(0, 3, size=40_000)
    model = textcw.make_learner("cw-stdev", eta=0.99, covariance=covariance, n_epochs=3,
                                random_state=0).fit(X, y)
    assert sum(model.n_updates_) >= 100_000
    assert_healthy(model, X[:2000])


@pytest.mark.slow
@pytest.mark.parametrize("covariance", ["diag", "full"])
def test_sop_on_a_noisy_stream(covariance):
    X, _ = make_synthetic(220_000, random_state=10)
    y = np.random.default_rng(11).choice([-1, 1], size=220_000)
    model = textcw.make_learner("sop", covariance=covariance, n_epochs=1, shuffle=False).fit(X, y)
    assert sum(model.n_updates_) >= 100_000
    for array in model._state.values():
        assert np.all(np.isfinite(array))
    if covariance == "full":
        A = model._state["R"].T @ model._state["R"]
        assert np.linalg.eigvalsh(A).min() >= 1.0 - 1e-9  # A = a I + sum x x' >= a I
    assert np.all(np.isfinite(model.decision_function(X[:1000])))


@pytest.mark.slow
@pytest.mark.parametrize("name,params", [
    ("cw-stdev", {"multiclass": "seq", "covariance": "diag-kl"}),
    ("cw-stdev", {"multiclass": "exact", "covariance": "diag-kl"}),
    ("cw-stdev", {"multiclass": "exact", "covariance": "full"}),
    ("cw-stdev", {"multiclass": "par", "covariance": "full"}),
    ("cw-stdev", {"multiclass": "par", "covariance": "exact"}),
    ("cw-var", {"multiclass": "exact", "covariance": "diag-l2"}),
    ("arow", {"multiclass": "exact", "covariance": "full", "r": 0.01}),
])
def test_kbest_updates_on_a_noisy_stream_keep_the_model_healthy(name, params):
    # k-best updates hit the same (mislabeled) example several times per pass, so variances
    # shrink faster than with top-1: the guards must hold there too
    X, _ = make_synthetic(15_000, random_state=12)
    y = np.random.default_rng(13).integers(0, 4, size=15_000)
    extra = {} if name == "arow" else {"eta": 0.99}
    model = textcw.make_learner(name, n_epochs=3, random_state=0, **extra, **params).fit(X, y)
    assert sum(model.n_updates_) >= 30_000
    assert_healthy(model, X[:2000])
