"""``hashed-tfidf``: the sublinear TF-IDF of ``tfidf`` over hashed words, so new words get columns.

``tfidf`` learns a vocabulary at ``fit`` and drops every word it did not see there: a model
served with it (``textcw serve --learn``) can never learn a word that first appears in a
correction. ``hashing`` gives every word a column (scikit-learn's ``HashingVectorizer``:
MurmurHash3 of the token, Weinberger et al., ICML 2009) but weighs every word the same. This
featurizer does both: words are hashed into ``n_features`` columns (2**20 by default) exactly as
``hashing`` hashes them (same analyzer, same compiled kernels, same parameter limits of
:mod:`textcw.features.params`, ``alternate_sign=False`` so that counts stay counts), and each
document is weighted as ``tfidf`` weighs it (Manning, Raghavan and Schütze, *Introduction to
Information Retrieval*, 2008, sections 6.2-6.4.1):

    ``w(t, d) = (1 + log tf(t, d)) * idf(t)``,  ``idf(t) = 1 + log((1 + n) / (1 + df(t)))``,

each row scaled to unit Euclidean length, where ``n`` is the number of training documents and
``df(t)`` the number of them in which column ``t`` occurs: scikit-learn's
``TfidfTransformer(sublinear_tf=True)`` fitted on the hashed counts, to the last bit.

The idf is learned per hashed column at ``fit`` and stored sparsely: the columns seen in
training (``idf_columns_``, sorted), their weights (``idf_values_``) and the weight of any
other column (``idf_unseen_``, the formula at ``df = 0``). A model file holds as many weights as
the training documents had distinct columns (about 12 bytes each), not 2**20 floats (8 MiB).

Anything read back (a pickle: :func:`textcw.persist.load`, ``joblib.load``; the attributes an
import sets: :func:`textcw.portable.import_model`) is checked before it weighs a document: the
arrays' types and shapes, columns sorted, unique and within ``n_features``, weights finite and
positive. A state that fails is refused with a :class:`~textcw.errors.ModelFileError` naming
what is wrong.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

from textcw.errors import InputError, ModelFileError
from textcw.features import native
from textcw.features.hashing import Hashing
from textcw.features.params import check_text_params
from textcw.features.text import _tuples, check_documents
from textcw.features.vocabulary import derived
from textcw.features.weighting import sublinear_tf, unit_rows
from textcw.untrusted import one_line

__all__ = ["NAME", "HashedTfidf", "check_state", "hashed_tfidf"]

NAME = "hashed-tfidf"
# The fitted state: set together by fit, checked together wherever it is read back.
_STATE = ("idf_columns_", "idf_values_", "idf_unseen_")


class HashedTfidf(Hashing):
    """Sublinear TF-IDF of hashed word counts, unit length, with a sparse idf (module docstring).

    Takes ``HashingVectorizer``'s parameters but two that the weighting fixes: ``norm`` (rows
    are scaled to unit length after weighting, as ``tfidf`` scales them) and ``alternate_sign``
    (off: the log of a count needs a positive count). ``binary=True`` weighs presence by idf
    instead of log counts, as in ``tfidf``.
    """

    # Not parameters: the inherited counting (compiled kernels and scikit-learn's transform,
    # which read these attributes) must give raw, positive counts; the weighting normalises.
    norm = None
    alternate_sign = False

    def __init__(self, *, input="content", encoding="utf-8", decode_error="replace", strip_accents=None,
                 lowercase=True, preprocessor=None, tokenizer=None, stop_words=None,
                 token_pattern=r"(?u)\b\w\w+\b", ngram_range=(1, 1), analyzer="word", n_features=2**20,
                 binary=False, dtype=np.float64):
        self.input = input
        self.encoding = encoding
        self.decode_error = decode_error
        self.strip_accents = strip_accents
        self.lowercase = lowercase
        self.preprocessor = preprocessor
        self.tokenizer = tokenizer
        self.stop_words = stop_words
        self.token_pattern = token_pattern
        self.ngram_range = ngram_range
        self.analyzer = analyzer
        self.n_features = n_features
        self.binary = binary
        self.dtype = dtype

    def validate_params(self) -> None:
        """Refuse unsafe or invalid parameters (:mod:`textcw.features.params`)."""
        check_text_params(self, NAME)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.requires_fit = True  # the idf is learned (``hashing``, its parent, needs no fit)
        return tags

    def __setattr__(self, name, value):
        # An import (textcw.portable_rebuild.set_attributes) sets fitted attributes one by one
        # with setattr, and probes the featurizer in a way that swallows errors: checking the
        # state as soon as its last part arrives refuses a tampered export at import, not at the
        # first prediction. fit sets the three at once, through __dict__, already consistent.
        super().__setattr__(name, value)
        if name in _STATE and all(part in self.__dict__ for part in _STATE):
            self._checked_state()

    # ------------------------------------------------------------------ fitting
    def fit(self, X, y=None):
        self.fit_transform(X, y)
        return self

    def fit_transform(self, X, y=None):
        self.validate_params()
        counts = self._counts(X)
        n = counts.shape[0]
        if n == 0:
            raise InputError(f"the {NAME} featurizer got no training documents")
        # each row's columns are unique (summed duplicates), so a column's count of entries is
        # the number of documents it occurs in
        columns, df = np.unique(counts.indices, return_counts=True)
        if not len(columns):
            raise InputError(
                f"the {NAME} featurizer found no words in the {n} training document{'s' if n != 1 else ''}: "
                "they are empty or hold only punctuation or one-character tokens; check that the files "
                r"hold text, or set its token_pattern parameter (e.g. '(?u)\b\w+\b')")
        # The smoothed idf as scikit-learn's TfidfTransformer computes it (the same operations in
        # the same order), so that the weights are its own. The last entry, df = 0, is the weight
        # of a column no training document touched: that of a word seen in no document, the
        # largest there is, because a new word is rare by definition (and scikit-learn gives
        # such columns this very weight when it is fitted on all 2**20 hashed columns).
        weights = np.log(float(n + 1) / (np.append(df, 0).astype(np.float64) + 1.0)) + 1.0
        self.__dict__.update(idf_columns_=columns.astype(np.int32), idf_values_=weights[:-1].copy(),
                             idf_unseen_=float(weights[-1]))
        return self._weigh(counts, self._checked_state())

    # ------------------------------------------------------------------ transforming
    def transform(self, X):
        state = self._checked_state()
        return self._weigh(self._counts(X), state)

    def kernel_rows(self, X) -> None:
        """``None``: the kernels make ``hashing``'s raw counts, which this featurizer then
        weighs, so a caller that scores rows with a kernel (the service) must use
        :meth:`transform`'s weighted rows."""
        return None

    def _counts(self, X) -> sp.csr_matrix:
        """The hashed counts (or presence, ``binary``) of ``X``, as ``hashing`` computes them."""
        if isinstance(X, native.TextBlock):
            return self._native(X) if native.supports(self) else HashingVectorizer.transform(self, list(X))
        check_documents(X, f"the {NAME} featurizer")
        if hasattr(X, "__len__") and len(X) == 0:
            return sp.csr_matrix((0, self.n_features), dtype=np.float64)
        try:
            if isinstance(X, (list, tuple, np.ndarray)) and native.supports(self) \
                    and not native.small_before_kernels(X):
                return self._native(X)
            return HashingVectorizer.transform(self, X)
        except (AttributeError, TypeError) as exc:  # a non-text item in a stream of documents
            raise InputError(f"the {NAME} featurizer featurizes text (str or bytes documents): "
                             f"{one_line(exc)}") from None

    def _weigh(self, counts, state) -> sp.csr_matrix:
        columns, values, unseen = state
        X = sublinear_tf(counts)  # as tfidf weighs counts, the same canonical order
        # the idf of each entry's column: a binary search in the sorted seen columns, the
        # unseen weight where the column is not there
        where = np.searchsorted(columns, X.indices)
        np.minimum(where, len(columns) - 1, out=where)
        X.data *= np.where(columns[where] == X.indices, values[where], unseen)
        return unit_rows(X, self.dtype)

    # ------------------------------------------------------------------ the fitted state
    def _checked_state(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(columns, values, unseen)``, checked once per fitted state (module docstring)."""
        parts = [self.__dict__.get(part) for part in _STATE]
        if all(part is None for part in parts):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"this {NAME} featurizer is not fitted yet: call fit with the training "
                                 "documents first")
        # Checked once per fitted state, remembered outside the instance's attributes (what
        # vars() shows is what an export writes). The memo holds the very objects it checked, so
        # a part replaced by a refit, a load or an assignment is checked again.
        memo = derived(self, "hashed idf checked", None, lambda _: {})
        if memo.get("parts") is None or memo["n_features"] != self.n_features \
                or any(a is not b for a, b in zip(memo["parts"], parts)):
            memo["state"] = check_state(parts[0], parts[1], parts[2], self.n_features)
            memo["parts"], memo["n_features"] = parts, self.n_features
        return memo["state"]

    def __setstate__(self, state):
        super().__setstate__(state)
        present = [part for part in _STATE if part in self.__dict__]
        if present:  # a fitted featurizer: the whole state, checked now (a pickle is untrusted)
            if len(present) != len(_STATE):
                missing = next(part for part in _STATE if part not in present)
                raise ModelFileError(f"the {NAME} featurizer's saved state lacks {missing}; the file is damaged")
            self._checked_state()


def check_state(columns, values, unseen, n_features) -> tuple[np.ndarray, np.ndarray, float]:
    """The fitted idf, checked as untrusted data; :class:`ModelFileError` names what is wrong."""
    def refuse(what: str):
        raise ModelFileError(f"the {NAME} featurizer's idf {what}; refit the featurizer or use an "
                             "undamaged model file")

    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1:
        refuse(f"cannot be checked against n_features={one_line(repr(n_features))[:40]}")
    if not (isinstance(columns, np.ndarray) and columns.ndim == 1 and columns.dtype in (np.int32, np.int64)):
        refuse("columns (idf_columns_) are not a vector of int32 or int64")
    if not (isinstance(values, np.ndarray) and values.ndim == 1 and values.dtype == np.float64):
        refuse("weights (idf_values_) are not a vector of float64")
    if len(columns) != len(values) or not len(columns):
        refuse(f"has {len(columns)} columns and {len(values)} weights; it needs one weight per column, "
               "at least one")
    if columns[0] < 0 or columns[-1] >= n_features:
        refuse(f"names columns from {int(columns[0])} to {int(columns[-1])}, outside 0..{int(n_features) - 1}")
    if not np.all(columns[1:] > columns[:-1]):
        refuse("columns are not sorted and unique")
    if not np.all(np.isfinite(values) & (values > 0)):
        refuse("weights are not all positive finite numbers")
    if isinstance(unseen, (bool, np.bool_)) or not isinstance(unseen, (float, int, np.floating, np.integer)) \
            or not (math.isfinite(unseen) and unseen > 0):
        refuse(f"weight of unseen columns (idf_unseen_) {one_line(repr(unseen))[:40]} is not a positive "
               "finite number")
    return columns, values, float(unseen)


def hashed_tfidf(**params) -> HashedTfidf:
    """Sublinear TF-IDF of words hashed into 2**20 columns, unit length, idf learned by ``fit``."""
    return HashedTfidf(**_tuples(params))
