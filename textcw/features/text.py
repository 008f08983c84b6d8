"""Bag-of-words featurizers built on scikit-learn's ``CountVectorizer``.

- ``binary-bow``: 1 if a word occurs in the document, else 0 (the papers' main representation,
  JMLR 2012 section 7).
- ``bigram-counts``: counts of unigrams and bigrams (the Amazon sentiment features).

Both accept any ``CountVectorizer`` parameter (``min_df``, ``max_features``, ``lowercase``, ...).
Bytes are decoded as UTF-8 with undecodable bytes replaced, so any file can be featurized.
"""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

_COMMON = {"dtype": np.float64, "decode_error": "replace"}


def _tuples(params: dict) -> dict:
    # Parameters given on the command line arrive as JSON lists; scikit-learn wants tuples.
    return {k: tuple(v) if k == "ngram_range" and isinstance(v, list) else v for k, v in params.items()}


def binary_bow(**params) -> CountVectorizer:
    """Binary bag of words."""
    return CountVectorizer(**{**_COMMON, "binary": True, **_tuples(params)})


def bigram_counts(**params) -> CountVectorizer:
    """Unigram and bigram counts."""
    return CountVectorizer(**{**_COMMON, "ngram_range": (1, 2), **_tuples(params)})
