"""Learning a vocabulary in the compiled kernels (textcw.features.native.learn) gives exactly
scikit-learn's fitted featurizer: the same terms in the same dict order, the same columns, the
same matrix (values, index dtypes, sparse class) and the same pickle."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from textcw.errors import InputError
from textcw.features import native
from textcw.features.params import SAFE_TOKEN_PATTERNS
from textcw.features.text import WordCounts, bigram_counts, binary_bow
from textcw.features.weighting import tfidf

# Text where Python's Unicode rules differ from ASCII ones, between plain ASCII documents: each
# non-ASCII document is analysed by scikit-learn in its place, and the numbering of terms first
# seen there must interleave with the kernels' numbering exactly.
UNICODE_DOCS = [
    "Hello World hello, it's a TEST_case 12 x y",
    "naïve café Straße STRASSE strasse ΣΊΣΥΦΟΣ σίσυφος ok",  # ß, final sigma
    "",
    "   \t\n ",
    "\u212a kelvin K k \u0130stanbul istanbul",  # KELVIN SIGN and dotted I lowercase to ASCII
    "digits \u0663\u0664 \u0661 x\u00b2 \u2460 mixed1\u0662",  # Arabic-Indic digits, superscripts
    "sep\x1cby\x1dinformation\x1eseparators\x1fend \u3000ideographic\u2028line\u0085next",
    b"bytes DOC here \xff\xfe invalid utf-8 hello",
    b"plain ascii bytes hello world",
    "lone \ud800 surrogate \udfff and pair \ud83d\ude00 emoji \U0001f600 end",
    "a" * 5_000 + " tail hello",
    "under_score x1 1x __ -- a-b a.b hello",
    "\u00e9t\u00e9 e\u0301te\u0301 \ufb01ne fine",  # precomposed, combining, a ligature
    "UPPER lower MiXeD world",
    "only ascii again: world hello tail",
]


def fit(make, docs, compiled: bool, monkeypatch):
    """A featurizer made by ``make`` fitted on ``docs``, through the kernels or scikit-learn's own
    counting (``native.learn`` is refused in the latter, so the test cannot pass by accident)."""
    feat = make()
    with monkeypatch.context() as patch:
        patch.setattr(WordCounts, "_compiled", lambda self, documents: compiled)
        if not compiled:
            patch.setattr(native, "learn", lambda *a: pytest.fail("scikit-learn's fit went through the kernels"))
        X = feat.fit_transform(docs)
    return feat, X


def assert_same_fit(make, docs, monkeypatch):
    ours, X = fit(make, docs, True, monkeypatch)
    theirs, Y = fit(make, docs, False, monkeypatch)
    assert list(ours.vocabulary_.items()) == list(theirs.vocabulary_.items())  # the dict order too
    assert type(X) is type(Y) and X.dtype == Y.dtype and X.shape == Y.shape
    assert X.indices.dtype == Y.indices.dtype and X.indptr.dtype == Y.indptr.dtype
    assert np.array_equal(X.indptr, Y.indptr) and np.array_equal(X.indices, Y.indices)
    assert np.array_equal(X.data, Y.data)
    assert pickle.dumps(ours) == pickle.dumps(theirs)
    return ours, X


PARAMS = [
    {},
    {"lowercase": False},
    {"ngram_range": (1, 3)},
    {"ngram_range": (2, 3)},  # no unigrams: numbering starts with the bigrams
    {"min_df": 2},
    {"max_df": 0.5, "ngram_range": (1, 2)},
    {"max_features": 7, "ngram_range": (1, 2)},
    {"dtype": np.float32},
    {"strip_accents": "unicode"},
    {"strip_accents": "ascii", "lowercase": False},
    *({"token_pattern": p, "ngram_range": (1, 2)} for p in SAFE_TOKEN_PATTERNS),
]


@pytest.mark.parametrize("make", [binary_bow, bigram_counts, tfidf])
@pytest.mark.parametrize("params", PARAMS)
def test_the_compiled_fit_is_scikit_learns_on_unicode_text(make, params, monkeypatch):
    feat, _ = assert_same_fit(lambda: make(**params), UNICODE_DOCS, monkeypatch)
    assert native.supports(feat)
    # and the same documents in the other order: a term's number follows where it is first seen
    assert_same_fit(lambda: make(**params), UNICODE_DOCS[::-1], monkeypatch)


def test_the_compiled_fit_runs_the_kernels(monkeypatch):
    calls = []
    learn = native.learn
    monkeypatch.setattr(native, "learn", lambda *a: calls.append(len(a[1])) or learn(*a))
    monkeypatch.setattr(native, "small_before_kernels", lambda docs: False)
    docs = ["alpha beta", "beta gamma"] * 5
    feat = binary_bow().fit(docs)
    assert calls == [10] and feat.vocabulary_ == {"alpha": 0, "beta": 1, "gamma": 2}
    calls.clear()
    feat.transform(docs)  # a fitted vocabulary is looked up, not learned
    assert calls == []


def test_a_text_block_is_learned_as_its_documents(monkeypatch):
    docs = ["first doc here", "", "Straße two doc", "last first"]
    raw = [d.encode("utf-8") for d in docs]
    block = native.TextBlock(np.frombuffer(b"".join(raw), dtype=np.uint8), np.cumsum([0] + [len(r) for r in raw]))
    ours, X = fit(bigram_counts, block, True, monkeypatch)
    theirs, Y = fit(bigram_counts, docs, False, monkeypatch)
    assert list(ours.vocabulary_.items()) == list(theirs.vocabulary_.items())
    assert (X != Y).nnz == 0 and pickle.dumps(ours) == pickle.dumps(theirs)


def test_many_terms_grow_the_table(monkeypatch):
    # 60,000 distinct terms, past the first table (8,192 terms) and its term bytes several times
    rng = np.random.default_rng(0)
    words = [f"w{n:x}z" for n in rng.permutation(60_000)]
    docs = [" ".join(words[i:i + 300]) + " common" for i in range(0, len(words), 300)]
    feat, X = assert_same_fit(bigram_counts, docs, monkeypatch)
    assert len(feat.vocabulary_) == 60_000 + 1 + 60_000 - 200 + 200  # words, common, bigrams
    assert X.shape == (200, len(feat.vocabulary_))


def test_documents_without_a_word_are_refused_as_before(monkeypatch):
    for compiled in (True, False):
        with pytest.raises(InputError) as err:
            fit(binary_bow, ["!!", "a", "", "ü"], compiled, monkeypatch)
        assert str(err.value).startswith("the bag-of-words featurizer found no words in the 4 training documents")


def test_the_learned_terms_follow_scikit_learns_order(monkeypatch):
    # within a document, all unigrams come before any bigram (scikit-learn's _word_ngrams)
    feat, X = fit(bigram_counts, ["bb aa bb", "cc aa"], True, monkeypatch)
    assert list(feat.vocabulary_) == ["bb", "aa", "bb aa", "aa bb", "cc", "cc aa"]
    assert feat.vocabulary_ == {"aa": 0, "aa bb": 1, "bb": 2, "bb aa": 3, "cc": 4, "cc aa": 5}
    assert sp.csr_matrix(X).toarray().tolist() == [[1, 1, 2, 1, 0, 0], [1, 0, 0, 0, 1, 1]]


_ALPHABET = st.sampled_from(list("abcXYZ019_ -.,'\t\n\x0b\x0c\r\x1c\x1f!é\u00b2ßΣ\u3000\u212a\ud800"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(_ALPHABET, max_size=40), min_size=1, max_size=6),
       st.sampled_from(SAFE_TOKEN_PATTERNS), st.integers(1, 3), st.integers(0, 2), st.booleans())
def test_random_strings_are_learned_as_scikit_learn_learns_them(docs, pattern, high, low_less, lowercase):
    low = max(1, high - low_less)
    make = lambda: bigram_counts(token_pattern=pattern, ngram_range=(low, high), lowercase=lowercase)  # noqa: E731
    with pytest.MonkeyPatch.context() as monkeypatch:
        try:
            theirs, _ = fit(make, docs, False, monkeypatch)
        except InputError:  # no word at all: the compiled fit must refuse them too
            with pytest.raises(InputError):
                fit(make, docs, True, monkeypatch)
            return
        ours, _ = assert_same_fit(make, docs, monkeypatch)
        assert list(ours.vocabulary_.items()) == list(theirs.vocabulary_.items())


@pytest.mark.corpus
def test_newsgroups_training_split_is_learned_bit_for_bit(data_home, monkeypatch):
    from textcw.corpus import newsgroups

    docs = newsgroups.load("all", "train").data
    assert any(not d.isascii() for d in docs)  # both paths, interleaved
    feat, X = assert_same_fit(tfidf, docs, monkeypatch)
    assert len(feat.vocabulary_) == 130_107 and X.shape == (11_314, 130_107)
    assert_same_fit(lambda: bigram_counts(min_df=2), docs[:2000], monkeypatch)
