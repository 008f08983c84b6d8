"""The rows of the documents the kernels do not read are put in place as stacking and indexing
put them (textcw.features.native._put_rows): the same matrix, of the same dtypes and class."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer

from textcw.features import native
from textcw.features.hashing import hashing
from textcw.features.text import binary_bow


def stacked(X, rest, others):
    """The construction _put_rows replaces: the stack of both, rows taken back into order."""
    order = np.arange(X.shape[0], dtype=np.int64)
    order[others] = X.shape[0] + np.arange(len(others))
    return sp.vstack([X, sp.csr_matrix(rest)], format="csr")[order]


def assert_identical(ours, theirs):
    assert type(ours) is type(theirs) and ours.shape == theirs.shape
    for name in ("indptr", "indices", "data"):
        a, b = getattr(ours, name), getattr(theirs, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name


MIXED = ["plain words here", "café au lait", "", "more plain words words", "ΣΊΣΥΦΟΣ naïve x", "end"]


@pytest.mark.parametrize("docs", [MIXED, MIXED[1:2], ["é", "ß ok", "Σ"], MIXED[::-1], ["ascii"] * 3 + ["é"]])
@pytest.mark.parametrize("params", [{}, {"binary": False, "alternate_sign": True}, {"norm": "l2", "binary": False},
                                    {"dtype": np.float32, "n_features": 100}])
def test_put_rows_is_the_stack_reordered(docs, params):
    feat = hashing(**params)
    block, others = native.ascii_block(docs)
    indptr, indices, data = native.hash_block(block, feat)
    X = sp.csr_matrix((data.astype(feat.dtype), indices, indptr), shape=(len(block), feat.n_features))
    rest = HashingVectorizer.transform(feat, [docs[int(i)] for i in others])
    assert len(others)  # the path under test runs
    put = native._put_rows(X.indptr, X.indices, X.data, sp.csr_matrix(rest), others)
    assert_identical(sp.csr_matrix(put, shape=X.shape), stacked(X, rest, others))
    # the arrays themselves are of the dtypes the matrix keeps (the kernels take them as they are)
    assert put[1].dtype == put[2].dtype == np.int32


@pytest.mark.parametrize("docs", [MIXED, ["ascii only", "words"], ["é", "ß ok", "Σ"], ["", "x"]])
@pytest.mark.parametrize("params", [{}, {"binary": False}, {"alternate_sign": True}, {"ngram_range": (1, 2)}])
def test_kernel_rows_are_the_transform_arrays(docs, params):
    feat = hashing(**params)
    feat.transform(["warm the kernels up"])
    rows = feat.kernel_rows(list(docs))
    X = feat.transform(docs)
    assert isinstance(rows, native.KernelRows) and rows.shape == X.shape
    for name in ("indptr", "indices", "data"):
        mine = getattr(rows, name)
        assert mine.dtype == getattr(X, name).dtype and np.array_equal(mine, getattr(X, name)), name
    assert rows.indptr.dtype == rows.indices.dtype and rows.data.dtype == np.float64
    from textcw._csr_kernel import kernel_ready

    assert kernel_ready(rows.indptr, rows.indices, rows.data, rows.shape[1])  # the contract, by construction
    assert_identical(rows.matrix(), X)


@pytest.mark.parametrize("params", [{"norm": "l2", "binary": False}, {"dtype": np.float32},
                                    {"alternate_sign": True, "binary": False}])
def test_kernel_rows_decline_what_may_not_meet_the_contract(params):
    feat = hashing(**params)
    feat.transform(["warm the kernels up"])
    assert feat.kernel_rows(["some words", "é"]) is None


def test_kernel_rows_decline_what_transform_does_not_hand_the_kernels():
    feat = hashing()
    feat.transform(["warm the kernels up"])
    assert feat.kernel_rows(("a tuple",)) is None and feat.kernel_rows([]) is None
    assert hashing(stop_words="english").kernel_rows(["words"]) is None
    with pytest.raises(Exception, match="hashing"):
        feat.kernel_rows(["text", 3])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(st.sampled_from(list("ab cd é Σ\n")), max_size=30), min_size=1, max_size=8))
def test_featurized_batches_with_non_ascii_documents_equal_scikit_learn(docs):
    feat = hashing(n_features=32, binary=False)
    ours, theirs = feat.transform(docs), HashingVectorizer.transform(feat, docs)
    assert ours.shape == theirs.shape
    assert np.array_equal(ours.indptr, theirs.indptr) and np.array_equal(ours.indices, theirs.indices)
    assert np.array_equal(ours.data, theirs.data) and ours.dtype == theirs.dtype


def test_a_vocabulary_featurizer_puts_its_rows_in_place_too():
    bow = binary_bow().fit(MIXED)
    ours = bow.transform(MIXED)
    theirs = sp.csr_matrix(CountVectorizer.transform(bow, MIXED))
    assert len(native.ascii_block(MIXED)[1]) == 2
    assert np.array_equal(ours.indptr, theirs.indptr) and np.array_equal(ours.indices, theirs.indices)
    assert np.array_equal(ours.data, theirs.data) and ours.dtype == theirs.dtype
