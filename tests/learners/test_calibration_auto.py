"""The calibration ``method="auto"``: a temperature, plus an offset on the predicted label where
it lowers the held-out log-loss of the recorded scores (docs/quality.md "Calibrating for the
final model's size"; the default stays the temperature alone). Checked against a reference written here with
scipy.optimize on its own loss, on data where the offset is kept; the fitted model predicts as
the learner alone does, its probabilities are a distribution whose argmax is ``predict``'s
label, and it round-trips through pickle and textcw.persist."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sp
from scipy.special import logsumexp
from sklearn.base import clone
from sklearn.model_selection import StratifiedKFold

import textcw
from textcw import persist
from textcw.errors import ParameterError
from textcw.learners.calibrated import Calibrated
from textcw.learners.calibrated_pipeline import CalibratedPipeline
from textcw.learners.temperature import weight_norm
from textcw.testing import make_documents


def short_documents(n=1600, k=16, d=1600, words=5, own=0.5, seed=1):
    """Many classes of short documents: each of ``words`` words is, with probability ``own``,
    one of its class's own ``d / k`` words, else any word; rows of unit length (as tf-idf)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rows, cols = [], []
    for i in range(n):
        mine = rng.random(words) < own
        cols += list(np.where(mine, y[i] * (d // k) + rng.integers(0, d // k, words), rng.integers(0, d, words)))
        rows += [i] * words
    X = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n, d))
    X.sum_duplicates()
    return sp.csr_matrix(X.multiply(1 / np.sqrt(X.multiply(X).sum(axis=1)))), y


X, Y = short_documents()
LEARNER = textcw.make_learner("arow", n_epochs=3, random_state=3)


@pytest.fixture(scope="module")
def fitted():
    return Calibrated(LEARNER, method="auto").fit(X, Y)


def platt_targets(y, k):
    """Platt's targets written out: 1 - 2/(k (N_c + 2)) on the class, the rest spread evenly."""
    counts = np.bincount(y, minlength=k)
    t = np.empty((len(y), k))
    for i, c in enumerate(y):
        eps = 2.0 / (k * (counts[c] + 2.0))
        t[i] = eps / (k - 1)
        t[i, c] = 1.0 - eps
    return t


def cross_entropy(beta, bias, z, targets):
    top = np.zeros_like(z)
    top[np.arange(len(z)), np.argmax(z, axis=1)] = 1.0  # continuous scores: no ties
    s = beta * z + bias * top
    return float(np.mean(logsumexp(s, axis=1) - (targets * s).sum(axis=1)))


def reference_fit(z, y, k):
    """``(beta, bias)`` by Nelder-Mead on :func:`cross_entropy`, and ``beta`` alone by a bounded
    scalar search: no code of the library's fit is used."""
    t = platt_targets(y, k)
    alone = scipy.optimize.minimize_scalar(lambda b: cross_entropy(b, 0.0, z, t), bounds=(0.0, 2000.0),
                                           method="bounded", options={"xatol": 1e-9}).x
    both = scipy.optimize.minimize(lambda v: cross_entropy(v[0], v[1], z, t), np.array([alone, 0.1]),
                                   method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-15, "maxiter": 20000}).x
    return float(alone), float(both[0]), float(both[1])


def out_of_fold_scores():
    """The 2-fold cross-fitted scores over each half-model's weight length."""
    z = np.zeros((len(Y), 16))
    for fitted_on, scored in StratifiedKFold(2, shuffle=True, random_state=3).split(X, Y):
        half = clone(LEARNER).fit(X[fitted_on], Y[fitted_on])
        z[scored] = half.decision_function(X[scored]) / weight_norm(half)
    return z


def test_the_default_is_the_temperature_for_the_estimator_and_the_pipeline():
    assert Calibrated(LEARNER).get_params()["method"] == "temperature"
    pipeline = textcw.make_pipeline("binary-bow", "arow")
    # None: the temperature alone, unless short documents are scored as unseen ones
    # (tests/learners/test_unseen_features.py)
    assert isinstance(pipeline, CalibratedPipeline) and pipeline.get_params()["method"] is None
    docs, labels = make_documents(200, random_state=0)
    pipeline.fit(docs, labels)
    assert pipeline.unseen_ == "keep" and pipeline.probability_calibration_.top_bias == 0.0
    same = textcw.make_pipeline("binary-bow", "arow").set_params(method="temperature", unseen="keep").fit(docs, labels)
    assert same.probability_calibration_ == pipeline.probability_calibration_


def test_the_auto_fit_is_the_reference_offset_and_temperature(fitted):
    z = out_of_fold_scores()
    alone, beta, bias = reference_fit(z, Y, 16)
    # the held-out choice, written out: each half fitted by the reference, scored by the plain log-loss
    order = np.random.default_rng(0).permutation(len(Y))
    halves = (order[::2], order[1::2])
    losses = {"temperature": 0.0, "top-bias": 0.0}
    for fit_on, scored in (halves, halves[::-1]):
        a, b, c = reference_fit(z[fit_on], Y[fit_on], 16)
        hard = np.eye(16)[Y[scored]]
        losses["temperature"] += cross_entropy(a, 0.0, z[scored], hard) / 2
        losses["top-bias"] += cross_entropy(b, c, z[scored], hard) / 2
    assert losses["top-bias"] < losses["temperature"]  # so the offset is kept: the test is not vacuous
    assert fitted.margin_ == "normalized"
    # the same minimum: L-BFGS-B stops where the loss changes by less than its ftol (2.2e-9
    # relative), so on a flat valley the point can differ in the 4th digit while the loss agrees
    found = cross_entropy(fitted.inverse_temperature_, fitted.scaling_.top_bias, z, platt_targets(Y, 16))
    assert found == pytest.approx(cross_entropy(beta, bias, z, platt_targets(Y, 16)), rel=1e-8)
    assert fitted.scaling_.top_bias == pytest.approx(bias, rel=5e-3) and bias > 0.05
    assert fitted.inverse_temperature_ == pytest.approx(beta, rel=1e-3)
    plain = Calibrated(LEARNER, method="temperature").fit(X, Y)
    assert plain.scaling_.top_bias == 0.0 and plain.inverse_temperature_ == pytest.approx(alone, rel=1e-6)


def test_predict_is_the_learners_and_the_probabilities_a_distribution_led_by_it(fitted):
    own = clone(LEARNER).fit(X, Y)
    np.testing.assert_array_equal(fitted.predict(X), own.predict(X))
    proba = fitted.predict_proba(X)
    assert proba.shape == (len(Y), 16) and np.all(proba > 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(fitted.classes_[np.argmax(proba, axis=1)], own.predict(X))
    # softmax(beta z + b e_top) of the final model's scores over its own weight length, written out
    z = own.decision_function(X) / weight_norm(own)
    s = fitted.inverse_temperature_ * z
    s[np.arange(len(z)), np.argmax(z, axis=1)] += fitted.scaling_.top_bias
    np.testing.assert_allclose(proba, np.exp(s - logsumexp(s, axis=1, keepdims=True)), rtol=1e-12, atol=1e-15)


def test_the_fitted_offset_round_trips_through_pickle_and_persist(fitted, tmp_path):
    again = pickle.loads(pickle.dumps(fitted))
    assert again.scaling_ == fitted.scaling_ and again.scaling_.top_bias > 0
    np.testing.assert_array_equal(again.predict_proba(X[:50]), fitted.predict_proba(X[:50]))
    persist.save(fitted, tmp_path / "auto.textcw")
    loaded = persist.load(tmp_path / "auto.textcw")
    assert loaded.scaling_ == fitted.scaling_
    np.testing.assert_array_equal(loaded.predict_proba(X[:50]), fitted.predict_proba(X[:50]))


def test_a_pipeline_method_is_checked_when_it_is_fitted():
    docs, labels = make_documents(40, random_state=0)
    pipeline = textcw.make_pipeline("binary-bow", "arow").set_params(method="offset")
    with pytest.raises(ParameterError, match="method='offset' is invalid; method must be None or one of "
                                             "'temperature', 'top-bias', 'auto'"):
        pipeline.fit(docs, labels)


def test_one_exponential_gives_scipys_softmax_and_log_partition_even_for_huge_scores():
    from scipy.special import softmax

    from textcw.learners.temperature import softmax_and_log_partition

    rng = np.random.default_rng(5)
    scaled = rng.normal(size=(300, 12)) * np.array([[1.0], [50.0], [1000.0]]).repeat(100, axis=0)
    p, log_partition = softmax_and_log_partition(scaled)
    np.testing.assert_allclose(p, softmax(scaled, axis=1), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(log_partition, logsumexp(scaled, axis=1), rtol=1e-13)
    assert np.all(np.isfinite(p)) and np.all(np.isfinite(log_partition))


def test_the_offset_fit_from_a_given_temperature_is_the_one_it_refits():
    from textcw.learners.temperature import fit_inverse_temperature, fit_top_bias

    z = out_of_fold_scores()
    beta = fit_inverse_temperature(z, Y)
    assert fit_top_bias(z, Y, beta0=beta) == fit_top_bias(z, Y)
