"""hashed-tfidf: tfidf's sublinear TF-IDF over hashed words, with a sparse idf learned by fit."""

from __future__ import annotations

import math
import pickle

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import HashingVectorizer, TfidfTransformer
from sklearn.utils import get_tags

import textcw
from textcw.errors import InputError, ModelFileError, ParameterError
from textcw.features.hashed_tfidf import HashedTfidf, hashed_tfidf
from textcw.testing import check_featurizer
from textcw.testing.datasets import make_documents

DOCS = ["The cat sat on the mat.", "the cat, the cat! The CAT.", b"caf\xe9 au lait, mat", "Straße und Straße",
        "", "dogs and cats and dogs", "   ", "the end"]
NEW = ["semaglutide for the cat", "zebra zebra zebra", "the", "Ωμέγα omega"]


def reference(docs, fit_docs, **params):
    """scikit-learn's TfidfTransformer(sublinear_tf=True) fitted on the hashed counts of ``fit_docs``."""
    text = lambda ds: [d.decode("utf-8", "replace") if isinstance(d, bytes) else d for d in ds]  # noqa: E731
    hasher = HashingVectorizer(alternate_sign=False, norm=None, **params)
    weights = TfidfTransformer(sublinear_tf=True).fit(hasher.transform(text(fit_docs)))
    return weights, weights.transform(hasher.transform(text(docs)))


def assert_same(a, b):
    assert a.shape == b.shape
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    assert (abs(a - b) > 1e-12).nnz == 0, abs(a - b).max()
    assert ((a != 0) != (b != 0)).nnz == 0  # the same entries, not just values close to zero


@pytest.mark.parametrize("params", [{}, {"n_features": 64}, {"ngram_range": (1, 2)}, {"binary": True},
                                    {"token_pattern": r"\S+", "lowercase": False}])
def test_is_scikit_learns_sublinear_tfidf_of_the_hashed_counts(params):
    feat = hashed_tfidf(**params)
    fitted = feat.fit_transform(DOCS)
    weights, expected = reference(DOCS, DOCS, **params)
    assert_same(fitted, expected)
    assert_same(feat.transform(NEW), reference(NEW, DOCS, **params)[1])  # new words included
    # the sparse idf is scikit-learn's dense one: its columns seen in training, and one weight
    # for all the others (those of df = 0)
    seen = np.flatnonzero(weights.idf_ < weights.idf_.max())
    assert feat.idf_columns_.tolist() == seen.tolist() and feat.idf_columns_.dtype == np.int32
    np.testing.assert_allclose(feat.idf_values_, weights.idf_[seen], rtol=0, atol=1e-12)
    assert feat.idf_unseen_ == pytest.approx(weights.idf_.max(), abs=1e-12) == 1 + math.log(len(DOCS) + 1)


def test_weights_computed_by_hand():
    feat = hashed_tfidf().fit(["cat cat dog", "dog"])
    column = {w: HashingVectorizer(alternate_sign=False).transform([w]).indices[0] for w in ("cat", "dog", "bird")}
    X = feat.transform(["cat cat dog", "bird dog", "bird"]).toarray()
    cat, dog, bird = (1 + math.log(2)) * (1 + math.log(3 / 2)), 1.0, 1 + math.log(3)  # dog: df = n, idf 1
    assert X[0, column["cat"]] == pytest.approx(cat / math.hypot(cat, dog), abs=1e-15)
    assert X[0, column["dog"]] == pytest.approx(dog / math.hypot(cat, dog), abs=1e-15)
    # "bird" was in no training document: the weight of df = 0, larger than any seen word's
    assert X[1, column["bird"]] == pytest.approx(bird / math.hypot(bird, dog), abs=1e-15)
    assert X[2, column["bird"]] == 1.0 and np.count_nonzero(X) == 5


def test_new_words_get_columns_where_tfidf_drops_them():
    docs, labels = make_documents(60, random_state=0)
    ours, theirs = hashed_tfidf().fit(docs), textcw.make_featurizer("tfidf").fit(docs)
    assert theirs.transform(["semaglutide"]).nnz == 0
    row = ours.transform(["semaglutide"])
    assert row.nnz == 1 and row.data.tolist() == [1.0]
    assert row.indices[0] == HashingVectorizer(alternate_sign=False).transform(["semaglutide"]).indices[0]
    # and a learner fed these rows learns the word: its score moves after one update
    model = textcw.make_pipeline("hashed-tfidf", "arow").fit(docs, labels)
    before = model.decision_function(["semaglutide"])[0]
    model.named_steps["learner"].partial_fit(ours.transform(["semaglutide is a drug"]), ["medicine"])
    assert before == 0.0 and model.decision_function(["semaglutide"])[0] != 0.0


def test_fit_transform_and_transform_agree_bit_for_bit_and_rows_are_unit_length():
    docs, _ = make_documents(15, random_state=3)
    feat = hashed_tfidf()
    X = feat.fit_transform(docs)
    Y = feat.transform(docs)
    assert (X != Y).nnz == 0 and X.has_sorted_indices
    np.testing.assert_allclose(np.asarray(X.multiply(X).sum(axis=1)).ravel(), 1.0, rtol=0, atol=1e-12)
    assert feat.transform([]).shape == (0, 2**20)


def test_passes_the_featurizer_contract():
    check_featurizer(hashed_tfidf)


def test_is_registered_and_needs_a_fit():
    feat = textcw.make_featurizer("hashed-tfidf", n_features=2**18, ngram_range=[1, 2])
    assert isinstance(feat, HashedTfidf) and feat.ngram_range == (1, 2) and feat.n_features == 2**18
    assert get_tags(feat).requires_fit  # unlike `hashing`: the idf comes from the training documents
    assert clone(feat).get_params() == feat.get_params()
    with pytest.raises(NotFittedError, match="hashed-tfidf featurizer is not fitted yet"):
        feat.transform(["a document"])


@pytest.mark.parametrize("params,message", [
    ({"norm": "l1"}, "unknown parameter 'norm' for featurizer 'hashed-tfidf'"),
    ({"alternate_sign": True}, "unknown parameter 'alternate_sign'"),
    ({"n_features": 0}, r"featurizer 'hashed-tfidf': The 'n_features' parameter .* must be an int"),
    ({"token_pattern": "(a+)+$"}, r"token_pattern='\(a\+\)\+\$' is not allowed"),
    ({"ngram_range": [1, 11]}, r"ngram_range=\(1, 11\) is not allowed; give two integers"),
    ({"tokenizer": str.split}, "tokenizer=.* is not allowed; featurizer parameters are data, not code"),
    ({"input": "filename"}, "input='filename' is not allowed"),
])
def test_parameter_limits_are_those_of_the_text_featurizers(params, message):
    with pytest.raises(ParameterError, match=message):
        textcw.make_featurizer("hashed-tfidf", **params).fit(["some text"])


@pytest.mark.parametrize("documents,message", [
    ([], "^the hashed-tfidf featurizer got no training documents$"),
    (["", "!!", "a b"], "^the hashed-tfidf featurizer found no words in the 3 training documents: "),
    ([{"good": 1}], "the hashed-tfidf featurizer featurizes text .*not dict"),
    ("one string", "not a single string"),
])
def test_unusable_training_documents_are_a_clear_error(documents, message):
    with pytest.raises(InputError, match=message):
        hashed_tfidf().fit(documents)


def test_saved_model_round_trips_and_stays_small(tmp_path):
    docs, labels = make_documents(60, random_state=0)
    model = textcw.make_pipeline("hashed-tfidf", "arow").fit(docs, labels)
    feat = model.named_steps["featurizer"]
    probe = ["rocket orbit semaglutide", "doctor patient", "new words only: zyzzyva"]
    for back in (textcw.load(textcw.save(model, tmp_path / "m.textcw-model")),
                 pickle.loads(pickle.dumps(model))):
        np.testing.assert_array_equal(back.predict_proba(probe), model.predict_proba(probe))
        again = back.named_steps["featurizer"]
        assert again.idf_columns_.tobytes() == feat.idf_columns_.tobytes()
        assert again.idf_values_.tobytes() == feat.idf_values_.tobytes() and again.idf_unseen_ == feat.idf_unseen_
    joblib.dump(feat, tmp_path / "f.joblib")
    assert (joblib.load(tmp_path / "f.joblib").transform(probe) != feat.transform(probe)).nnz == 0


def test_the_pickle_grows_with_the_words_seen_not_with_the_width():
    rng = np.random.default_rng(0)
    docs = [" ".join(f"w{i}" for i in rng.integers(0, 5000, 40)) for _ in range(400)]
    feat = hashed_tfidf().fit(docs)
    hashed = np.unique(HashingVectorizer(alternate_sign=False).transform(docs).indices)
    assert feat.idf_columns_.tolist() == hashed.tolist() and len(hashed) > 4500  # the columns the words took
    # 12 bytes a seen column (int32 + float64) and a fixed overhead, not 2**20 weights (8 MiB)
    assert 12 * len(feat.idf_columns_) < len(pickle.dumps(feat)) < 12 * len(feat.idf_columns_) + 1500


def test_export_round_trip_gives_the_same_probabilities(tmp_path):
    docs, labels = make_documents(60, random_state=0)
    model = textcw.make_pipeline("hashed-tfidf", "arow").fit(docs, labels)
    textcw.export_model(model, tmp_path / "m.textcw")
    back = textcw.import_model(tmp_path / "m.textcw")
    probe = ["rocket orbit", "doctor patient", "zyzzyva"]
    np.testing.assert_array_equal(back.predict_proba(probe), model.predict_proba(probe))
    assert back.named_steps["featurizer"].idf_values_.tobytes() == model.named_steps["featurizer"].idf_values_.tobytes()


def fitted():
    return hashed_tfidf(n_features=1000).fit(["alpha beta", "beta gamma delta", "alpha"])


TAMPERED = [
    ("idf_columns_", lambda f: f.idf_columns_.astype(np.float64), r"columns \(idf_columns_\) are not a vector of int32"),
    ("idf_columns_", lambda f: f.idf_columns_[::-1].copy(), "columns are not sorted and unique"),
    ("idf_columns_", lambda f: np.repeat(f.idf_columns_[:1], len(f.idf_columns_)), "columns are not sorted and unique"),
    ("idf_columns_", lambda f: f.idf_columns_ + 1000, r"names columns from \d+ to \d+, outside 0..999"),
    ("idf_columns_", lambda f: f.idf_columns_ - 1000, r"names columns from -\d+ to -?\d+, outside 0..999"),
    ("idf_columns_", lambda f: f.idf_columns_.reshape(1, -1), r"columns \(idf_columns_\) are not a vector of int32 or int64"),
    ("idf_columns_", lambda f: f.idf_columns_[:-1].copy(), "has 3 columns and 4 weights"),
    ("idf_values_", lambda f: np.full(len(f.idf_values_), np.nan), "weights are not all positive finite numbers"),
    ("idf_values_", lambda f: -f.idf_values_, "weights are not all positive finite numbers"),
    ("idf_values_", lambda f: f.idf_values_.astype(np.float32), r"weights \(idf_values_\) are not a vector of float64"),
    ("idf_values_", lambda f: f.idf_values_.tolist(), r"weights \(idf_values_\) are not a vector of float64"),
    ("idf_unseen_", lambda f: math.inf, r"weight of unseen columns \(idf_unseen_\) inf is not a positive finite"),
    ("idf_unseen_", lambda f: "2.0", "weight of unseen columns .*'2.0' is not a positive finite number"),
]


@pytest.mark.parametrize("attribute,tamper,message", TAMPERED, ids=[m for _, _, m in TAMPERED])
def test_a_tampered_state_is_refused_when_it_is_read_back(tmp_path, attribute, tamper, message):
    feat = fitted()
    bad = HashedTfidf.__new__(HashedTfidf)
    bad.__dict__.update({**feat.__dict__, attribute: tamper(feat)})  # bypassing the checks, as a file does
    full = rf"^the hashed-tfidf featurizer's idf {message}.*; refit the featurizer or use an undamaged model file$"
    with pytest.raises(ModelFileError, match=full):  # a pickle, read by joblib (or textcw.load)
        joblib.dump(bad, tmp_path / "bad.joblib")
        joblib.load(tmp_path / "bad.joblib")
    with pytest.raises(ModelFileError, match=full):  # attributes set one by one, as an import does
        fresh = hashed_tfidf(n_features=1000)
        for name in ("idf_unseen_", "idf_values_", "idf_columns_"):
            setattr(fresh, name, bad.__dict__[name])
    with pytest.raises(ModelFileError, match=full):  # and never used to weigh a document
        bad.transform(["alpha"])


def test_a_pickle_missing_part_of_the_state_is_refused():
    state = fitted().__getstate__()
    del state["idf_unseen_"]
    with pytest.raises(ModelFileError, match="^the hashed-tfidf featurizer's saved state lacks idf_unseen_; "):
        HashedTfidf.__new__(HashedTfidf).__setstate__(state)


def test_a_tampered_export_is_refused_at_import(tmp_path):
    docs, labels = make_documents(60, random_state=0)
    model = textcw.make_pipeline("hashed-tfidf", "arow").fit(docs, labels)
    feat = model.named_steps["featurizer"]
    feat.__dict__["idf_columns_"] = feat.idf_columns_ + (2**20 - feat.idf_columns_.max())  # one past the end
    textcw.export_model(model, tmp_path / "bad.textcw")
    with pytest.raises(ModelFileError, match=r"bad.textcw holds an invalid model: the hashed-tfidf featurizer's idf "
                                             r"names columns from \d+ to 1048576, outside 0..1048575"):
        textcw.import_model(tmp_path / "bad.textcw")


def test_a_changed_width_is_checked_again():
    feat = fitted()
    feat.transform(["alpha"])
    feat.set_params(n_features=10)  # the stored columns (hashes mod 1000) no longer fit
    with pytest.raises(ModelFileError, match=r"outside 0..9"):
        feat.transform(["alpha"])


def test_a_served_model_learns_a_new_word(tmp_path):
    pytest.importorskip("textcw_serve")
    from textcw_serve.startup import open_service

    docs, labels = make_documents(60, random_state=0)
    model = textcw.make_pipeline("hashed-tfidf", "arow").fit(docs, [str(label) for label in labels])
    path = textcw.save(model, tmp_path / "m.textcw-model")
    service = open_service(path, learn=True, state=tmp_path / "state")
    try:
        assert service.status()["vocabulary"]["fixed"] is False
        before = service.predict(["semaglutide"])[1][0]
        reply = service.submit_update(["is semaglutide worth it"], ["medicine"]).result(60)
        after = service.predict(["semaglutide"])[1][0]
    finally:
        service.stop()
    assert before["decision"] == 0.0 and reply["updates"] == 1 and reply["unseen_tokens"] is None
    assert after["label"] == "medicine" and after["decision"] != 0.0
