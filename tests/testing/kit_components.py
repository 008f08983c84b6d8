"""Learners for the kit's tests: one correct without textcw's base class, and broken ones.

``CentroidLearner`` is a complete, correct third-party learner built only on scikit-learn and
textcw's public errors, showing the checks can be met; the variants each break one promise.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from textcw.errors import InputError, ParameterError
from textcw.learners.perceptron import Perceptron

class CentroidLearner(ClassifierMixin, BaseEstimator):
    """Nearest class mean as a linear model: ``score_k = x . c_k - ||c_k||^2 / 2``.

    ``partial_fit`` accumulates per-class sums, so streaming and batch training agree.
    """

    def __init__(self, *, prior_count=1.0):
        self.prior_count = prior_count

    def _check_X(self, X, reset):
        X = validate_data(self, X, accept_sparse="csr", dtype=np.float64, reset=reset,
                          ensure_all_finite=False)
        values = X.data if sp.issparse(X) else X
        if not np.all(np.isfinite(values)):
            raise InputError("X contains NaN or infinite values")
        return X

    def _start(self, classes, n_features):
        self.classes_ = np.asarray(classes)
        self.sums_ = np.zeros((len(self.classes_), n_features))
        self.counts_ = np.full(len(self.classes_), float(self.prior_count))

    def _accumulate(self, X, y):
        unknown = np.setdiff1d(np.unique(y), self.classes_)
        if unknown.size:
            raise InputError(f"labels {list(unknown)} are not among {list(self.classes_)}")
        idx = np.searchsorted(self.classes_, y)
        for k in range(len(self.classes_)):
            rows = idx == k
            self.sums_[k] += np.asarray(X[rows].sum(axis=0)).ravel()
            self.counts_[k] += rows.sum()

    def fit(self, X, y):
        X = self._check_X(X, reset=True)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise InputError(f"y of shape {y.shape} does not match X of shape {X.shape}")
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise InputError("y has only one class; a classifier needs at least two")
        self._start(classes, X.shape[1])
        self._accumulate(X, y)
        return self

    def partial_fit(self, X, y, classes=None):
        first = not hasattr(self, "classes_")
        X = self._check_X(X, reset=first)
        y = np.asarray(y)
        if first:
            if classes is None:
                raise InputError("the first partial_fit call needs classes=")
            self._start(np.unique(classes), X.shape[1])
        self._accumulate(X, y)
        return self

    def decision_function(self, X):
        check_is_fitted(self)
        X = self._check_X(X, reset=False)
        centroids = self.sums_ / self.counts_[:, None]
        scores = np.asarray(X @ centroids.T) - 0.5 * np.sum(centroids ** 2, axis=1)
        return scores[:, 1] - scores[:, 0] if len(self.classes_) == 2 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if len(self.classes_) == 2:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class ValidatedCentroidLearner(CentroidLearner):
    """Checks its parameter the textcw way: ``validate_params`` raising ParameterError."""

    def validate_params(self):
        if not (isinstance(self.prior_count, (int, float)) and self.prior_count > 0):
            raise ParameterError(f"prior_count={self.prior_count!r} is invalid; prior_count must "
                                 "be a number > 0")


class InfersClassesOnFirstChunk(CentroidLearner):
    """Takes classes_ from the first chunk, ignoring ``classes=``."""

    def partial_fit(self, X, y, classes=None):
        if classes is not None and not hasattr(self, "classes_"):
            classes = np.unique(y)
        return super().partial_fit(X, y, classes=classes)


class DropsUnknownLabels(CentroidLearner):
    """Silently skips labels it was not told about."""

    def partial_fit(self, X, y, classes=None):
        if classes is None and not hasattr(self, "classes_"):
            raise InputError("the first partial_fit call needs classes=")
        y = np.asarray(y)
        known = np.isin(y, classes if classes is not None else self.classes_)
        X = X[np.flatnonzero(known)] if sp.issparse(X) else np.asarray(X)[known]
        return super().partial_fit(X, y[known], classes=classes)


class NeedsNoClasses(CentroidLearner):
    """Accepts a first partial_fit call without ``classes=``."""

    def partial_fit(self, X, y, classes=None):
        if classes is None and not hasattr(self, "classes_"):
            classes = np.unique(y)
        return super().partial_fit(X, y, classes=classes)


class Backwards(Perceptron):
    """Scores (and so predicts) the opposite class: consistent, but wrong."""

    def decision_function(self, X):
        return -super().decision_function(X)
