"""``tfidf``: word counts weighted for the confidence-weighted learners, the default featurizer
of text corpora.

Each document becomes ``(1 + log count) * idf`` per word, scaled to unit Euclidean length:
scikit-learn's ``TfidfVectorizer(sublinear_tf=True)`` (Manning, Raghavan and Schütze,
*Introduction to Information Retrieval*, 2008, sections 6.2-6.4.1: sublinear tf scaling, idf
``1 + log((1 + n) / (1 + df))``, cosine normalisation), computed from the counts of
:class:`~textcw.features.text.WordCounts` and the idf of scikit-learn's ``TfidfTransformer``.

Why this and not the papers' binary bag of words: with binary features every word a document
contains weighs the same, so a rare, telling word counts no more than "the" or a mail header's
"received"; idf gives each word a weight that falls with the number of documents it occurs in,
and ``1 + log count`` lets a repeated word count more, but not linearly. The CW and SCW updates
are unchanged by scaling a whole document (their constraint ``Pr[y w.x >= 0] >= eta`` does not
depend on the length of ``x``), so for them only the relative weights within a document
matter; AROW compares ``x' Sigma x`` with its ``r``, and unit length puts every document on one
scale there. Measured on held-out text tasks and the papers' corpora in
docs/guide/text-features.md.

The fitted state is the vocabulary (``vocabulary_``) and the idf weights (``idf_``, a list of
floats), plain data: the feature cache keeps the fitted featurizer and the model exports and
imports as the bag of words does (:mod:`textcw.portable`). A pickle (a saved model) holds the
weights as one float64 array, as it holds the vocabulary (:mod:`textcw.features.vocabulary`):
a list of 130,107 floats is as many objects for joblib's pure-Python unpickler, an array is one
block of bytes. ``transform`` weighs with that array, never with the list.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.preprocessing import normalize

from textcw.errors import InputError
from textcw.features.text import _COMMON, WordCounts, _tuples
from textcw.features.vocabulary import derived, remember

__all__ = ["IDF_ARRAY", "TfidfWords", "sublinear_tf", "tfidf", "unit_rows"]

IDF_ARRAY = "textcw.idf-array/1"  # the first item of pickled idf weights (and its version)


class TfidfWords(WordCounts):
    """Sublinear TF-IDF of the word counts, each document scaled to unit length (module
    docstring). Takes the ``CountVectorizer`` parameters :class:`WordCounts` takes
    (``ngram_range``, ``min_df``, ...); ``binary=True`` weighs presence by idf instead of log
    counts."""

    # ``textcw train`` lets short training documents choose unigrams or uni+bigrams for this
    # featurizer when no ngram_range is given (textcw.learners.ngram_choice)
    ngram_choice = True

    def fit_transform(self, raw_documents, y=None):
        counts = super().fit_transform(raw_documents, y)
        # scikit-learn's smoothed idf, kept as a plain list of floats: JSON, so that the feature
        # cache can store the fitted featurizer and an export needs no pickle
        self.idf_ = TfidfTransformer(smooth_idf=True).fit(counts).idf_.tolist()
        return self._weigh(counts)

    def transform(self, raw_documents):
        return self._weigh(super().transform(raw_documents))

    def __getstate__(self):
        state = super().__getstate__()  # a copy, the vocabulary packed
        idf = state.get("idf_")
        if type(idf) is list and all(type(w) is float for w in idf):  # exactly a list of floats
            state["idf_"] = (IDF_ARRAY, np.array(idf, dtype=np.float64))
        return state

    def __setstate__(self, state):
        weights = _unpack_idf(state.get("idf_"))
        if weights is not None:
            state = {**state, "idf_": weights.tolist()}  # the same floats, bit for bit
        super().__setstate__(state)
        if weights is not None:
            remember(self, "idf_", self.idf_, weights)

    def _weigh(self, counts) -> sp.csr_matrix:
        # as an array once per fitted idf_ (as loaded, or made from the list on first use), not
        # once per call: a list of 130,107 floats takes longer to convert than a short document
        # takes to featurize
        idf = derived(self, "idf_", self.idf_, lambda weights: np.asarray(weights, dtype=np.float64))
        if idf.ndim != 1 or idf.shape[0] != counts.shape[1] or not np.all(np.isfinite(idf) & (idf > 0)):
            raise InputError(f"the tfidf featurizer's idf weights do not fit its vocabulary of "
                             f"{counts.shape[1]} words; refit the featurizer")
        X = sublinear_tf(counts)
        X.data *= idf[X.indices]  # in place: keeps the sorted storage (a product with diags
        #                           need not)
        return unit_rows(X, self.dtype)


def sublinear_tf(counts) -> sp.csr_matrix:
    """``1 + log count`` of each non-zero of ``counts``, as a new float64 CSR matrix in one
    canonical storage order (the weighting of :mod:`textcw.features.weighting` and
    :mod:`textcw.features.hashed_tfidf`, before the idf).

    The order matters: CountVectorizer.fit_transform returns rows whose column indices are
    unsorted (it renumbers the vocabulary after counting), transform (compiled or
    scikit-learn's) returns them sorted. The row norms of :func:`unit_rows` are sums of floats,
    whose rounding depends on the order they are added in, so without this fit_transform and
    transform of the same documents differed in the last bit. Explicit zeros and duplicates go
    too (a count is never 0 in the weighted matrix).
    """
    X = sp.csr_matrix(counts, dtype=np.float64, copy=True)
    X.sum_duplicates()
    X.eliminate_zeros()
    X.sort_indices()
    np.log(X.data, out=X.data)
    X.data += 1.0
    return X


def unit_rows(X, dtype) -> sp.csr_matrix:
    """``X`` (from :func:`sublinear_tf`, weighted) with rows of unit Euclidean length, as ``dtype``."""
    if X.shape[0] == 0:
        # no documents: the empty (0 x width) matrix every featurizer gives; scikit-learn's
        # normalize refuses an array with 0 samples
        return X.astype(dtype, copy=False)
    return normalize(X, norm="l2", copy=False).astype(dtype, copy=False)

def _unpack_idf(value) -> np.ndarray | None:
    """The weights of an ``idf_`` pickled as an array (``TfidfWords.__getstate__``), else None."""
    if not (type(value) is tuple and len(value) == 2 and isinstance(value[0], str) and value[0] == IDF_ARRAY):
        return None
    weights = value[1]
    if not (isinstance(weights, np.ndarray) and weights.ndim == 1 and weights.dtype == np.float64):
        raise ValueError("the pickled idf weights are not a vector of float64")
    return weights


def tfidf(**params) -> TfidfWords:
    """Sublinear TF-IDF of words, unit length (the default for text corpora)."""
    return TfidfWords(**{**_COMMON, **_tuples(params)})
