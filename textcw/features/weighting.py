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
imports as the bag of words does (:mod:`textcw.portable`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfTransformer
from sklearn.preprocessing import normalize

from textcw.errors import InputError
from textcw.features.text import _COMMON, WordCounts, _tuples

__all__ = ["TfidfWords", "tfidf"]


class TfidfWords(WordCounts):
    """Sublinear TF-IDF of the word counts, each document scaled to unit length (module
    docstring). Takes the ``CountVectorizer`` parameters :class:`WordCounts` takes
    (``ngram_range``, ``min_df``, ...); ``binary=True`` weighs presence by idf instead of log
    counts."""

    def fit_transform(self, raw_documents, y=None):
        counts = super().fit_transform(raw_documents, y)
        # scikit-learn's smoothed idf, kept as a plain list of floats: JSON, so that the feature
        # cache can store the fitted featurizer and an export needs no pickle
        self.idf_ = TfidfTransformer(smooth_idf=True).fit(counts).idf_.tolist()
        return self._weigh(counts)

    def transform(self, raw_documents):
        return self._weigh(super().transform(raw_documents))

    def _weigh(self, counts) -> sp.csr_matrix:
        idf = np.asarray(self.idf_, dtype=np.float64)
        if idf.ndim != 1 or idf.shape[0] != counts.shape[1] or not np.all(np.isfinite(idf) & (idf > 0)):
            raise InputError(f"the tfidf featurizer's idf weights do not fit its vocabulary of "
                             f"{counts.shape[1]} words; refit the featurizer")
        X = sp.csr_matrix(counts, dtype=np.float64, copy=True)
        # One canonical storage order before any arithmetic: CountVectorizer.fit_transform
        # returns rows whose column indices are unsorted (it renumbers the vocabulary after
        # counting), transform (compiled or scikit-learn's) returns them sorted. The row norms
        # below are sums of floats, whose rounding depends on the order they are added in, so
        # without this fit_transform and transform of the same documents differed in the last
        # bit. Explicit zeros and duplicates go too (a count is never 0 in the weighted matrix).
        X.sum_duplicates()
        X.eliminate_zeros()
        X.sort_indices()
        np.log(X.data, out=X.data)
        X.data += 1.0
        X.data *= idf[X.indices]  # in place: keeps the sorted storage (a product with diags
        #                           need not)
        if X.shape[0] == 0:
            # no documents: the empty (0 x width) matrix every featurizer gives; scikit-learn's
            # normalize refuses an array with 0 samples
            return X.astype(self.dtype, copy=False)
        return normalize(X, norm="l2", copy=False).astype(self.dtype, copy=False)


def tfidf(**params) -> TfidfWords:
    """Sublinear TF-IDF of words, unit length (the default for text corpora)."""
    return TfidfWords(**{**_COMMON, **_tuples(params)})
