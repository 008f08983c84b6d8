"""What a fitted Gaussian learner says about ``w ~ N(mu, Sigma)``: its variances, its covariance
matrix, the margin variance ``x' Sigma x`` of documents and the label probabilities.

:class:`GaussianViews` is the read-only half of
:class:`textcw.learners.gaussian.GaussianLinearClassifier` (which documents the attributes): it
reads the fitted state through ``fitted_state()`` and the covariance form (``self.form``,
:mod:`textcw.learners.covariance`) and never changes it. The state may be 32-bit
(``dtype="float32"``); every view computes in 64-bit, so a view of a 32-bit state is the view of
the same numbers held in doubles.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from textcw.errors import ParameterError
from textcw.learners import linalg
from textcw.learners.interleaved import rows_dot, weights_dot
from textcw.learners.linalg import (
    covariance_from_factor,
    quadratic_forms,
    variances_from_factor,
    with_intercept_column,
)
from textcw.learners.probability import (
    binary_probability_sampling,
    label_probabilities_quadrature,
    label_probabilities_sampling,
)


class GaussianViews:
    """``sigma_``, ``covariance_``, :meth:`margin_variance`, :meth:`predict_proba` and
    :meth:`predict_log_proba` of a fitted Gaussian learner (module docstring)."""

    def _blocks(self):
        """The Cholesky factor of each label block's precision (full covariance only)."""
        R = self.fitted_state()["R"]
        return [R] if R.ndim == 2 else list(R)

    def decision_function(self, X):
        # a paired binary mean (textcw.learners.interleaved) is read where the rows need it, not
        # copied whole as coef_ hands it out; the same sums, bit for bit
        state = self.__dict__.get("_state")
        mu = state.get("mu") if isinstance(state, dict) else None
        if not (isinstance(mu, np.ndarray) and mu.ndim == 1 and not mu.flags.c_contiguous):
            return super().decision_function(X)
        return weights_dot(self, self._check_predict_input(X)) + self.intercept_

    @property
    def coef_(self) -> np.ndarray:
        # A binary state's mean may be a column of the paired (d, 2) array, a view with a stride
        # (textcw.learners.interleaved): handed out C-ordered, as it always was, so that what is
        # computed from it (BLAS dot products and norms, whose summation order depends on the
        # layout) stays bit for bit what it was. No copy for a state that is C-ordered already.
        coef = super().coef_
        return np.ascontiguousarray(coef) if self._binary else coef

    @property
    def sigma_(self) -> np.ndarray:
        state = self.fitted_state()
        if self.form.diagonal:
            s = state["s"][: self.n_features_in_]
            return np.ascontiguousarray(s.reshape(1, -1)) if self._binary else s.T  # as coef_
        diag = np.stack([variances_from_factor(R) for R in self._blocks()])
        return diag[:, : self.n_features_in_]

    @property
    def covariance_(self) -> np.ndarray:
        self.fitted_state()  # checks the state before anything is formed from it
        if self.__dict__.get("_previewing"):
            raise AttributeError("covariance_ is formed on demand only")  # see _get_fitted_attr_html
        if self.form.diagonal:
            raise AttributeError(
                f"covariance_ exists only for covariance='full' (this model has "
                f"covariance={self.covariance!r}); the diagonal is sigma_"
            )
        blocks = self._blocks()
        d = blocks[0].shape[0]
        # the result, plus covariance_from_factor's three d x d temporaries for one block (and
        # for several blocks, the list np.stack copies from)
        need = 8 * d * d * (len(blocks) * (1 if self._binary else 2) + 3)
        budget = linalg.full_matrix_budget()
        if need > budget:
            raise ParameterError(
                f"{type(self).__name__}: forming covariance_ ({len(blocks)} matrix(es) of {d} x {d}) "
                f"needs {need / 1e9:.1f} GB, more than the {budget / 1e9:.1f} GB a learner may use "
                "(half of this machine's memory); read the variances from sigma_, or x' Sigma x "
                "from margin_variance(X), which need far less"
            )
        mats = [covariance_from_factor(R) for R in blocks]
        return mats[0] if self._binary else np.stack(mats)

    def margin_variance(self, X) -> np.ndarray:
        """``x' Sigma x`` for every row (binary: shape (n,); multi-class: (n, K) per label block)."""
        X = self._check_predict_input(X)
        state = self.fitted_state()
        if self.form.diagonal:
            s = state["s"]
            var = rows_dot(X.multiply(X), s[: self.n_features_in_])
            if self.fit_intercept:
                var = var + s[self.n_features_in_]
            return var
        Xa = with_intercept_column(X, self.fit_intercept)
        var = np.column_stack([quadratic_forms(Xa, R) for R in self._blocks()])
        return var[:, 0] if self._binary else var

    def predict_proba(self, X):
        """Probability of each label under ``w ~ N(mu, Sigma)``.

        ``proba="quadrature"`` (exact to about 1e-10): binary,
        ``P(classes_[1] | x) = Phi(mu.x / sqrt(x' Sigma x))`` (docs/algorithms.md
        "Label probabilities"); multi-class, the label
        scores are independent Gaussians ``N(mu_k.x, x' Sigma_k x)`` and ``P(k wins)`` is a
        one-dimensional integral computed by composite Gauss-Legendre quadrature, with knots
        at every label's mean and at 2.5, 5 and 8.5 standard deviations either side of it
        (:func:`textcw.learners.probability.label_probabilities_quadrature`).
        ``proba="sampling"``: the papers' Monte Carlo estimate (EMNLP 2009 section 7), the
        fraction of 2,000 seeded draws of the scores that each label wins, seeded with
        ``random_state`` (0 when ``None``; 0 by default) so that it is a deterministic function of
        the model.
        Rows sum to 1.
        """
        scores = self.decision_function(X)
        var = self.margin_variance(X)
        if getattr(self, "proba", "quadrature") == "sampling":
            if self._binary:
                p = binary_probability_sampling(scores, var, self.random_state)
                return np.column_stack([1.0 - p, p])
            return label_probabilities_sampling(scores, var, self.random_state)
        if self._binary:
            with np.errstate(divide="ignore", invalid="ignore"):
                z = scores / np.sqrt(var)
                z = np.where(var > 0, z, np.sign(scores) * np.inf)  # no uncertainty left: a step
            p = np.where(scores == 0, 0.5, ndtr(z))
            return np.column_stack([1.0 - p, p])
        return label_probabilities_quadrature(scores, var)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
