"""``precomputed``: corpora that ship as feature vectors, passed through as CSR.

Some corpora were distributed already featurized: the Amazon "processed_acl" reviews as
``feature:count`` tokens (Blitzer et al. 2007), the ECML/PKDD 2006 spam inboxes and any
svmlight file as ``index:value`` vectors. Their own vocabulary is the representation the papers
used, so this featurizer does not re-tokenize; it only fixes the columns at ``fit``:

- a sequence of mappings ``feature -> value`` is vectorized as scikit-learn's ``DictVectorizer``
  does it (and the fitted vocabulary is one): the vocabulary is the features seen in ``fit``,
  sorted; unseen features are ignored by ``transform``. Where every value is a number (the
  corpora above), the rows are read in one walk of C-level iteration (:func:`_numeric_rows`):
  the same matrix, bit for bit, in less time than ``DictVectorizer``'s loop, which checks each
  value's type in Python; anything else
  (a str value read as a category, a list of them) takes ``DictVectorizer`` itself;
- a matrix (scipy.sparse, a 2-d array, or a list of sparse rows) keeps its columns;
  ``transform`` drops columns beyond the fitted width (features never seen in training) and
  pads a narrower matrix with zeros.

``binary=True`` replaces every non-zero value by 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import chain, repeat

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.feature_extraction import DictVectorizer
from sklearn.utils.validation import check_is_fitted

from textcw.errors import InputError
from textcw.untrusted import one_line

__all__ = ["MAPPINGS", "MATRIX", "Precomputed", "precomputed"]

MAPPINGS = "mappings"
MATRIX = "matrix"


def _kind(X) -> str:
    if sp.issparse(X):
        return MATRIX
    if isinstance(X, np.ndarray):
        if X.ndim != 2:
            raise InputError(f"precomputed expects a 2-d matrix; got an array of shape {X.shape}")
        return MATRIX
    try:
        first = next(iter(X))
    except (TypeError, StopIteration):
        raise InputError("precomputed expects a non-empty sequence of feature vectors") from None
    if isinstance(first, Mapping):
        if not all(isinstance(row, Mapping) for row in X):
            raise InputError("precomputed got a mix of feature mappings and other rows")
        return MAPPINGS
    if isinstance(first, (str, bytes)):
        raise InputError(
            "precomputed expects feature vectors (mappings feature -> value, or a matrix) but got "
            "text; featurize text with binary-bow, bigram-counts or hashing"
        )
    return MATRIX


class Precomputed(TransformerMixin, BaseEstimator):
    """Pass precomputed feature vectors through as CSR with the columns fixed at ``fit``.

    Parameters
    ----------
    binary : bool
        Replace every non-zero value by 1.

    Attributes
    ----------
    input_kind_ : {"mappings", "matrix"}
    n_features_out_ : int
        Number of output columns.
    vectorizer_ : DictVectorizer
        The vocabulary (mapping input only).
    """

    _parameter_constraints = {"binary": ["boolean"]}
    # The nested estimators fit makes, by attribute, and the method that makes each: an import
    # (textcw.portable) builds them this way and only takes their fitted attributes from the file.
    _nested_estimators = {"vectorizer_": "_make_vectorizer"}

    def __init__(self, binary: bool = False):
        self.binary = binary

    def fit(self, X, y=None):
        self.fit_transform(X)
        return self

    def fit_transform(self, X, y=None) -> sp.csr_matrix:
        """``fit(X).transform(X)`` in one pass over the mappings (the vocabulary and the matrix
        come out of the same walk; on text-sized mappings the walk is most of the time)."""
        self.input_kind_ = _kind(X)
        if self.input_kind_ != MAPPINGS:
            self.n_features_out_ = int(_check_finite(_as_matrix(X)).shape[1])
            return self.transform(X)
        vectorizer = self._make_vectorizer()
        fast = _numeric_rows(X, None)
        if fast is not None:
            out, vectorizer.feature_names_, vectorizer.vocabulary_ = fast
        else:
            try:
                out = sp.csr_matrix(vectorizer.fit_transform(X))
            except (TypeError, ValueError) as exc:
                raise _mapping_error(exc) from None
        _check_finite(out)
        self.vectorizer_, self.n_features_out_ = vectorizer, len(vectorizer.feature_names_)
        return self._binarized(out)

    def transform(self, X) -> sp.csr_matrix:
        check_is_fitted(self, "input_kind_")
        kind = _kind(X)
        if kind != self.input_kind_:
            raise InputError(
                f"precomputed was fitted on {self.input_kind_} and cannot transform {kind}; "
                "give it rows in the form it was trained on"
            )
        if kind == MAPPINGS:
            fast = _numeric_rows(X, self.vectorizer_.vocabulary_)
            try:
                # unseen features are dropped
                out = fast[0] if fast is not None else sp.csr_matrix(self.vectorizer_.transform(X))
            except (TypeError, ValueError) as exc:
                raise _mapping_error(exc) from None
        else:
            out = _fit_width(_as_matrix(X), self.n_features_out_)
        # A NaN or infinite value would silently poison every weight it touches in an online
        # learner; refuse it here, where the rows are still the user's.
        _check_finite(out)
        return self._binarized(out)

    def _binarized(self, out: sp.csr_matrix) -> sp.csr_matrix:
        if self.binary:
            out.eliminate_zeros()
            out.data[:] = 1.0
        return out

    def _make_vectorizer(self) -> DictVectorizer:
        return DictVectorizer(dtype=np.float64)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        check_is_fitted(self, "input_kind_")
        if self.input_kind_ == MAPPINGS:
            return np.asarray([str(f) for f in self.vectorizer_.feature_names_], dtype=object)
        return np.asarray([f"x{i}" for i in range(self.n_features_out_)], dtype=object)


def _numeric_rows(X, vocabulary: dict | None):
    """``(matrix, feature_names, vocabulary)`` of the mappings ``X`` as ``DictVectorizer`` gives
    them (``fit_transform`` when ``vocabulary`` is None, else ``transform`` with it), or ``None``
    when a value is not a number or the feature names do not sort: ``DictVectorizer`` then reads
    the rows itself (categories, lists) or says what is wrong.

    The keys and the values are gathered by C-level iteration over the rows (``chain``), the
    values checked as numbers by numpy's conversion of the whole list (a str, None or any other
    object gives a non-numeric dtype), and the columns looked up with one ``map`` over the keys;
    ``DictVectorizer`` does all three per value in Python. The result is the same: features
    sorted at fit, explicit zeros kept, each row's columns in increasing order, float64 values.
    """
    keys = list(chain.from_iterable(X))
    try:
        values = np.asarray(list(chain.from_iterable(row.values() for row in X)))
    except (TypeError, ValueError):  # lists of different lengths, say
        return None
    if values.dtype.kind not in "biuf" or values.shape != (len(keys),):
        return None
    feature_names = None
    if vocabulary is None:
        try:
            feature_names = sorted(set(keys))
        except TypeError:  # names of several types: DictVectorizer refuses them, and says so
            return None
        vocabulary = dict(zip(feature_names, range(len(feature_names))))
    columns = np.fromiter(map(vocabulary.get, keys, repeat(-1)), dtype=np.int64, count=len(keys))
    rows = np.repeat(np.arange(len(X)), np.fromiter(map(len, X), dtype=np.int64, count=len(X)))
    kept = columns >= 0
    indptr = np.zeros(len(X) + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows[kept], minlength=len(X)), out=indptr[1:])
    out = sp.csr_matrix((values[kept].astype(np.float64), columns[kept], indptr),
                        shape=(len(X), len(vocabulary)))
    out.sort_indices()
    return out, feature_names, vocabulary


def _mapping_error(exc: Exception) -> InputError:
    # DictVectorizer's own messages (e.g. "'<' not supported between instances of 'str' and
    # 'int'" for keys 1 and "a") name neither the rule nor the fix.
    return InputError(
        "precomputed expects mappings from feature names (all str, or all numbers) to numbers "
        f"(or a str value, read as a category): {one_line(exc)}"
    )


def _check_finite(X: sp.csr_matrix) -> sp.csr_matrix:
    bad = ~np.isfinite(X.data)
    if bad.any():
        row = int(np.searchsorted(X.indptr, np.flatnonzero(bad)[0], side="right")) - 1
        raise InputError(
            f"precomputed got a value that is not finite (NaN or infinity) in row {row}; "
            "fix or drop the rows with missing or overflowing values"
        )
    return X


def _as_matrix(X) -> sp.csr_matrix:
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    if isinstance(X, (list, tuple)) and X and all(sp.issparse(row) for row in X):
        widths = {row.shape[1] for row in X}
        if len(widths) > 1:
            raise InputError(f"precomputed got sparse rows of different widths "
                             f"({', '.join(map(str, sorted(widths)))}); give every row one width")
        return sp.csr_matrix(sp.vstack(X, format="csr"), dtype=np.float64)  # rows taken one by one
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"precomputed expects numeric rows: {exc}") from None
    if arr.ndim != 2:
        raise InputError(f"precomputed expects a 2-d matrix; got shape {arr.shape}")
    return sp.csr_matrix(arr)


def _fit_width(X: sp.csr_matrix, width: int) -> sp.csr_matrix:
    """``X`` with exactly ``width`` columns: later columns dropped, missing ones zero."""
    if X.shape[1] > width:
        return sp.csr_matrix(X[:, :width])
    if X.shape[1] < width:
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))
    return X.copy()


def precomputed(**params) -> Precomputed:
    """The ``precomputed`` featurizer."""
    return Precomputed(**params)
