"""The hashing featurizer: fixed width, no vocabulary, stateless."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import textcw
from textcw.errors import InputError
from textcw.features.hashing import hashing
from textcw.testing import check_featurizer


def test_defaults_match_a_binary_bag_of_words():
    feat = textcw.make_featurizer("hashing")
    X = feat.fit_transform(["the cat sat on the cat mat", "dogs"])
    assert X.shape == (2, 2**20) and X.dtype == np.float64
    assert X[0].nnz == 5 and set(X.data) == {1.0}  # five distinct words, binary, non-negative
    assert X[1].nnz == 1


def test_counts_when_asked_and_width_is_a_parameter():
    X = hashing(binary=False, n_features=64).transform(["cat cat cat dog"])
    assert X.shape == (1, 64) and sorted(X.data.tolist()) == [1.0, 3.0]


def test_transform_needs_no_fit_and_is_the_same_everywhere():
    docs = ["alpha beta", "gamma", b"caf\xe9 bytes are decoded with replacement"]
    a = hashing().transform(docs)
    b = hashing().fit(["something else entirely"]).transform(docs)
    assert (a != b).nnz == 0 and a.shape[0] == 3


def test_passes_the_featurizer_contract():
    check_featurizer(hashing)


def test_a_generator_of_documents_streams_through():
    X = hashing(n_features=32).transform(doc for doc in ["a b", "c"])
    assert X.shape == (2, 32)


@pytest.mark.parametrize("documents,message", [
    ([{"good": 1}], "not dict: use the corpus's default featurizer"),
    (np.zeros((2, 3)), "already numeric vectors"),
    (sp.eye(2, format="csr"), "already numeric vectors"),
    ("one string", "not a single string"),
])
def test_documents_that_are_not_text_are_a_clear_error(documents, message):
    with pytest.raises(InputError, match=message):
        hashing().fit_transform(documents)
