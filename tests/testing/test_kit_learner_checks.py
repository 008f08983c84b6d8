"""check_learner: correct learners pass, and each kind of broken learner fails, saying why."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import textcw
from kit_components import (
    Backwards,
    CentroidLearner,
    DropsUnknownLabels,
    InfersClassesOnFirstChunk,
    NeedsNoClasses,
)
from textcw.learners.perceptron import Perceptron
from textcw.plugins import use_registries
from textcw.testing import check_learner, make_registries



@pytest.mark.parametrize("name", make_registries().learners.names())
def test_builtin_learners_pass(name):
    regs = make_registries()
    with use_registries(regs):
        check_learner(lambda: textcw.make_learner(name), name=name)


def test_a_learner_without_the_base_class_passes_everything():
    check_learner(CentroidLearner)
    check_learner(CentroidLearner(prior_count=2.0))  # an unfitted instance is cloned


# ---------------------------------------------------------------- deliberately broken learners
class PredictsIndices(Perceptron):
    """Returns label indices instead of the labels."""

    def predict(self, X):
        return np.searchsorted(self.classes_, super().predict(X))


class PredictIgnoresScores(Perceptron):
    """predict disagrees with decision_function."""

    def predict(self, X):
        return np.full(X.shape[0], self.classes_[0])


class LearnsDifferentlyFromDense(Perceptron):
    """Reads dense input with its columns reversed."""

    def fit(self, X, y, **kwargs):
        if not sp.issparse(X):
            X = np.asarray(X)[:, ::-1]
        return super().fit(X, y, **kwargs)


class Unseeded(Perceptron):
    """Shuffles from the global random state, whatever random_state says."""

    def fit(self, X, y, **kwargs):
        seed, self.random_state = self.random_state, int(np.random.randint(2**31))
        try:
            return super().fit(X, y, **kwargs)
        finally:
            self.random_state = seed


class AcceptsNaN(Perceptron):
    """Quietly turns NaN and infinities into zeros."""

    def fit(self, X, y, **kwargs):
        X = sp.csr_matrix(X, copy=True)
        X.data = np.nan_to_num(X.data, nan=0.0, posinf=0.0, neginf=0.0)
        return super().fit(X, y, **kwargs)


class Unpicklable(Perceptron):
    """Keeps a lambda among its fitted attributes."""

    def fit(self, X, y, **kwargs):
        super().fit(X, y, **kwargs)
        self.scorer_ = lambda Z: self.decision_function(Z)
        return self


class MangledParams(Perceptron):
    """Changes a parameter in __init__, so clone() does not reproduce it."""

    def __init__(self, *, n_epochs=5, shuffle=True, random_state=None, fit_intercept=False):
        super().__init__(n_epochs=n_epochs + 1, shuffle=shuffle, random_state=random_state,
                         fit_intercept=fit_intercept)


class FitReturnsNone(Perceptron):
    def fit(self, X, y, **kwargs):
        super().fit(X, y, **kwargs)


class ForgetsAnEpoch(Perceptron):
    """Reports one mistake count too few."""

    def fit(self, X, y, **kwargs):
        super().fit(X, y, **kwargs)
        self.mistakes_ = self.mistakes_[:-1]
        return self


@pytest.mark.parametrize("learner, check, says", [
    (Backwards, "fits_and_predicts", r"held-out accuracy 0\.\d\d < 0\.8"),
    (PredictsIndices, "fits_and_predicts", r"outside classes_=\['neg', 'pos'\]"),
    (PredictIgnoresScores, "fits_and_predicts", "predict disagrees with decision_function"),
    (FitReturnsNone, "fits_and_predicts", "fit must return the estimator itself"),
    (LearnsDifferentlyFromDense, "sparse_and_dense_agree", "differ between CSR and dense"),
    (Unseeded, "is_deterministic", "two fits with the same parameters and data differ"),
    (AcceptsNaN, "refuses_bad_input", "fit accepted a matrix containing nan"),
    (Unpicklable, "survives_joblib", "raised .*Pickl"),
    (MangledParams, "params_round_trip", "clone.. failed: .*modifies parameter n_epochs"),
    (ForgetsAnEpoch, "reports_mistakes", "mistakes_ has 4 entries after fit with n_epochs=5"),
    (NeedsNoClasses, "partial_fit_streams", "first partial_fit call accepted no classes="),
    (InfersClassesOnFirstChunk, "partial_fit_streams", r"one-label chunk, classes_=\['neg'\]"),
    (DropsUnknownLabels, "partial_fit_streams", "accepted a label missing from classes="),
])
def test_broken_learner_fails_with_a_clear_message(learner, check, says):
    with pytest.raises(AssertionError, match=f"learner {learner.__qualname__} fails {check}: .*{says}"):
        check_learner(learner)


class HidesSparseSupport(CentroidLearner):
    """Declares (through its estimator tags) that it cannot take sparse input, yet does."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


def test_the_sklearn_contract_checks_catch_a_wrong_estimator_tag():
    with pytest.raises(AssertionError, match="passes_sklearn_contract: .*check_estimator_sparse_tag"):
        check_learner(HidesSparseSupport)
    check_learner(HidesSparseSupport, sklearn_checks=False)  # the textcw checks alone pass


class NoPredict:
    def fit(self, X, y):
        return self

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self


def test_not_a_learner_at_all():
    with pytest.raises(AssertionError, match="learner NoPredict fails builds_unfitted: .*no predict"):
        check_learner(NoPredict)
    with pytest.raises(AssertionError, match="builds_unfitted: it raised TypeError"):
        check_learner(lambda: Perceptron(learning_rate=1.0))


def test_expected_failures_are_strict():
    with pytest.raises(AssertionError, match="now passes is_deterministic.*remove it"):
        check_learner(CentroidLearner, expected_failures={"is_deterministic": "it is not"})
    with pytest.raises(ValueError, match="unknown checks \\['no_such_check'\\]"):
        check_learner(CentroidLearner, expected_failures={"no_such_check": "typo"})
    # A real expected failure is skipped and the remaining checks still run.
    check_learner(ForgetsAnEpoch, expected_failures={"reports_mistakes": "on purpose",
                                                     "overrides_only_hooks": "it redefines fit"})
