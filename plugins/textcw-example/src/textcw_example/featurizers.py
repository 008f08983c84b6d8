"""``char-ngrams``: binary character n-grams taken within word boundaries.

Character n-grams make a document representation that tolerates misspellings, inflection and
unknown words, since related word forms share most of their n-grams (Cavnar and Trenkle,
"N-Gram-Based Text Categorization", SDAIR 1994). scikit-learn's ``analyzer="char_wb"`` pads
each word with a space and takes n-grams inside it only, so no n-gram spans two words.

Features are binary (present or absent), the representation mistake-driven learners such as
Winnow were studied with, and the one the textcw papers use for words.
"""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

DEFAULTS = {
    "analyzer": "char_wb",
    "ngram_range": (2, 4),
    "binary": True,
    "lowercase": True,
    "dtype": np.float64,
    # Old corpora mix encodings; undecodable bytes become U+FFFD instead of failing.
    "decode_error": "replace",
}


def char_ngrams(**params) -> CountVectorizer:
    """A ``CountVectorizer`` of binary character n-grams within word boundaries.

    Parameters
    ----------
    **params
        Any ``CountVectorizer`` parameter, overriding the defaults: ``analyzer="char_wb"``,
        ``ngram_range=(2, 4)``, ``binary=True``, ``lowercase=True``, ``dtype=float64``,
        ``decode_error="replace"``. ``ngram_range`` may be a list (as
        ``--featurizer-param ngram_range=[3,5]`` gives it); it is made a tuple.

    Returns
    -------
    sklearn.feature_extraction.text.CountVectorizer
        Unfitted.

    Examples
    --------
    >>> X = char_ngrams(ngram_range=(2, 2)).fit_transform(["ab cd"])
    >>> X.shape, float(X.sum())
    ((1, 6), 6.0)
    """
    params = {**DEFAULTS, **params}
    if isinstance(params["ngram_range"], list):
        # scikit-learn accepts only a tuple; JSON (the command line) has only lists.
        params["ngram_range"] = tuple(params["ngram_range"])
    return CountVectorizer(**params)
