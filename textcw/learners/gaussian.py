"""The shared base of learners that keep a Gaussian over weights, ``w ~ N(mu, Sigma)``.

CW var, CW stdev (and later AROW and SCW) differ only in how one example's margin ``m`` and
margin variance ``v`` set the step sizes; the state (mean and variances), the covariance forms
and the label probabilities are common and live here.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri

from textcw.learners._kernels import gaussian_diag
from textcw.learners._kernels.constants import DIAG_KL, DIAG_L2
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.params import POSITIVE, Interval, Options
from textcw.learners.probability import label_probabilities_quadrature

COVARIANCE_CODES = {"diag-kl": DIAG_KL, "diag-l2": DIAG_L2}


class GaussianLinearClassifier(OnlineLinearClassifier):
    """Mean ``mu`` and diagonal covariance ``s`` (``Sigma_1 = a I``), updated by a kernel rule.

    Fitted attributes, beyond those of :class:`OnlineLinearClassifier`:

    sigma_ : ndarray, same shape as ``coef_``
        The diagonal of the covariance of every weight.
    """

    _rule: int
    _constraints = {
        **OnlineLinearClassifier._constraints,
        "a": POSITIVE,
        "covariance": Options(tuple(COVARIANCE_CODES)),
    }
    _state_names = ("mu", "s")
    _binary_kernel = gaussian_diag.binary_epoch
    _multiclass_kernel = gaussian_diag.multiclass_top1_epoch

    def _new_state(self, n_rows, n_labels):
        shape = (n_rows,) if n_labels is None else (n_rows, n_labels)
        return {"mu": np.zeros(shape), "s": np.full(shape, float(self.a))}

    @property
    def sigma_(self) -> np.ndarray:
        s = self._fitted_state()["s"][: self.n_features_in_]
        return s.reshape(1, -1) if self._binary else s.T

    def margin_variance(self, X) -> np.ndarray:
        """``x' Sigma x`` for every row (binary: shape (n,); multi-class: (n, K) per label block)."""
        X = self._check_predict_input(X)
        s = self._fitted_state()["s"]
        var = np.asarray(X.multiply(X) @ s[: self.n_features_in_])
        if self.fit_intercept:
            var = var + s[self.n_features_in_]
        return var

    def predict_proba(self, X):
        """Probability of each label under ``w ~ N(mu, Sigma)``.

        Binary: ``P(classes_[1] | x) = Phi(mu.x / sqrt(x' Sigma x))`` (ALGORITHMS.md). Multi-class:
        the label scores are independent Gaussians ``N(mu_k.x, x' Sigma_k x)`` and
        ``P(k wins)`` is computed by one-dimensional quadrature. Rows sum to 1.
        """
        scores = self.decision_function(X)
        var = self.margin_variance(X)
        if self._binary:
            with np.errstate(divide="ignore", invalid="ignore"):
                z = scores / np.sqrt(var)
            z = np.where(var > 0, z, np.sign(scores) * np.inf)  # no uncertainty left: a step
            p = np.where(scores == 0, 0.5, ndtr(z))
            return np.column_stack([1.0 - p, p])
        return label_probabilities_quadrature(scores, var)


class ConfidenceWeighted(GaussianLinearClassifier):
    """Common parameters of the two CW variants.

    Parameters
    ----------
    eta : float in (0.5, 1)
        The confidence: after an update the example is classified correctly with probability
        at least ``eta`` under ``N(mu, Sigma)``; ``phi = Phi^{-1}(eta)``.
    a : float > 0, default 1.0
        Initial variance, ``Sigma_1 = a I``.
    covariance : {"diag-kl", "diag-l2"}, default "diag-kl"
        How the covariance is kept diagonal: ``diag-kl`` diagonalises the precision update
        (KL projection, "Project" in ICML 2008), ``diag-l2`` drops the off-diagonal part of the
        covariance update ("Drop").
    n_epochs : int, default 5
        Passes over the training data.
    shuffle, random_state, fit_intercept
        As for every online learner.

    The default ``eta`` differs by variant because the constraints scale differently (``m >= phi v``
    against ``m >= phi sqrt(v)``); both defaults were chosen on the 20 Newsgroups training split.
    """

    _constraints = {
        **GaussianLinearClassifier._constraints,
        "eta": Interval(0.5, 1.0, closed="neither"),
    }

    def __init__(self, *, eta, a=1.0, covariance="diag-kl", n_epochs=5, shuffle=True,
                 random_state=None, fit_intercept=False):
        self.eta = eta
        self.a = a
        self.covariance = covariance
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    @property
    def phi(self) -> float:
        """``Phi^{-1}(eta)``, the confidence in standard deviations."""
        return float(ndtri(self.eta))

    def _kernel_args(self):
        return (self._rule, COVARIANCE_CODES[self.covariance], self.phi)
