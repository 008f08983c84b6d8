"""Short documents give the Gaussian learners an intercept (``with_chosen_intercept``), in
``textcw train`` and ``make_pipeline(..., train_defaults=True)`` alike, unless it is given; and
``Calibrated(margin="auto")`` then leaves the standardized scores out."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import textcw
from csv_corpus import csv_corpus
from textcw.errors import ParameterError
from textcw.learners.calibrated import Calibrated
from textcw.learners.calibrated_pipeline import CalibratedPipeline, short_documents, with_chosen_intercept
from textcw.learners.ngram_choice import BIGRAMS, UNIGRAMS
from textcw.pipeline import train

WORDS = {"space": "orbit moon rocket comet launch probe", "health": "dose pill doctor nurse clinic fever",
         "sport": "goal match team coach league score"}


def _task(n: int, seed: int, rare: int = 1, majority: str = "space"):
    """Documents of three words of their label's vocabulary, one of another label's and ``rare``
    words drawn from thousands (so ``rare=30`` makes long documents), half of the ``majority``
    label."""
    rng = np.random.default_rng(seed)
    labels = sorted(WORDS)
    docs, y = [], []
    for i in range(n):
        label = majority if i % 2 == 0 else labels[rng.integers(len(labels))]
        own = rng.choice(WORDS[label].split(), size=3).tolist()
        other = rng.choice(WORDS[labels[rng.integers(len(labels))]].split(), size=1).tolist()
        docs.append(" ".join(own + other + [f"w{rng.integers(10 * n)}" for _ in range(rare)]))
        y.append(label)
    return docs, np.array(y, dtype=object)


def test_the_rule_gives_a_gaussian_learner_an_intercept_on_short_documents_only():
    arow = textcw.make_learner("arow")
    chosen = with_chosen_intercept(arow, short=True)
    assert chosen is not arow and chosen.fit_intercept is True and arow.fit_intercept is False
    assert chosen.get_params() == {**arow.get_params(), "fit_intercept": True}
    assert with_chosen_intercept(arow, short=False) is arow
    for name in ("cw-var", "cw-stdev", "scw1", "scw2"):
        assert with_chosen_intercept(textcw.make_learner(name), short=True).fit_intercept is True
    for name in ("sgd", "pa1", "perceptron"):  # first-order learners lost with one: none
        learner = textcw.make_learner(name)
        assert with_chosen_intercept(learner, short=True) is learner
    given = textcw.make_learner("arow", fit_intercept=True)
    assert with_chosen_intercept(given, short=True) is given


def test_short_documents_are_those_that_could_choose_bigrams_and_are_short():
    docs, _ = _task(100, seed=0)
    X = textcw.make_featurizer("tfidf").fit_transform(docs)
    assert short_documents(X, UNIGRAMS) and short_documents(X, BIGRAMS)
    assert not short_documents(X, None)  # the featurizer fitted as given: nothing is judged
    long_docs, _ = _task(100, seed=0, rare=30)
    assert not short_documents(textcw.make_featurizer("tfidf").fit_transform(long_docs), UNIGRAMS)


def test_make_pipeline_chooses_exports_and_refits_the_intercept(tmp_path):
    docs, labels = _task(400, seed=1)
    test_docs, _ = _task(100, seed=2)
    model = textcw.make_pipeline("tfidf", "arow", train_defaults=True).fit(docs, labels)
    assert model.intercept == "auto" and model.intercept_chosen_ is True
    assert model[-1].fit_intercept is True and np.any(model[-1].intercept_ != 0)
    assert model.textcw_components_["learner"]["params"]["fit_intercept"] is True
    assert model.probability_calibration_.margin == "raw"
    textcw.export_model(model, tmp_path / "m.textcw")
    again = textcw.import_model(tmp_path / "m.textcw")
    np.testing.assert_array_equal(again.predict_proba(test_docs), model.predict_proba(test_docs))
    # a refit on long documents chooses again: no intercept
    long_docs, long_labels = _task(400, seed=3, rare=30)
    model.fit(long_docs, long_labels)
    assert model.intercept_chosen_ is False and model[-1].fit_intercept is False
    assert model.textcw_components_["learner"]["params"]["fit_intercept"] is False


def test_a_given_intercept_is_kept():
    docs, labels = _task(400, seed=1)
    model = textcw.make_pipeline("tfidf", "arow", train_defaults=True, fit_intercept=False).fit(docs, labels)
    assert model.intercept == "given" and model[-1].fit_intercept is False
    plain = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)  # no train defaults: as given
    assert plain.intercept == "given" and plain[-1].fit_intercept is False
    with pytest.raises(ParameterError, match="^intercept='yes' is invalid; intercept must be 'given' or 'auto'$"):
        textcw.make_pipeline("tfidf", "arow", train_defaults=True).set_params(intercept="yes").fit(docs, labels)


def test_textcw_train_chooses_as_the_pipeline_does(tmp_path):
    docs, labels = _task(400, seed=4)
    test_docs, test_labels = _task(150, seed=5)
    corpus = csv_corpus(tmp_path, (docs, labels), (test_docs, test_labels))
    result = train(corpus, "scw1", cache=False)
    pipeline = textcw.make_pipeline("tfidf", "scw1", train_defaults=True).fit(docs, labels)
    assert result.model[-1].fit_intercept is True
    np.testing.assert_array_equal(result.model[-1].intercept_, pipeline[-1].intercept_)
    np.testing.assert_array_equal(result.model.predict_proba(test_docs), pipeline.predict_proba(test_docs))
    given = train(corpus, "scw1", params={"fit_intercept": False}, cache=False)
    assert given.model[-1].fit_intercept is False


def test_a_document_of_unknown_words_gets_the_most_frequent_label():
    # What the intercept is for: the scores of a document sharing no word with the training ones
    # are the biases alone, which favour the label most documents had.
    docs, labels = _task(600, seed=6)
    model = textcw.make_pipeline("tfidf", "scw1", train_defaults=True).fit(docs, labels)
    assert model[-1].fit_intercept is True
    assert model.predict(["unknown words only"])[0] == "space"
    proba = model.predict_proba(["unknown words only"])[0]
    assert proba[list(model.classes_).index("space")] == proba.max() > 1 / 3


def test_auto_margin_leaves_out_the_standardized_scores_of_a_learner_with_an_intercept():
    docs, labels = _task(400, seed=7)
    X = textcw.make_featurizer("tfidf").fit_transform(docs)
    with_bias = Calibrated(textcw.make_learner("arow", fit_intercept=True), unseen="drop").fit(X, labels)
    assert set(with_bias.recorded_log_loss_) == {"raw"}
    without = Calibrated(textcw.make_learner("arow"), unseen="drop").fit(X, labels)
    assert set(without.recorded_log_loss_) == {"raw", "standardized"}
    asked = Calibrated(textcw.make_learner("arow", fit_intercept=True), margin="standardized").fit(X, labels)
    assert asked.margin_ == "standardized"  # asked for: kept


def test_a_pipeline_pickled_before_intercept_existed_keeps_its_learner_as_given():
    docs, labels = _task(200, seed=8)
    pipeline = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)
    del pipeline.__dict__["intercept"]
    again = pickle.loads(pickle.dumps(pipeline))
    assert isinstance(again, CalibratedPipeline) and again.get_params()["intercept"] == "given"
    assert again.fit(docs, labels)[-1].fit_intercept is False
