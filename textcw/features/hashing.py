"""``hashing``: bag of words into a fixed number of columns, with no vocabulary.

scikit-learn's ``HashingVectorizer`` maps each token to a column by a hash (MurmurHash3), so
``transform`` needs nothing learned: documents can be featurized chunk by chunk, in any order,
on any machine, and fed to ``partial_fit`` with memory that stays flat as the stream grows (the
out-of-core setting of the JMLR 2012 large-scale experiments). The price is collisions: with
the default 2**20 columns and the vocabularies of the papers' corpora (up to a few hundred
thousand words) a handful of words share a column.

Defaults follow ``binary-bow`` (the papers' representation): ``binary=True``, no norm, and
``alternate_sign=False``: scikit-learn's default random sign lets colliding counts cancel in
expectation, but it makes features negative, which a bag of words (counts, ``binary=False``)
should not be. Any ``HashingVectorizer`` parameter can be overridden (``n_features``,
``ngram_range``, ``binary``, ...). Bytes are decoded as UTF-8 with undecodable bytes replaced.
"""

from __future__ import annotations

import numpy as np
from sklearn.feature_extraction.text import HashingVectorizer

DEFAULTS = {
    "n_features": 2**20,
    "alternate_sign": False,
    "binary": True,
    "norm": None,
    "dtype": np.float64,
    "decode_error": "replace",
}


def hashing(**params) -> HashingVectorizer:
    """A ``HashingVectorizer`` with the defaults above."""
    return HashingVectorizer(**{**DEFAULTS, **params})
