"""Vocabulary featurizers pickle their fitted state as arrays (textcw.features.vocabulary), load
it without a Python object per word, and featurize exactly as before, bit for bit; models saved
before (a dict and a list) keep loading."""

from __future__ import annotations

import io
import pickle
import warnings

import joblib
import numpy as np
import pytest
import scipy.sparse as sp

import textcw
from textcw.features import vocabulary as vocab_module
from textcw.features.text import WordCounts, binary_bow
from textcw.features.vocabulary import PACKED, VocabularyTable, is_packed, pack
from textcw.features.weighting import IDF_ARRAY, TfidfWords

DOCS = ["the cat sat on the mat mat mat", "dogs and cats", "the end of it all", "cat cat dog",
        "Mat, MAT!", "naïve café Straße ΣΊΣΥΦΟΣ", "under_score x1 1x", "a dog and a cat and a mat"]
PROBE = ["cat zzz mat mat", "", "nothing known here", "café straße cat", "the dog", "x1 under_score"]
LABELS = ["a", "b"] * 4


def joblib_round_trip(obj):
    buffer = io.BytesIO()
    joblib.dump(obj, buffer)
    buffer.seek(0)
    return joblib.load(buffer)


def assert_same_matrix(a, b):
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    assert a.shape == b.shape and a.dtype == b.dtype
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.indices, b.indices)
    assert np.array_equal(a.data, b.data)  # bit for bit, not approximately


FEATURIZERS = [
    ("tfidf", {}),
    ("tfidf", {"ngram_range": [1, 2]}),
    ("tfidf", {"min_df": 2}),  # scikit-learn's pruning leaves numpy integers as columns
    ("tfidf", {"analyzer": "char", "ngram_range": [1, 3]}),  # terms holding "\n" and " "
    ("binary-bow", {}),
    ("bigram-counts", {"token_pattern": r"\S+"}),
]


@pytest.mark.parametrize(("name", "params"), FEATURIZERS)
def test_a_pickle_holds_arrays_and_loads_the_same_featurizer(name, params):
    fitted = textcw.make_featurizer(name, **params).fit(DOCS + ["line\nbreak here"])
    state = fitted.__getstate__()
    assert is_packed(state["vocabulary_"]) and isinstance(fitted.vocabulary_, dict)  # the instance keeps its dict
    _, terms, separator, columns = state["vocabulary_"]
    assert terms.dtype == np.uint8 and columns.dtype == np.int32 and 0 <= separator < 128
    if isinstance(fitted, TfidfWords):
        assert state["idf_"][0] == IDF_ARRAY and state["idf_"][1].dtype == np.float64
    expected = fitted.transform(PROBE)
    for loaded in (joblib_round_trip(fitted), pickle.loads(pickle.dumps(fitted, protocol=5))):
        assert loaded.vocabulary_ == fitted.vocabulary_ and list(loaded.vocabulary_) == list(fitted.vocabulary_)
        assert all(type(c) is int for c in loaded.vocabulary_.values())
        assert vars(loaded).keys() == vars(fitted).keys() - {"_native_table"}  # nothing new in vars()
        if isinstance(fitted, TfidfWords):
            assert type(loaded.idf_) is list and loaded.idf_ == fitted.idf_
            assert all(type(w) is float for w in loaded.idf_)
        assert_same_matrix(loaded.transform(PROBE), expected)
        assert list(loaded.get_feature_names_out()) == list(fitted.get_feature_names_out())
    # and a featurizer fitted afresh gives the same matrix
    assert_same_matrix(textcw.make_featurizer(name, **params).fit(DOCS + ["line\nbreak here"]).transform(PROBE),
                       expected)


def test_pickles_are_deterministic_and_survive_a_second_round_trip():
    fitted = textcw.make_featurizer("tfidf").fit(DOCS)
    first = pickle.dumps(fitted, protocol=5)
    assert pickle.dumps(fitted, protocol=5) == first
    again = pickle.loads(first)
    assert pickle.dumps(again, protocol=5) == first
    assert pickle.dumps(pickle.loads(pickle.dumps(again, protocol=5)), protocol=5) == first


def test_a_model_file_round_trip_predicts_bit_for_bit(tmp_path):
    model = textcw.make_pipeline("tfidf", "arow", probability="raw").fit(DOCS, LABELS)
    path = textcw.save(model, tmp_path / "m.textcw-model")
    loaded = textcw.load(path)
    np.testing.assert_array_equal(loaded.predict_proba(PROBE), model.predict_proba(PROBE))
    assert_same_matrix(loaded[0].transform(PROBE), model[0].transform(PROBE))
    # saved again, the same fitted state, byte for byte
    again = textcw.load(textcw.save(loaded, tmp_path / "again.textcw-model"))
    for name in ("vocabulary_", "idf_"):
        assert pickle.dumps(again[0].__getstate__()[name]) == pickle.dumps(model[0].__getstate__()[name])
    assert_same_matrix(again[0].transform(PROBE), model[0].transform(PROBE))
    # an export of the loaded model is the export of the model (vocabulary_ and idf_ as they were)
    textcw.export_model(loaded, tmp_path / "m.textcw")
    back = textcw.import_model(tmp_path / "m.textcw")
    assert back[0].vocabulary_ == model[0].vocabulary_ and back[0].idf_ == model[0].idf_
    np.testing.assert_array_equal(back.predict_proba(PROBE), model.predict_proba(PROBE))


def old_layout_pickle(featurizer, monkeypatch) -> bytes:
    """A joblib pickle of ``featurizer`` as textcw wrote it before the arrays: ``vocabulary_`` a
    dict, ``idf_`` a list (the state is the instance's ``__dict__``, less the compiled table)."""
    old = featurizer.__class__.__new__(featurizer.__class__)
    old.__dict__.update({k: v for k, v in featurizer.__dict__.items() if k != "_native_table"})
    with monkeypatch.context() as patch:
        patch.setattr(WordCounts, "__getstate__", lambda self: dict(self.__dict__))
        patch.setattr(TfidfWords, "__getstate__", lambda self: dict(self.__dict__))
        buffer = io.BytesIO()
        joblib.dump(old, buffer)
    return buffer.getvalue()


@pytest.mark.parametrize("name", ["tfidf", "binary-bow"])
def test_a_pickle_of_the_old_layout_still_loads(name, monkeypatch):
    fitted = textcw.make_featurizer(name).fit(DOCS)
    payload = old_layout_pickle(fitted, monkeypatch)
    assert PACKED.encode() not in payload and IDF_ARRAY.encode() not in payload
    loaded = joblib.load(io.BytesIO(payload))
    assert type(loaded.vocabulary_) is dict and loaded.vocabulary_ == fitted.vocabulary_
    assert_same_matrix(loaded.transform(PROBE), fitted.transform(PROBE))
    # saved again, it is saved as arrays, and gives the same matrices
    assert is_packed(loaded.__getstate__()["vocabulary_"])
    assert_same_matrix(joblib_round_trip(loaded).transform(PROBE), fitted.transform(PROBE))


def test_a_loaded_featurizer_transforms_from_its_arrays_not_its_dict(monkeypatch):
    fitted = textcw.make_featurizer("tfidf").fit(DOCS)
    expected = fitted.transform(PROBE)
    loaded = pickle.loads(pickle.dumps(fitted))

    def refuse(_):
        raise AssertionError("the table was packed from the dict again")

    monkeypatch.setattr(VocabularyTable, "from_dict", refuse)
    assert_same_matrix(loaded.transform(PROBE), expected)
    # the weights too are the loaded array, kept with the list they were loaded as
    cached = vocab_module._DERIVED[id(loaded)]
    assert cached["idf_"][0] is loaded.idf_ and isinstance(cached["idf_"][1], np.ndarray)
    assert cached["vocabulary_"][0] is loaded.vocabulary_


def test_a_refit_or_new_weights_are_used_not_the_loaded_arrays():
    loaded = pickle.loads(pickle.dumps(textcw.make_featurizer("tfidf").fit(DOCS)))
    loaded.fit(["other words entirely", "words again"])
    assert loaded.transform(["other words"]).nnz == 2 and loaded.transform(["cat"]).nnz == 0
    loaded.idf_ = [w * 2 for w in loaded.idf_]  # a new list: a new array
    assert loaded.transform(["other words"]).nnz == 2
    # the copy that a save makes (copy.copy goes through the pickled state) is the same featurizer
    import copy

    twin = copy.copy(loaded)
    assert twin.vocabulary_ == loaded.vocabulary_ and twin.idf_ == loaded.idf_
    assert_same_matrix(twin.transform(PROBE), loaded.transform(PROBE))


def test_the_table_is_exact_for_any_terms():
    vocabulary = {"b": 3, "": 0, "a\nb": 1, "ΣΊΣ": 2, "x y": 5, "\x00": 4, "\ud800": 6}  # lone surrogate too
    table = VocabularyTable.from_dict(vocabulary)
    assert table.separator not in (10, 0) and table.to_dict() == vocabulary
    assert list(table.to_dict()) == list(vocabulary)
    again = VocabularyTable.from_packed(pickle.loads(pickle.dumps(table.packed())))
    assert again.to_dict() == vocabulary and again.n_terms == 7
    assert VocabularyTable.from_dict({}).to_dict() == {}
    assert VocabularyTable.from_dict({"only": 0}).packed()[2] == 10


def test_what_cannot_be_packed_exactly_is_pickled_as_it_is():
    assert pack({"a": 0.5}) == {"a": 0.5}  # not integer columns
    assert pack({1: 0}) == {1: 0}  # not str terms
    every_ascii = {"".join(map(chr, range(128))): 0}
    assert pack(every_ascii) == every_ascii  # no byte left to separate terms
    bow = binary_bow().fit(DOCS)
    bow.vocabulary_ = {"cat": 0.0, "dog": 1.0}  # kept as given, loaded as given
    assert pickle.loads(pickle.dumps(bow)).vocabulary_ == {"cat": 0.0, "dog": 1.0}
    feat = textcw.make_featurizer("tfidf").fit(DOCS)
    feat.idf_ = np.asarray(feat.idf_)  # not a list of floats: left as it is
    state = feat.__getstate__()
    assert isinstance(state["idf_"], np.ndarray)
    assert isinstance(pickle.loads(pickle.dumps(feat)).idf_, np.ndarray)


@pytest.mark.parametrize("damage", [
    lambda p: (p[0], p[1][:-1], p[2], p[3]),  # the last separator cut off
    lambda p: (p[0], p[1], p[2], p[3][:-1]),  # a column missing
    lambda p: (p[0], p[1], 300, p[3]),  # not an ASCII separator
    lambda p: (p[0], p[1].astype(np.int64), p[2], p[3]),
    lambda p: (p[0], np.frombuffer(b"a\nb\na\n", dtype=np.uint8), p[2], np.arange(3)),  # a term twice
])
def test_inconsistent_arrays_are_refused_when_loaded(damage):
    fitted = binary_bow().fit(DOCS)
    state = fitted.__getstate__()
    state["vocabulary_"] = damage(state["vocabulary_"])
    with pytest.raises(ValueError):
        WordCounts.__new__(WordCounts).__setstate__(state)


def test_the_feature_cache_round_trip_is_unchanged():
    # The feature cache keeps a fitted featurizer as JSON and checks that the one it restores
    # pickles byte for byte like the original (textcw.corpus.feature_cache).
    import json

    from textcw.corpus import feature_cache

    make = lambda: textcw.make_featurizer("tfidf")  # noqa: E731
    fitted = make()
    fitted.fit_transform(DOCS)
    fitted.transform(PROBE)  # the compiled table in use
    state = feature_cache.featurizer_state(fitted, make())
    assert state is not None and [name for name, _, _ in state][-2:] == ["vocabulary_", "idf_"]
    restored = feature_cache.restore_featurizer(make(), json.loads(feature_cache._to_json(state)))
    assert feature_cache._pickled(restored) == feature_cache._pickled(fitted)


def test_a_large_vocabulary_loads_without_an_object_per_word_in_the_pickle():
    vocabulary = {f"w{i:06d}": i for i in range(50_000)}
    feat = binary_bow(vocabulary=None)
    feat.fit(["w000000 w000001"])
    feat.vocabulary_ = vocabulary
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        buffer = io.BytesIO()
        joblib.dump(feat, buffer)
    # two arrays of bytes, not 50,000 strings: the pickle is about the size of the terms
    assert len(buffer.getvalue()) < 8 * 50_000 + 4 * 50_000 + 10_000
    loaded = joblib.load(io.BytesIO(buffer.getvalue()))
    assert loaded.vocabulary_ == vocabulary
    assert loaded.transform(["w000007 w049999 unknown"]).indices.tolist() == [7, 49_999]
