"""The compiled text-to-CSR path gives exactly scikit-learn's matrices (textcw.features.native)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.utils import murmurhash3_32

from textcw.features import native
from textcw.features.hashing import hashing
from textcw.features.params import SAFE_TOKEN_PATTERNS
from textcw.features.text import WordCounts, bigram_counts, binary_bow

EDGE_DOCS = [
    "Hello World hello, it's a TEST_case 12 x y",
    "",
    "   \t\n ",
    "naïve café Straße ΣΊΣΥΦΟΣ ok",  # non-ASCII: scikit-learn's own path, row put in place
    "a" * 10_000 + " tail",  # one very long token
    b"bytes DOC here \xff\xfe invalid utf-8",
    b"plain ascii bytes",
    "under_score x1 1x __ -- a-b a.b",
    "sep\x1cby\x1dinformation\x1eseparators\x1fend",  # whitespace to Python's \s
    "UPPER lower MiXeD",
]


def assert_same(ours, theirs):
    ours, theirs = sp.csr_matrix(ours), sp.csr_matrix(theirs)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert np.array_equal(ours.indptr, theirs.indptr)
    assert np.array_equal(ours.indices, theirs.indices)
    assert np.array_equal(ours.data, theirs.data)


def sklearn_hashing(feat):
    return HashingVectorizer(**feat.get_params()).transform


HASHING_PARAMS = [
    {},
    {"alternate_sign": True, "binary": False},
    {"ngram_range": (1, 3), "binary": False},
    {"ngram_range": (2, 2)},
    {"norm": "l2", "binary": False},
    {"norm": "l1", "alternate_sign": True, "binary": False},
    {"lowercase": False},
    {"dtype": np.float32, "n_features": 1000},
    {"n_features": 7},  # not a power of two
    {"strip_accents": "unicode"},
    *({"token_pattern": p, "binary": False} for p in SAFE_TOKEN_PATTERNS),
]


@pytest.mark.parametrize("params", HASHING_PARAMS)
def test_hashing_matches_scikit_learn_on_edge_cases(params):
    feat = hashing(**params)
    assert native.supports(feat)
    assert_same(feat.transform(EDGE_DOCS), sklearn_hashing(feat)(EDGE_DOCS))


@pytest.mark.parametrize("make", [binary_bow, bigram_counts])
@pytest.mark.parametrize("params", [{}, {"lowercase": False}, {"ngram_range": (1, 3)},
                                    *({"token_pattern": p} for p in SAFE_TOKEN_PATTERNS)])
def test_vocabulary_transform_matches_scikit_learn(make, params):
    feat = make(**params).fit(EDGE_DOCS + ["hello world under_score tail extra words ΣΊΣΥΦΟΣ"])
    assert native.supports(feat)
    assert_same(feat.transform(EDGE_DOCS), CountVectorizer.transform(feat, EDGE_DOCS))


@pytest.fixture(scope="module")
def newsgroups_docs():
    from textcw.corpus import newsgroups

    return list(newsgroups.load("all", "train").data[:1500])


def test_newsgroups_documents_give_identical_matrices(newsgroups_docs):
    docs = newsgroups_docs
    assert any(not d.isascii() for d in docs) and any(d.isascii() for d in docs)
    for params in ({}, {"ngram_range": (1, 2), "alternate_sign": True, "binary": False}):
        feat = hashing(**params)
        assert_same(feat.transform(docs), sklearn_hashing(feat)(docs))
    bow = bigram_counts(min_df=2).fit(docs[:1000])
    assert_same(bow.transform(docs), CountVectorizer.transform(bow, docs))


_ALPHABET = st.sampled_from(list("abcXYZ019_ -.,'\t\n\x0b\x0c\r\x1c\x1f!é\u00b2ßΣ\u3000"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(_ALPHABET, max_size=40), min_size=1, max_size=6),
       st.sampled_from(SAFE_TOKEN_PATTERNS), st.integers(1, 3), st.booleans(), st.booleans())
def test_random_strings_give_identical_matrices(docs, pattern, high, lowercase, alternate_sign):
    feat = hashing(token_pattern=pattern, ngram_range=(1, high), lowercase=lowercase,
                   alternate_sign=alternate_sign, binary=False, n_features=64)
    assert_same(feat.transform(docs), sklearn_hashing(feat)(docs))
    try:
        bow = WordCounts(token_pattern=pattern, ngram_range=(1, high), lowercase=lowercase).fit(docs)
    except Exception:  # no word at all in the documents: nothing to look up
        return
    assert_same(bow.transform(docs[::-1]), CountVectorizer.transform(bow, docs[::-1]))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=40))
def test_the_hash_is_murmurhash3_of_the_bytes(data):
    buf = np.frombuffer(data, dtype=np.uint8)
    assert native._murmur3(buf, 0, len(buf)) == murmurhash3_32(data, seed=0, positive=False)


def test_text_block_is_a_sequence_of_documents_and_pickles():
    docs = ["first doc", "", "Straße two", "last"]
    raw = [d.encode("utf-8") for d in docs]
    offsets = np.cumsum([0] + [len(r) for r in raw])
    block = native.TextBlock(np.frombuffer(b"".join(raw), dtype=np.uint8), offsets)
    assert len(block) == 4 and list(block) == docs and block[-1] == "last" and block[1:3] == docs[1:3]
    assert not block.ascii
    with pytest.raises(IndexError):
        block[4]
    again = pickle.loads(pickle.dumps(block))
    assert list(again) == docs and list(block.take([3, 0])) == ["last", "first doc"]
    feat = hashing()
    assert_same(feat.transform(block), sklearn_hashing(feat)(docs))
    bow = binary_bow().fit(docs)
    assert_same(bow.transform(block), CountVectorizer.transform(bow, docs))


def test_bytes_in_an_encoding_that_is_not_ascii_go_to_scikit_learn():
    docs = ["plain words here".encode("utf-16"), b"ascii words"]
    feat = hashing(encoding="utf-16", decode_error="ignore")
    block, others = native.ascii_block(docs, "utf-16")
    assert others.tolist() == [0, 1] and len(block.buf) == 0
    assert_same(feat.transform(docs), sklearn_hashing(feat)(docs))


def test_settings_the_kernels_do_not_cover_use_scikit_learn():
    assert not native.supports(hashing(stop_words="english"))
    assert not native.supports(hashing(analyzer="char", ngram_range=(2, 3)))
    for feat in (hashing(stop_words="english"), hashing(analyzer="char_wb", ngram_range=(2, 3))):
        assert_same(feat.transform(EDGE_DOCS), sklearn_hashing(feat)(EDGE_DOCS))


def test_a_pickled_vocabulary_featurizer_drops_and_rebuilds_its_table():
    bow = binary_bow().fit(["alpha beta", "gamma delta"])
    first = bow.transform(["beta gamma unknown"])
    assert "_native_table" in bow.__dict__
    copy = pickle.loads(pickle.dumps(bow))
    assert "_native_table" not in copy.__dict__
    assert_same(copy.transform(["beta gamma unknown"]), first)
    bow.fit(["other words entirely"])  # a new vocabulary, a new table
    assert bow.transform(["beta gamma"]).nnz == 0 and bow.transform(["other"]).nnz == 1


def test_the_row_sort_is_a_sort():
    # rows of more than 64 keys are heap-sorted in the kernel; duplicates and every length kept
    from textcw.features._native_kernels import _heapsort

    rng = np.random.default_rng(0)
    for n in (0, 1, 2, 3, 64, 65, 200, 1000):
        keys = rng.integers(-5, 40 if n < 100 else 10**9, size=n + 3).astype(np.int64)
        work = keys.copy()
        _heapsort(work, n)
        assert work[:n].tolist() == sorted(keys[:n].tolist()) and work[n:].tolist() == keys[n:].tolist()


@pytest.mark.parametrize("high", [1, 2, 63, 64, 127, 128, 2**21, 2**40])
@pytest.mark.parametrize("bunched", [False, True])
def test_a_row_s_keys_are_sorted_by_buckets_then_insertion_whatever_their_range(high, bunched):
    # _sort_keys: insertion sort below BUCKETED_ROW keys, a counting pass on the top bits then
    # insertion sort, or heapsort where the buckets are too full for SORT_STEPS moves a key;
    # keys are >= 0 (column * 2 + sign). `bunched`: all keys small but one, so most share a bucket.
    from textcw.features._native_kernels import BUCKETED_ROW, SORT_BUCKETS, SORT_STEPS, _sort_keys

    rng = np.random.default_rng(high)
    lengths = (0, 1, BUCKETED_ROW - 1, BUCKETED_ROW, BUCKETED_ROW + 1, 40, 2 * SORT_STEPS + 1, 300,
               SORT_STEPS * SORT_BUCKETS + 1, 20_000)
    for n in lengths:
        keys = rng.integers(0, high, size=n + 3).astype(np.int64)
        if bunched and n:
            keys[:n] %= max(1, high // SORT_BUCKETS)
            keys[n // 2] = high
        work, spare, counts = keys.copy(), np.full(n + 3, -7, dtype=np.int64), np.empty(SORT_BUCKETS + 1, np.int64)
        _sort_keys(work, n, spare, counts)
        assert work[:n].tolist() == sorted(keys[:n].tolist()), n
        assert work[n:].tolist() == keys[n:].tolist()  # past the row: untouched


def test_documents_of_every_length_give_scikit_learn_s_matrix():
    # rows from one token to past the heapsort's threshold, with and without repeated words
    from textcw.features._native_kernels import SORT_BUCKETS

    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(50_000)]
    docs = [" ".join(rng.choice(words[:size], size=n)) for n in (1, 5, 15, 16, 17, 40, 500, 64 * SORT_BUCKETS + 50)
            for size in (3, 50_000)]  # 3 words: long rows of three keys, heap-sorted
    for params in ({}, {"alternate_sign": True, "binary": False, "n_features": 1000}):
        feat = hashing(**params)
        assert_same(feat.transform(docs), sklearn_hashing(feat)(docs))
    bow = bigram_counts().fit(docs)
    assert_same(bow.transform(docs), CountVectorizer.transform(bow, docs))