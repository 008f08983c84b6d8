"""The scikit-learn batch baselines as textcw learners."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from textcw.errors import InputError, ParameterError
from textcw.learners.batch import LinearSVM, MaxEnt, NaiveBayes
from textcw.pipeline import make_learner
from textcw.plugins import default_registries


@pytest.fixture(scope="module")
def counts():
    rng = np.random.default_rng(0)
    X = sp.csr_matrix(rng.poisson(0.3, size=(200, 40)).astype(float))
    w = rng.normal(size=40)
    y = np.where(X @ w > np.median(X @ w), "pos", "neg")
    return X, y


def test_registered_as_builtin_learners():
    regs = default_registries()
    for name, cls in (("nb", NaiveBayes), ("maxent", MaxEnt), ("svm", LinearSVM)):
        entry = regs.learners.get(name)
        assert entry.factory is cls and entry.provider == "textcw"


@pytest.mark.parametrize("name", ["nb", "nb:bernoulli", "maxent", "svm"])
def test_fit_predict_scores(counts, name):
    X, y = counts
    params = {"event_model": "bernoulli"} if name == "nb:bernoulli" else {}
    est = make_learner(name.split(":")[0], **params).fit(X[:150], y[:150])
    assert list(est.classes_) == ["neg", "pos"]
    assert np.mean(est.predict(X[150:]) == y[150:]) > 0.6
    scores = est.decision_function(X[150:])
    assert scores.shape == (50,)
    assert np.array_equal(est.classes_[(scores > 0).astype(int)], est.predict(X[150:]))
    if hasattr(est, "predict_proba"):
        assert np.allclose(est.predict_proba(X[150:]).sum(axis=1), 1.0)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_multiclass_svm_schemes(counts):
    X, _ = counts
    y = np.arange(200) % 3
    predictions = {}
    for scheme in ("ovr", "ovo", "crammer_singer"):
        est = make_learner("svm", multi_class=scheme).fit(X, y)
        predicted = est.predict(X)
        scores = est.decision_function(X)
        assert list(est.classes_) == [0, 1, 2] and scores.shape == (200, 3)
        np.testing.assert_array_equal(est.classes_[np.argmax(scores, axis=1)], predicted)
        # The labels are unrelated to X: what is learned is memorised. Each scheme fits 58-61% of
        # the training set (chance: 33%).
        assert np.mean(predicted == y) > 0.5, scheme
        predictions[scheme] = predicted
    # the schemes are different models, not one model under three names
    assert not np.array_equal(predictions["ovr"], predictions["crammer_singer"])
    assert not np.array_equal(predictions["ovr"], predictions["ovo"])


def test_parameter_and_input_errors(counts):
    X, y = counts
    with pytest.raises(ParameterError, match="C=0"):
        make_learner("svm", C=0)
    with pytest.raises(ParameterError, match="event_model"):
        make_learner("nb", event_model="gaussian")
    with pytest.raises(InputError, match="non-negative"):
        make_learner("nb").fit(-X, y)
    make_learner("nb", event_model="bernoulli").fit(-X, y)
    with pytest.raises(InputError, match="only one class"):
        make_learner("maxent").fit(X, np.zeros(200))
    est = make_learner("svm").fit(X, y)
    with pytest.raises(InputError, match="features"):
        est.predict(X[:, :10])


def test_maxent_c_is_the_prior_variance(counts):
    X, y = counts
    tight = make_learner("maxent", C=0.01).fit(X, y).estimator_.coef_
    loose = make_learner("maxent", C=100.0).fit(X, y).estimator_.coef_
    assert np.linalg.norm(tight) < np.linalg.norm(loose)
