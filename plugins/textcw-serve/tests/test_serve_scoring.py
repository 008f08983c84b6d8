"""The compiled batch scoring (textcw_serve.scoring) against the library's own methods.

``score`` must give what ``decision_function``, ``margin_variance``, ``predict`` and the
(calibrated) ``predict_proba`` give, to 1e-12, for the learners the service serves (CW-stdev,
AROW, SCW-I with diagonal covariances; binary and multi-class; with and without an intercept),
and must fall back to the learner's own methods, unchanged, for anything else.
"""

from __future__ import annotations

import numpy as np
import pytest
import textcw

from textcw_serve import model_ops, scoring
from textcw_serve.model_ops import featurize, score

WORDS = {"space": "orbit rocket launch moon shuttle nasa planet star comet probe".split(),
         "medicine": "doctor nurse patient drug dose clinic fever virus heart blood".split(),
         "sport": "goal team match score coach league season player ball referee".split()}


def documents(n: int, classes: list[str], seed: int = 0):
    """``n`` documents of 6-14 words, most from their class's words, some shared (so the scores overlap)."""
    rng = np.random.default_rng(seed)
    shared = [w for c in WORDS.values() for w in c]
    docs, labels = [], []
    for i in range(n):
        label = classes[i % len(classes)]
        words = [rng.choice(WORDS[label]) if rng.random() < 0.7 else rng.choice(shared)
                 for _ in range(rng.integers(6, 15))]
        docs.append(" ".join(words))
        labels.append(label)
    return docs, labels


def fitted(learner: str, n_classes: int, probability: str, **params):
    classes = list(WORDS)[:n_classes]
    docs, labels = documents(60, classes)
    return textcw.make_pipeline("hashing", learner, featurizer_params={"n_features": 512}, probability=probability,
                                n_epochs=1, **params).fit(docs, labels)


def assert_library_equal(model, X):
    learner = model.steps[-1][1]
    got = score(model, X)
    np.testing.assert_allclose(got.scores, learner.decision_function(X), rtol=0, atol=1e-12)
    assert list(got.predicted) == list(learner.predict(X))
    scaling = getattr(model, "probability_calibration_", None)
    expected = scaling.predict_proba(learner, X) if scaling is not None else learner.predict_proba(X)
    np.testing.assert_allclose(got.proba, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("learner", ["cw-stdev", "arow", "scw1"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_compiled_pass_equals_the_library(learner, n_classes):
    probability = "calibrated" if n_classes == 3 else "raw"  # a temperature, and the learner's own Phi
    model = fitted(learner, n_classes, probability, fit_intercept=n_classes == 2)
    X = featurize(model, documents(40, list(WORDS)[:n_classes], seed=5)[0] + ["", "unknownword"])
    est = model.steps[-1][1]
    compiled = scoring.scores_and_variances(est, X, variances=True)
    assert compiled is not None  # the kernel ran
    scores, variances = compiled
    assert scores.shape == est.decision_function(X).shape and scores[-2:].any() == est.fit_intercept
    np.testing.assert_allclose(scores, est.decision_function(X), rtol=0, atol=1e-12)
    np.testing.assert_allclose(variances, est.margin_variance(X), rtol=0, atol=1e-12)
    assert_library_equal(model, X)


def test_a_standardized_temperature_uses_the_compiled_variances(monkeypatch):
    model = fitted("cw-stdev", 3, "calibrated")
    scaling = model.probability_calibration_
    monkeypatch.setattr(model, "probability_calibration_", type(scaling)(
        margin="standardized", inverse_temperature=2.0, record=scaling.record))
    X = featurize(model, documents(20, list(WORDS), seed=7)[0])
    learner = model.steps[-1][1]
    calls, own = [], learner.margin_variance
    monkeypatch.setattr(learner, "margin_variance", lambda X: calls.append(1) or own(X), raising=False)
    got = score(model, X)
    assert calls == []  # the probabilities were made from the kernel's variances...
    patched = model.probability_calibration_
    monkeypatch.undo()
    expected = patched.predict_proba(learner, X)
    np.testing.assert_allclose(got.proba, expected, rtol=0, atol=1e-12)  # ...equal to the library's


@pytest.mark.parametrize("params", [{"covariance": "full"}, {"average": True}])
def test_other_learners_are_scored_by_their_own_methods(params):
    model = fitted("arow", 3, "raw", **params)
    X = featurize(model, documents(10, list(WORDS), seed=3)[0])
    learner = model.steps[-1][1]
    compiled = scoring.scores_and_variances(learner, X, variances=True)
    if params.get("average"):  # averaged weights: still the library's scoring, on mu_avg
        np.testing.assert_allclose(compiled[0], learner.decision_function(X), rtol=0, atol=1e-12)
    else:
        assert compiled is None  # a full covariance: margin_variance is the learner's
    assert_library_equal(model, X)


def test_a_learner_with_its_own_scoring_is_asked(monkeypatch):
    model = fitted("cw-stdev", 2, "raw")
    learner = model.steps[-1][1]
    X = featurize(model, ["orbit rocket", "doctor nurse"])
    shifted = learner.decision_function(X) + 1.0
    monkeypatch.setattr(type(learner), "decision_function", lambda self, X: shifted.copy())
    assert scoring.batch_kernel_state(learner, variances=False) is None
    assert model_ops.score(model, X).scores.tolist() == shifted.tolist()
