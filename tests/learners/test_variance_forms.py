"""A Gaussian variant's variance update and the covariance forms it computes: textcw's own update
when a variant names none, and a refusal, when the class is defined, of a class whose
``covariances`` names a form its own variance function does not compute."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from textcw.kernels import diagonal_gaussian_kernels, kernel
from textcw.learners._kernels import gaussian_diag
from textcw.learners._kernels.constants import AROW_SQUARED_HINGE, DIAG_KL, DIAG_L2
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import PROBA, GaussianLinearClassifier
from textcw.learners.params import SCALE, Options


@kernel
def arow_step(m, v, params):
    if m >= 1.0:
        return 0.0, 0.0, 0.0
    beta = 1.0 / (v + params[0])
    return (1.0 - m) * beta, beta, 1.0 / params[0]


@kernel
def kl_only(s_j, x_j, beta, c, params, covariance, floor):
    return s_j / (1.0 + c * s_j * x_j * x_j)  # ignores covariance: diag-kl whatever is asked


RULES = ("rule", "phi", "C", "r")
WITHOUT_VARIANCE = diagonal_gaussian_kernels(gaussian_diag.rule_steps, params=RULES)
WITH_TEXTCWS = diagonal_gaussian_kernels(gaussian_diag.rule_steps, gaussian_diag.rule_variance, params=RULES,
                                         forms=("diag-kl", "diag-l2"))


@pytest.mark.parametrize("covariance", [DIAG_KL, DIAG_L2])
def test_a_variant_without_a_variance_function_gets_textcws_update_of_the_form_asked(covariance):
    X = sp.random(120, 30, density=0.2, format="csr", random_state=1)
    y = np.where(np.arange(120) % 3 == 0, 1.0, -1.0)
    order = np.random.RandomState(2).permutation(120).astype(np.int64)
    params = (float(AROW_SQUARED_HINGE), 0.0, 1.0, 1.0)
    results = []
    for kernels in (WITHOUT_VARIANCE, WITH_TEXTCWS):
        mu, s = np.zeros(30), np.ones(30)
        counts = kernels.binary(X.indptr, X.indices, X.data, y, order, mu, s, covariance, 1e-12, params)
        results.append((counts, mu, s))
    assert WITHOUT_VARIANCE.forms == ("diag-kl", "diag-l2")
    assert results[0][0] == results[1][0] and results[0][0][1] > 0  # the same updates, and some
    np.testing.assert_array_equal(results[0][1], results[1][1])
    np.testing.assert_array_equal(results[0][2], results[1][2])
    assert np.any(results[0][2] < 1.0)


def test_a_variance_function_of_ones_own_must_declare_its_forms():
    with pytest.raises(TypeError, match=r"must declare the covariance forms it computes, e\.g\. forms="):
        diagonal_gaussian_kernels(arow_step, kl_only, params=("r",))
    with pytest.raises(TypeError, match="declare forms only with your own variance function"):
        diagonal_gaussian_kernels(arow_step, params=("r",), forms=("diag-kl",))
    with pytest.raises(TypeError, match="forms must name one or more covariance forms"):
        diagonal_gaussian_kernels(arow_step, kl_only, params=("r",), forms=())


def variant(offered, kernels):
    class Variant(GaussianLinearClassifier):
        rule = None
        step_kernels = kernels
        covariances = offered
        constraints = {**OnlineLinearClassifier.constraints, "r": SCALE, "a": SCALE,
                       "covariance": Options(offered), "proba": PROBA}

        def __init__(self, *, r=1.0, a=1.0, covariance=offered[0], proba="quadrature", n_epochs=1,
                     shuffle=True, random_state=0, fit_intercept=False):
            self.r, self.a, self.covariance, self.proba = r, a, covariance, proba
            self.n_epochs, self.shuffle, self.random_state = n_epochs, shuffle, random_state
            self.fit_intercept = fit_intercept

        def step_params(self):
            return {"r": self.r}

    return Variant


def test_a_class_offering_a_form_its_variance_does_not_compute_is_refused_when_defined():
    kl = diagonal_gaussian_kernels(arow_step, kl_only, params=("r",), forms=("diag-kl",))
    with pytest.raises(TypeError, match=r"Variant\.covariances names 'diag-l2', which its variance update does not "
                                        r"compute \(step_kernels declares forms=\('diag-kl',\)\)"):
        type("Variant", (variant(("diag-kl",), kl),), {"covariances": ("diag-kl", "diag-l2")})
    # within its forms the class is fine, and it learns
    learner = variant(("diag-kl",), kl)()
    X = sp.random(60, 10, density=0.3, format="csr", random_state=0)
    y = np.where(X @ np.arange(-5.0, 5.0) > 0, 1, 0)
    assert learner.fit(X, y).n_updates_[0] > 0
    # a class of textcw's own update may offer both forms
    assert variant(("diag-kl", "diag-l2"), diagonal_gaussian_kernels(arow_step, params=("r",)))().covariance == "diag-kl"
