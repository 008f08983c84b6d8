"""The papers' qualitative claims on the ``synthetic`` corpus, with default parameters.

NIPS 2008 section 5 (CW-stdev): second-order learners make a fraction of the online mistakes of
the first-order ones, and full covariance beats diagonal. MLJ 2013 section 5.2 (AROW): with 10% of
the training labels flipped, AROW degrades far less than CW. Averages over five seeded draws.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import textcw
from textcw.corpus.synthetic import make_synthetic

SEEDS = range(5)


@functools.lru_cache(maxsize=None)
def run(name: str, covariance: str | None, noise: float, n: int) -> tuple[float, float]:
    """Mean online mistakes (one pass, in order) and mean test error on 10,000 clean points."""
    params = {} if covariance is None else {"covariance": covariance}
    mistakes, errors = [], []
    for seed in SEEDS:
        X, y = make_synthetic(n, noise=noise, random_state=seed)
        X_test, y_test = make_synthetic(10_000, random_state=1000 + seed)
        model = textcw.make_learner(name, n_epochs=1, shuffle=False, **params).fit(X, y)
        mistakes.append(model.mistakes_[0])
        errors.append(np.mean(model.predict(X_test) != y_test))
    return float(np.mean(mistakes)), float(np.mean(errors))


def clean(name, covariance=None):
    return run(name, covariance, 0.0, 1000)


def noisy(name, covariance=None):
    return run(name, covariance, 0.1, 5000)


def test_second_order_learners_make_several_times_fewer_mistakes():
    first_order = min(clean("perceptron")[0], clean("pa")[0])
    for name in ("cw-var", "cw-stdev", "arow", "scw1", "scw2"):
        assert clean(name, "full")[0] * 2.5 < first_order, name
    assert clean("sop", "full")[0] * 2 < first_order
    for name in ("cw-var", "cw-stdev", "arow"):  # the diagonal forms still beat first order
        assert clean(name, "diag-kl")[0] < first_order, name


@pytest.mark.parametrize("name,diagonal", [("cw-var", "diag-kl"), ("cw-stdev", "diag-kl"),
                                           ("arow", "diag-kl"), ("sop", "diag")])
def test_full_covariance_beats_diagonal(name, diagonal):
    full_mistakes, full_error = clean(name, "full")
    diag_mistakes, diag_error = clean(name, diagonal)
    assert full_mistakes < 0.8 * diag_mistakes
    assert full_error < diag_error


@pytest.mark.parametrize("covariance", ["full", "diag-kl"])
def test_arow_degrades_far_less_than_cw_under_label_noise(covariance):
    arow_mistakes, arow_error = noisy("arow", covariance)
    for cw in ("cw-var", "cw-stdev"):
        cw_mistakes, cw_error = noisy(cw, covariance)
        assert arow_mistakes < 0.65 * cw_mistakes, cw
        assert arow_error * 4 < cw_error, cw
        # CW's test error grows by more than 10 points with the noise; AROW's by under 2
        assert cw_error - run(cw, covariance, 0.0, 5000)[1] > 0.10, cw
    assert arow_error - run("arow", covariance, 0.0, 5000)[1] < 0.02
