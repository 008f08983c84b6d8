"""The precomputed featurizer: feature mappings or matrices passed through as CSR."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import textcw
from textcw.errors import InputError
from textcw.features.precomputed import Precomputed
from textcw.testing import check_featurizer

TRAIN = [{"good": 2, "great_book": 1}, {"bad": 1, "good": 1}, {"dull": 3}]


def test_mappings_get_the_training_vocabulary():
    feat = textcw.make_featurizer("precomputed")
    X = feat.fit_transform(TRAIN)
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64
    assert feat.get_feature_names_out().tolist() == ["bad", "dull", "good", "great_book"]
    assert X.toarray().tolist() == [[0, 0, 2, 1], [1, 0, 1, 0], [0, 3, 0, 0]]
    # features never seen in training are ignored; an empty review is an empty row
    new = feat.transform([{"good": 1, "brilliant": 5}, {}])
    assert new.shape == (2, 4) and new.toarray().tolist() == [[0, 0, 1, 0], [0, 0, 0, 0]]


def test_binary_replaces_counts_by_ones():
    X = Precomputed(binary=True).fit_transform(TRAIN)
    assert X.toarray().tolist() == [[0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 0]]


def test_matrices_keep_their_training_width():
    train = sp.csr_matrix(np.array([[1.0, 0, 2], [0, 3, 0]]))
    feat = Precomputed().fit(train)
    wider = sp.csr_matrix(np.array([[1.0, 0, 2, 9, 9]]))  # columns 3 and 4 were never seen
    narrower = np.array([[4.0, 5.0]])
    assert feat.transform(wider).toarray().tolist() == [[1, 0, 2]]
    assert feat.transform(narrower).toarray().tolist() == [[4, 5, 0]]
    assert feat.transform(train).toarray().tolist() == [[1, 0, 2], [0, 3, 0]]
    assert feat.get_feature_names_out().tolist() == ["x0", "x1", "x2"]


@pytest.mark.parametrize("fit_on,then,message", [
    (TRAIN, ["some text"], "got text; featurize text with binary-bow"),
    (TRAIN, np.eye(3), "fitted on mappings and cannot transform matrix"),
    (TRAIN, [TRAIN[0], [1, 2]], "a mix of feature mappings and other rows"),
    (np.eye(3), [[1, "x", 3]], "numeric rows"),
    (np.eye(3), np.zeros(3), "2-d matrix"),
    (TRAIN, [], "non-empty sequence"),
])
def test_bad_input_is_a_clear_error(fit_on, then, message):
    feat = Precomputed().fit(fit_on)
    with pytest.raises(InputError, match=message):
        feat.transform(then)


def test_bad_parameter_is_a_parameter_error():
    with pytest.raises(textcw.errors.ParameterError, match="binary"):
        textcw.make_featurizer("precomputed", binary="yes")


def test_passes_the_featurizer_contract():
    rng = np.random.default_rng(0)
    docs, labels = [], []
    for i in range(60):
        label = i % 2
        words = ["good", "great", "love"] if label else ["bad", "awful", "hate"]
        doc = {w: int(rng.integers(1, 3)) for w in rng.choice(words, 2, replace=False)}
        doc[f"noise{int(rng.integers(0, 20))}"] = 1
        docs.append(doc)
        labels.append("pos" if label else "neg")
    check_featurizer(Precomputed, docs, labels)
    rows = sp.random(60, 30, density=0.2, format="csr", random_state=1).toarray()
    check_featurizer(Precomputed, list(rows))  # numeric rows


def test_a_list_of_sparse_rows_is_a_matrix():
    X = sp.csr_matrix(np.array([[0.0, 1, 0], [2, 0, 3]]))
    feat = Precomputed().fit([X[0], X[1]])
    assert feat.transform([X[1]]).toarray().tolist() == [[2, 0, 3]]


def _same_as_dict_vectorizer(train, test):
    """Precomputed's matrices, names and vocabulary against scikit-learn's DictVectorizer itself."""
    from sklearn.feature_extraction import DictVectorizer

    ours, theirs = Precomputed(), DictVectorizer(dtype=np.float64)
    for got, want in ((ours.fit_transform(train), theirs.fit_transform(train)),
                      (ours.transform(test), theirs.transform(test))):
        want = sp.csr_matrix(want)
        assert got.shape == want.shape and got.dtype == want.dtype
        for part in ("indptr", "indices", "data"):  # explicit zeros and the column order included
            np.testing.assert_array_equal(getattr(got, part), getattr(want, part))
    assert ours.vectorizer_.feature_names_ == theirs.feature_names_
    assert ours.vectorizer_.vocabulary_ == theirs.vocabulary_
    return ours


def test_numeric_mappings_give_dict_vectorizers_matrices_bit_for_bit():
    rng = np.random.default_rng(3)
    names = [f"w{i}" for i in range(60)] + ["a b", "é", "Z", "w1_w2"]

    def rows(n):
        out = []
        for _ in range(n):
            chosen = rng.choice(len(names), size=rng.integers(0, 9), replace=False)
            # ints, floats, explicit zeros, numpy numbers and booleans, as DictVectorizer takes them
            kinds = [int(rng.integers(0, 4)), float(rng.normal()), 0, np.float32(1.5), True]
            out.append({names[j]: kinds[k % len(kinds)] for k, j in enumerate(chosen)})
        return out

    train, test = rows(40), rows(15) + [{"never seen": 2.0}, {}]
    _same_as_dict_vectorizer(train, test)
    _same_as_dict_vectorizer([{3: 1.0, 1: 2}, {2: 0.5}], [{1: 1, 9: 4}])  # integer feature names


def test_other_mappings_are_read_by_dict_vectorizer_itself():
    # a str value is a category ("colour=red"), a list several; the fast path leaves them to it
    feat = _same_as_dict_vectorizer([{"colour": "red", "n": 2}, {"colour": "blue"}, {"tags": ["x", "y"]}],
                                    [{"colour": "red", "tags": ["y", "z"]}])
    assert feat.get_feature_names_out().tolist() == ["colour=blue", "colour=red", "n", "tags=x", "tags=y"]
    with pytest.raises(InputError, match="all str, or all numbers"):  # names of two types
        Precomputed().fit([{"a": 1, 2: 1}])
