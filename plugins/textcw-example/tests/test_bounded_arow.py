"""BoundedAROW: a diagonal Gaussian variant written as its update only (textcw's epoch loop)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from textcw.errors import ParameterError
from textcw.learners.arow import AROW
from textcw.testing import learner_under_test, make_sparse_classification, parametrize_with_checks

from textcw_example.bounded_arow import BoundedAROW


@parametrize_with_checks([learner_under_test(BoundedAROW(covariance=form), name=f"BoundedAROW-{form}")
                          for form in ("diag-kl", "diag-l2")])
def test_passes_the_learner_checks(component, check):
    check(component)


@pytest.mark.parametrize("covariance", ["diag-kl", "diag-l2"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_without_a_bound_it_is_arow(covariance, n_classes):
    """b=0 bounds nothing: the model is AROW's own (squared hinge, top-1), to rounding."""
    X, y = make_sparse_classification(200, 40, n_classes, random_state=3)
    ours = BoundedAROW(r=0.5, b=0.0, covariance=covariance, n_epochs=3).fit(X, y)
    arow = AROW(r=0.5, covariance=covariance, n_epochs=3).fit(X, y)
    assert ours.mistakes_ == arow.mistakes_ and ours.n_updates_ == arow.n_updates_
    assert_allclose(ours.coef_, arow.coef_, rtol=1e-12, atol=1e-14)
    assert_allclose(ours.sigma_, arow.sigma_, rtol=1e-12, atol=0)


def test_the_bound_holds_and_is_not_counted_as_the_floor():
    X, y = make_sparse_classification(200, 40, 2, random_state=3)
    model = BoundedAROW(r=0.01, b=0.2, n_epochs=3).fit(X, y)
    sigma = model.sigma_
    touched = sigma < 1.0  # features some update shrank
    assert touched.any() and sigma[touched].min() == 0.2
    assert model.n_variance_floored_ == [0, 0, 0]  # the bound is the variant's, not the guard's
    assert not np.array_equal(model.coef_, BoundedAROW(r=0.01, b=0.0, n_epochs=3).fit(X, y).coef_)


def test_refuses_what_it_does_not_have():
    X, y = make_sparse_classification(60, 30, 2, random_state=1)
    with pytest.raises(ParameterError, match=r"covariance='full' is invalid"):
        BoundedAROW(covariance="full").fit(X, y)
    with pytest.raises(ParameterError, match=r"no weighted update"):
        BoundedAROW().fit(X, y, sample_weight=np.linspace(0.5, 2.0, 60))
    tuned = BoundedAROW(r="auto", n_epochs=2).fit(X, y)
    assert set(tuned.tuned_params_) == {"r"}
    assert_array_equal(tuned.predict(X), BoundedAROW(r=tuned.tuned_params_["r"], n_epochs=2).fit(X, y).predict(X))
