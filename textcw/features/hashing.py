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
should not be. ``HashingVectorizer`` parameters can be overridden (``n_features``,
``ngram_range``, ``binary``, ...) within the limits of :mod:`textcw.features.params`. Bytes are
decoded as UTF-8 with undecodable bytes replaced.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

from textcw.errors import InputError
from textcw.features import native
from textcw.features.params import check_text_params
from textcw.features.text import check_documents
from textcw.untrusted import one_line

__all__ = ["DEFAULTS", "Hashing", "hashing"]

DEFAULTS = {
    "n_features": 2**20,
    "alternate_sign": False,
    "binary": True,
    "norm": None,
    "dtype": np.float64,
    "decode_error": "replace",
}


class Hashing(HashingVectorizer):
    """scikit-learn's ``HashingVectorizer`` that refuses non-text documents with a clear error.

    A featurizer of precomputed vectors or images would otherwise fail deep inside
    scikit-learn (``'dict' object has no attribute 'lower'``). Only sequences are checked, so
    that a generator of documents streams through untouched. Parameters are those
    :func:`~textcw.features.params.check_text_params` allows.
    """

    def validate_params(self) -> None:
        """Refuse unsafe or invalid parameters (:mod:`textcw.features.params`)."""
        check_text_params(self, "hashing")

    def __sklearn_tags__(self):
        # Stateless: it transforms without being fitted. scikit-learn says so of its own
        # HashingVectorizer from 1.7 on; 1.6 (admitted) tags every estimator requires_fit=True,
        # and sharded training would then featurize the whole split in the driver before any
        # shard starts, instead of letting each shard featurize its own documents.
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags

    def fit(self, X, y=None):
        self.validate_params()
        check_documents(X, "hashing")
        return super().fit(X, y)

    def transform(self, X):
        if isinstance(X, native.TextBlock):
            return self._native(X) if native.supports(self) else super().transform(list(X))
        check_documents(X, "hashing")
        if hasattr(X, "__len__") and len(X) == 0:
            # scikit-learn's FeatureHasher peeks at the first document and raises StopIteration
            # on an empty list; no documents are simply no rows.
            return sp.csr_matrix((0, self.n_features), dtype=self.dtype)
        try:
            if isinstance(X, (list, tuple, np.ndarray)) and native.supports(self) \
                    and not native.small_before_kernels(X):
                return self._native(X)
            return super().transform(X)
        except (AttributeError, TypeError) as exc:  # a non-text item in a stream of documents
            raise InputError(f"hashing featurizes text (str or bytes documents): {one_line(exc)}") from None

    def _native(self, X):
        return native.transform(self, X, lambda block: native.hash_block(block, self),
                                super().transform)

    def kernel_rows(self, X: list) -> native.KernelRows | None:
        """The rows :meth:`transform` makes of the list of documents ``X``, as
        :class:`~textcw.features.native.KernelRows` (no matrix built, no contract check to run
        again: what a service that scores each batch with a kernel pays per call), or ``None``
        when the kernels would not make them (then :meth:`transform`)."""
        if not isinstance(X, list) or not X or not native.supports(self) or native.small_before_kernels(X):
            return None
        check_documents(X, "hashing")
        try:
            return native.kernel_rows(self, X, lambda block: native.hash_block(block, self), super().transform)
        except (AttributeError, TypeError) as exc:  # as transform words it
            raise InputError(f"hashing featurizes text (str or bytes documents): {one_line(exc)}") from None


def hashing(**params) -> Hashing:
    """The ``hashing`` featurizer: a ``HashingVectorizer`` with the defaults above."""
    return Hashing(**{**DEFAULTS, **params})
