"""tfidf: sublinear TF-IDF of words at unit length, the default featurizer of text corpora."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer

import textcw
from textcw.errors import InputError
from textcw.registry import DEFAULT_FEATURIZER

DOCS = ["the cat sat on the mat mat mat", "dogs and cats", "the end of it all", "cat cat dog", "Mat, MAT!"]


def test_is_scikit_learns_sublinear_tfidf_and_the_default_for_text():
    assert DEFAULT_FEATURIZER == "tfidf"
    ours = textcw.make_featurizer("tfidf").fit(DOCS)
    theirs = TfidfVectorizer(sublinear_tf=True).fit(DOCS)
    new = ["cat zzz mat mat", "", "nothing known here"]
    for docs in (DOCS, new):
        np.testing.assert_allclose(ours.transform(docs).toarray(), theirs.transform(docs).toarray(), rtol=0, atol=1e-15)
    np.testing.assert_allclose(ours.idf_, theirs.idf_)
    assert isinstance(ours.idf_, list)  # plain data: the feature cache and exports keep it
    X = ours.transform(DOCS)
    # unit length; "mat" three times weighs 1 + log 3, not 3
    np.testing.assert_allclose(np.sqrt(X.multiply(X).sum(axis=1)).A1, 1.0)
    row = X[0].toarray().ravel()
    col = ours.vocabulary_
    assert row[col["mat"]] / row[col["sat"]] == pytest.approx((1 + np.log(3)) * ours.idf_[col["mat"]]
                                                              / ours.idf_[col["sat"]])
    # an empty or unknown document is a zero row, not a division by zero
    assert ours.transform(["", "qqq"]).nnz == 0


def test_count_vectorizer_parameters_pass_through():
    bigrams = textcw.make_featurizer("tfidf", ngram_range=[1, 2], min_df=2).fit(DOCS)
    assert set(bigrams.vocabulary_) == {"cat", "mat", "mat mat", "the"}  # "mat mat" in documents 1 and 5
    assert bigrams.get_params()["ngram_range"] == (1, 2)


def test_idf_that_does_not_fit_the_vocabulary_is_a_clear_error():
    feat = textcw.make_featurizer("tfidf").fit(DOCS)
    feat.idf_ = feat.idf_[:-1]
    with pytest.raises(InputError, match=r"^the tfidf featurizer's idf weights do not fit its vocabulary of 13 words"):
        feat.transform(DOCS)
    feat.idf_ = np.full(13, np.nan)
    with pytest.raises(InputError, match="idf weights do not fit"):
        feat.transform(DOCS)


def test_export_round_trip_gives_the_same_probabilities(tmp_path):
    docs = ["good fine great", "bad awful poor", "great good", "poor bad bad", "fine good", "awful poor"] * 5
    labels = ["pos", "neg"] * 15
    model = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)
    textcw.export_model(model, tmp_path / "m.textcw")
    back = textcw.import_model(tmp_path / "m.textcw")
    probe = ["good poor", "great", "bad"]
    np.testing.assert_array_equal(back.predict_proba(probe), model.predict_proba(probe))
    np.testing.assert_array_equal(back.named_steps["featurizer"].idf_, model.named_steps["featurizer"].idf_)


def test_make_pipeline_with_train_defaults_is_what_textcw_train_fits():
    plain = textcw.make_pipeline("tfidf", "cw-stdev")
    as_train = textcw.make_pipeline("tfidf", "cw-stdev", train_defaults=True)
    assert plain.named_steps["learner"].eta != "auto"
    assert as_train.named_steps["learner"].eta == "auto"
    given = textcw.make_pipeline("tfidf", "cw-stdev", train_defaults=True, eta=0.9)
    assert given.named_steps["learner"].eta == 0.9
