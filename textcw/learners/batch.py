"""Batch baselines from scikit-learn, wrapped as textcw learners.

The papers compare CW with batch learners trained on the same folds: naive Bayes and maximum
entropy ("default configuration in MALLET") and support vector machines (LibSVM) in JMLR 2012
Table 4, maxent and SVMs (one-vs-one and Crammer-Singer multi-class) in EMNLP 2009 Table 3.
The wrappers give them textcw's parameter checks (:class:`textcw.errors.ParameterError`), a
clear error for inputs they cannot take, and the usual scikit-learn surface (``fit``,
``predict``, ``decision_function``, ``predict_proba`` where the model has one, ``classes_``),
so they run through the same pipeline, evaluators and persistence as the online learners.
They have no passes and no ``partial_fit``: batch learners see all the data at once.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.multiclass import OneVsOneClassifier
from sklearn.naive_bayes import BernoulliNB, MultinomialNB
from sklearn.svm import LinearSVC
from sklearn.utils.validation import check_is_fitted

from textcw.errors import InputError
from textcw.learners.inputs import check_features, check_labels, check_targets
from textcw.learners.params import BOOL, POSITIVE, SCALE, SEED, Interval, Options, check_params
from textcw.learners.selftune import Axis, decades

# liblinear and lbfgs count iterations in a C int: a larger max_iter overflows (liblinear raises
# a bare OverflowError) instead of meaning "more".
MAX_ITER = Interval(1, 2**31 - 1, closed="both", integer=True)


def _as_csr(X, n_features):
    """textcw's input checks, then 32-bit indices: liblinear refuses 64-bit ones."""
    X = check_features(X, n_features)
    if X.nnz < np.iinfo(np.int32).max and X.shape[1] < np.iinfo(np.int32).max:
        X = sp.csr_matrix((X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape)
    return X


def _labels(y, n_rows: int) -> np.ndarray:
    """``y`` checked as the online learners check it, then as a plain (not object) array, so
    that the scikit-learn estimators behind the baselines see strings, booleans or numbers."""
    y = check_targets(y, n_rows)
    check_labels(y)
    if y.dtype == object:
        y = np.array(y.tolist())
        check_labels(y)  # e.g. numbers that were objects, with a NaN among them
    return y


class BatchBaseline(ClassifierMixin, BaseEstimator):
    """Shared fit/predict around the scikit-learn estimator built by :meth:`_make`."""

    constraints: dict = {}
    _constraints: dict = {}  # the name before it was public; kept for one release

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._constraints = cls.constraints

    def _make(self):
        raise NotImplementedError

    def validate_params(self) -> None:
        check_params(self, self.constraints)

    def fit(self, X, y):
        self.validate_params()
        if y is None:  # before X, as the online learners
            check_targets(y, 0)
        X = _as_csr(X, None)
        y = _labels(y, X.shape[0])
        self._check_input(X)
        self.estimator_ = self._make().fit(X, y)
        self.classes_ = self.estimator_.classes_
        self.n_features_in_ = X.shape[1]
        return self

    def _check_input(self, X) -> None:
        """Refuse inputs the model cannot take, with advice (subclasses override)."""

    def _prepared(self, X):
        check_is_fitted(self, "estimator_")
        X = _as_csr(X, self.n_features_in_)
        self._check_input(X)  # what the model cannot fit, it cannot score either (nb: negatives)
        return X

    def predict(self, X):
        X = self._prepared(X)  # first: it raises NotFittedError before fit
        if X.shape[0] == 0:  # scikit-learn refuses empty input; the online learners do not
            return self.classes_[:0].copy()
        return self.estimator_.predict(X)

    def _score_shape(self, n_rows):
        return (n_rows,) if len(self.classes_) == 2 else (n_rows, len(self.classes_))

    def decision_function(self, X):
        """Scores as scikit-learn gives them: shape (n,) for two classes, else (n, K)."""
        X = self._prepared(X)
        if X.shape[0] == 0:
            return np.empty(self._score_shape(0))
        if hasattr(self.estimator_, "decision_function"):
            return self.estimator_.decision_function(X)
        # naive Bayes: the joint log-likelihood plays the role of the score
        jll = self.estimator_.predict_joint_log_proba(X)
        return jll[:, 1] - jll[:, 0] if jll.shape[1] == 2 else jll

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class NaiveBayes(BatchBaseline):
    """Naive Bayes; multinomial by default (JMLR 2012 Table 4, "NB").

    The papers used MALLET's naive Bayes, which is multinomial, so ``nb`` is scikit-learn's
    ``MultinomialNB`` by default: it also models the uni/bigram *counts* of the Amazon features
    rather than only their presence. It needs non-negative features; ``event_model="bernoulli"``
    (``BernoulliNB``, features thresholded at ``binarize``) takes any real features.

    Parameters
    ----------
    alpha : float > 0, default 1.0
        Additive (Laplace/Lidstone) smoothing; MALLET's default is 1.
    event_model : {"multinomial", "bernoulli"}, default "multinomial"
    binarize : float, default 0.0
        Threshold of the Bernoulli model (ignored by the multinomial one).
    """

    constraints = {"alpha": POSITIVE, "event_model": Options(("multinomial", "bernoulli")),
                   "binarize": Interval()}
    tuning = (Axis("alpha", grid=decades(-3, 0), quick=(0.1, 1.0)),)  # the tune evaluator's grid

    def __init__(self, *, alpha=1.0, event_model="multinomial", binarize=0.0):
        self.alpha = alpha
        self.event_model = event_model
        self.binarize = binarize

    def _make(self):
        if self.event_model == "bernoulli":
            return BernoulliNB(alpha=self.alpha, binarize=self.binarize)
        return MultinomialNB(alpha=self.alpha)

    def _check_input(self, X) -> None:
        if self.event_model == "multinomial" and X.nnz and X.data.min() < 0:
            raise InputError(
                "nb (multinomial naive Bayes) needs non-negative features (counts or presence); "
                "these have negative values: use a count featurizer, or nb:event_model=bernoulli"
            )

    def predict_proba(self, X):
        X = self._prepared(X)
        if X.shape[0] == 0:
            return np.empty((0, len(self.classes_)))
        return self.estimator_.predict_proba(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # like MultinomialNB: scikit-learn's checks then feed non-negative data (and expect
        # a ValueError, which InputError is, for negative data)
        tags.input_tags.positive_only = self.event_model == "multinomial"
        return tags


class MaxEnt(BatchBaseline):
    """Maximum entropy (multinomial logistic regression) with a Gaussian prior; "Maxent" in the papers.

    MALLET maximises ``sum log p(y|x) - ||w||^2 / (2 sigma^2)``; scikit-learn's
    ``LogisticRegression`` minimises ``C * sum(-log p(y|x)) + ||w||^2 / 2``, the same objective
    with ``C = sigma^2``. So ``C`` is the prior variance (MALLET's default: 1).

    Parameters
    ----------
    C : float > 0, default 1.0
    max_iter : int >= 1, default 100
        Newton iterations. The solver is Newton-CG: on sparse text with many labels it reaches
        the optimum in a few iterations where L-BFGS needs hundreds.
    fit_intercept : bool, default True
    """

    constraints = {"C": SCALE, "max_iter": MAX_ITER, "fit_intercept": BOOL}
    tuning = (Axis("C", grid=decades(-3, 2), quick=(1.0, 10.0)),)  # the tune evaluator's grid

    def __init__(self, *, C=1.0, max_iter=100, fit_intercept=True):
        self.C = C
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept

    def _make(self):
        return LogisticRegression(C=self.C, solver="newton-cg", max_iter=self.max_iter,
                                  fit_intercept=self.fit_intercept)

    def predict_proba(self, X):
        X = self._prepared(X)
        if X.shape[0] == 0:
            return np.empty((0, len(self.classes_)))
        return self.estimator_.predict_proba(X)


class LinearSVM(BatchBaseline):
    """Linear support vector machine (hinge loss, as LibSVM's C-SVC); "SVM" in the papers.

    Parameters
    ----------
    C : float > 0, default 1.0
    multi_class : {"ovr", "ovo", "crammer_singer"}, default "ovr"
        With more than two labels: one-vs-rest, one-vs-one (LibSVM's scheme, "1 vs. 1" in
        EMNLP 2009 Table 3) or Crammer and Singer's joint formulation ("MC").
    max_iter : int >= 1, default 10000
        Coordinate-descent iterations of liblinear.
    fit_intercept : bool, default True
    random_state : int or None, default 0
        Seed of liblinear's coordinate order (the default makes every run the same).
    """

    constraints = {"C": SCALE, "multi_class": Options(("ovr", "ovo", "crammer_singer")),
                   "max_iter": MAX_ITER, "fit_intercept": BOOL,
                   "random_state": SEED}
    tuning = (Axis("C", grid=decades(-4, 1), quick=(0.1, 1.0)),)  # the tune evaluator's grid

    def __init__(self, *, C=1.0, multi_class="ovr", max_iter=10000, fit_intercept=True, random_state=0):
        self.C = C
        self.multi_class = multi_class
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.random_state = random_state

    def _make(self):
        svc = LinearSVC(C=self.C, loss="hinge", dual=True, max_iter=self.max_iter,
                        fit_intercept=self.fit_intercept, random_state=self.random_state,
                        multi_class="crammer_singer" if self.multi_class == "crammer_singer" else "ovr")
        return OneVsOneClassifier(svc) if self.multi_class == "ovo" else svc
