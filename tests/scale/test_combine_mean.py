"""textcw.combine(..., precision="mean"): the KL minimiser, against the papers' summed precision.

For ``method="kl"`` the mean of the shard precisions (``precision="mean"``) and their sum
(``"sum"``, the default) give the same combined mean; a weight's combined variance is the
harmonic mean of the shard variances for ``mean`` and ``1/n`` of it for ``sum``.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import hmean

import textcw
from textcw.errors import ParameterError
from textcw.learners.arow import AROW
from textcw.learners.cw_stdev import CWStdev
from textcw.learners.cw_var import CWVar
from textcw.learners.gaussian import covariance_from_factor
from textcw.scale.combine import Combiner

from sparse_data import random_sparse

N_SHARDS = 4


def problem(labels):
    X = random_sparse(320, 10, 0.35, seed=31)
    W = np.random.default_rng(32).normal(size=(10, labels))
    names = np.array(["a", "b", "c"])[:labels] if labels > 2 else np.array(["neg", "pos"])
    scores = X @ W
    y = names[np.argmax(scores, axis=1)] if labels > 2 else names[(scores[:, 0] > 0).astype(int)]
    return X, y


def shard_models(make, X, y):
    bounds = np.linspace(0, X.shape[0], N_SHARDS + 1).astype(int)
    return [make(i).fit(X[a:b], y[a:b]) for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]


DIAGONAL = [
    lambda i: CWVar(eta=0.9, random_state=i),
    lambda i: CWStdev(eta=0.9, covariance="diag-l2", random_state=i),
    lambda i: AROW(r=1.0, random_state=i),
    lambda i: CWVar(eta=0.9, covariance="exact", random_state=i),
]


@pytest.mark.parametrize("labels", [2, 3])
@pytest.mark.parametrize("make", DIAGONAL)
def test_diagonal_mean_precision_gives_harmonic_mean_variances_and_the_same_mean(make, labels):
    X, y = problem(labels)
    models = shard_models(make, X, y)
    summed = textcw.combine(models, "kl")
    averaged = textcw.combine(models, "kl", precision="mean")
    shard_sigma = np.stack([m.sigma_ for m in models])
    np.testing.assert_allclose(averaged.sigma_, hmean(shard_sigma, axis=0), rtol=1e-12, atol=0)
    np.testing.assert_allclose(summed.sigma_, hmean(shard_sigma, axis=0) / N_SHARDS, rtol=1e-12, atol=0)
    assert np.array_equal(averaged.coef_, summed.coef_)  # the same mean, bit for bit
    assert np.array_equal(averaged.predict(X), summed.predict(X))
    # the mean variant is less confident: its label probabilities are closer to uniform
    p_sum, p_mean = summed.predict_proba(X), averaged.predict_proba(X)
    assert np.all(p_mean.max(axis=1) <= p_sum.max(axis=1) + 1e-12)
    assert np.any(p_mean.max(axis=1) < p_sum.max(axis=1) - 1e-3)


@pytest.mark.parametrize("labels", [2, 3])
def test_full_mean_precision_is_the_mean_of_the_shard_precisions(labels):
    X, y = problem(labels)
    models = shard_models(lambda i: CWVar(eta=0.9, covariance="full", random_state=i), X, y)
    summed = textcw.combine(models, "kl")
    averaged = textcw.combine(models, "kl", precision="mean")

    def precisions(model):
        cov = model.covariance_
        return np.linalg.inv(cov[None] if cov.ndim == 2 else cov)

    mean_precision = np.mean([precisions(m) for m in models], axis=0)
    np.testing.assert_allclose(precisions(averaged), mean_precision, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(precisions(summed), N_SHARDS * mean_precision, rtol=1e-9, atol=1e-9)
    assert np.array_equal(averaged.coef_, summed.coef_)
    # every block's factor is the summed one scaled by 1/sqrt(n)
    R_sum, R_mean = summed.fitted_state()["R"], averaged.fitted_state()["R"]
    np.testing.assert_allclose(R_mean, R_sum / np.sqrt(N_SHARDS), rtol=1e-15, atol=0)
    cov = covariance_from_factor(R_mean if R_mean.ndim == 2 else R_mean[0])
    assert np.all(np.linalg.eigvalsh(cov) > 0)


def test_one_model_is_returned_unchanged_whatever_the_precision():
    X, y = problem(2)
    model = CWVar(eta=0.9).fit(X, y)
    assert textcw.combine([model], "kl", precision="mean") is model


def test_combiner_folds_models_in_one_at_a_time():
    X, y = problem(3)
    models = shard_models(lambda i: CWStdev(eta=0.9, random_state=i), X, y)
    combiner = Combiner("kl", precision="mean")
    for model in models:
        combiner.add(model)
    want = textcw.combine(models, "kl", precision="mean")
    assert np.array_equal(combiner.result().sigma_, want.sigma_)


def test_bad_precision_is_refused_with_its_name():
    X, y = problem(2)
    models = shard_models(lambda i: CWVar(eta=0.9, random_state=i), X, y)
    with pytest.raises(ParameterError, match=r"precision must be one of 'sum', 'mean' .*got 'median'"):
        textcw.combine(models, "kl", precision="median")
    with pytest.raises(ParameterError, match=r"precision='mean' applies to method='kl' only"):
        textcw.combine(models, "uniform", precision="mean")
