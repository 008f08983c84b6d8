"""Held-out rows scored as unseen documents are (textcw.learners.unseen_features), and where the
calibration uses them: ``Calibrated(unseen="drop")`` and the short documents of ``textcw train``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.model_selection import StratifiedKFold

import textcw
from csv_corpus import csv_corpus
from textcw.errors import ParameterError
from textcw.learners.calibrated import Calibrated
from textcw.learners.calibrated_pipeline import chosen_calibration
from textcw.learners.ngram_choice import BIGRAMS, UNIGRAMS
from textcw.learners.temperature import fit_temperature
from textcw.learners.unseen_features import as_unseen, unit_length_rows
from textcw.pipeline import train

FITTED = ["orbit moon rocket", "moon landing", "dose pill doctor", "doctor visit"]
SCORED = ["orbit comet tail", "pill doctor nurse", "comet nurse", "rocket moon moon"]


def test_unseen_columns_are_dropped_and_rows_rescaled_as_a_featurizer_fitted_without_them_would():
    vectorizer = TfidfVectorizer(use_idf=False).fit(FITTED + SCORED)
    X_fitted, X_scored = (sp.csr_matrix(vectorizer.transform(d)) for d in (FITTED, SCORED))
    assert unit_length_rows(X_fitted) and unit_length_rows(X_scored)
    held_out = as_unseen(X_scored, X_fitted, unit_length=True)
    # the reference: the documents reduced to the fitting rows' words, then normalised (idf off,
    # so the featurizer's weights of the words that are left are the same)
    known = set(CountVectorizer().fit(FITTED).vocabulary_)
    reduced = [" ".join(w for w in d.split() if w in known) for d in SCORED]
    expected = vectorizer.transform(reduced).toarray()
    np.testing.assert_allclose(held_out.toarray(), expected, rtol=0, atol=1e-15)
    assert held_out[2].nnz == 0  # "comet nurse": no known word, an empty row (no NaN)
    assert np.array_equal(X_scored.toarray(), vectorizer.transform(SCORED).toarray())  # input unchanged


def test_rows_that_are_not_unit_length_lose_the_columns_only():
    counts = CountVectorizer().fit(FITTED + SCORED)
    X_fitted, X_scored = (sp.csr_matrix(counts.transform(d), dtype=float) for d in (FITTED, SCORED))
    assert not unit_length_rows(X_scored)
    held_out = as_unseen(X_scored, X_fitted, unit_length=False)
    seen = np.asarray(X_fitted.sum(axis=0)).ravel() > 0
    np.testing.assert_array_equal(held_out.toarray(), X_scored.toarray() * seen)
    # all-zero rows do not decide whether rows are unit length
    assert unit_length_rows(sp.csr_matrix(np.array([[0.6, 0.8], [0.0, 0.0]])))
    assert not unit_length_rows(sp.csr_matrix(np.array([[0.6, 0.8], [0.5, 0.5]])))


def _short_task(n=600, seed=0):
    rng = np.random.default_rng(seed)
    topics = [[f"t{k}w{j}" for j in range(30)] for k in range(4)]
    docs, labels = [], []
    for _ in range(n):
        k = int(rng.integers(4))
        words = list(rng.choice(topics[k], 3)) + [f"rare{int(rng.integers(3000))}" for _ in range(2)]
        docs.append(" ".join(words))
        labels.append(f"topic{k}")
    return docs, np.array(labels)


def test_calibrated_drop_is_the_cross_fit_with_unseen_rows_written_out():
    docs, labels = _short_task()
    X = sp.csr_matrix(textcw.make_featurizer("tfidf").fit_transform(docs))
    learner = textcw.make_learner("arow", n_epochs=3)
    fitted = Calibrated(learner, unseen="drop").fit(X, labels)
    classes = np.unique(labels)
    target = np.searchsorted(classes, labels)
    scores, variances = np.zeros((len(labels), 4)), np.zeros((len(labels), 4))
    for fit_on, scored in StratifiedKFold(2, shuffle=True, random_state=0).split(np.zeros((len(labels), 1)), target):
        half = clone(learner).fit(X[fit_on], labels[fit_on])
        rows = as_unseen(X[scored], X[fit_on], unit_length=True)
        scores[scored], variances[scored] = half.decision_function(rows), half.margin_variance(rows)
    # margin "auto" without the weight lengths: raw or standardized scores
    expected = fit_temperature(scores, variances, target, margin="auto", record="cross-fit", norms=None)
    assert fitted.scaling_ == expected and fitted.margin_ in ("raw", "standardized")
    kept = Calibrated(learner).fit(X, labels)
    np.testing.assert_array_equal(kept.predict(X), fitted.predict(X))  # the model is the same
    assert kept.scaling_ != fitted.scaling_


def test_unseen_is_checked():
    docs, labels = _short_task(100)
    X = textcw.make_featurizer("tfidf").fit_transform(docs)
    with pytest.raises(ParameterError, match="unseen"):
        Calibrated(textcw.make_learner("arow"), unseen="hide").fit(X, labels)
    pipeline = textcw.make_pipeline("tfidf", "arow").set_params(unseen="hide")
    with pytest.raises(ParameterError, match="unseen='hide' is invalid; unseen must be 'auto', 'keep' or 'drop'"):
        pipeline.fit(docs, labels)


def test_short_documents_that_chose_their_ngrams_are_scored_as_unseen():
    short = sp.csr_matrix(np.eye(30))  # one word a document
    long = sp.csr_matrix(np.ones((3, 30)))  # thirty
    drop, keep = {"unseen": "drop", "method": "auto"}, {"unseen": "keep", "method": "temperature"}
    assert chosen_calibration(short, UNIGRAMS) == drop and chosen_calibration(long, BIGRAMS) == drop
    assert chosen_calibration(long, UNIGRAMS) == keep and chosen_calibration(short, None) == keep


def test_textcw_train_and_the_pipeline_score_short_documents_as_unseen_alike(tmp_path):
    docs, labels = _short_task(seed=1)
    test_docs, test_labels = _short_task(200, seed=2)
    result = train(csv_corpus(tmp_path, (docs, labels), (test_docs, test_labels)), "arow", cache=False)
    pipeline = textcw.make_pipeline("tfidf", "arow", train_defaults=True).fit(docs, labels)
    assert pipeline.unseen_ == "drop" and pipeline.ngram_choice_.median_words <= 20
    assert result.model.probability_calibration_ == pipeline.probability_calibration_
    assert pipeline.probability_calibration_.margin in ("raw", "standardized")
    np.testing.assert_array_equal(result.model.predict_proba(test_docs), pipeline.predict_proba(test_docs))
    kept = textcw.make_pipeline("tfidf", "arow", train_defaults=True).set_params(unseen="keep").fit(docs, labels)
    assert kept.unseen_ == "keep" and kept.probability_calibration_ != pipeline.probability_calibration_
    fixed = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)  # n-grams as given: as before
    assert fixed.unseen_ == "keep"


def test_a_pipeline_pickled_before_unseen_existed_scores_as_it_did():
    docs, labels = _short_task(200)
    pipeline = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)
    del pipeline.__dict__["unseen"]
    assert pipeline.get_params()["unseen"] == "keep"
    calibrated = Calibrated(textcw.make_learner("arow"))
    del calibrated.__dict__["unseen"]
    assert calibrated.get_params()["unseen"] == "keep"
