"""The second-order perceptron (Cesa-Bianchi, Conconi and Gentile, SIAM J. Comput. 2005).

A perceptron in the metric of the data's correlation: it keeps ``vsum`` (the sum of ``y x`` over
past mistakes) and ``A = a I + sum over past mistakes of x x'``, predicts
``sign(vsum' (A + x x')^{-1} x)`` (the current example included) and, on a mistake, adds ``y x``
to ``vsum`` and ``x x'`` to ``A`` (docs/algorithms.md "Second-order perceptron"). Like the
perceptron it updates only on mistakes; unlike AROW it has no margin and no confidence parameter.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from textcw.learners._kernels import second_order
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.linalg import check_full_fits, quadratic_forms, with_intercept_column
from textcw.learners.params import SCALE, Options
from textcw.learners.protocol import bind_kernel
from textcw.learners.selftune import Axis, decades


class SecondOrderPerceptron(OnlineLinearClassifier):
    """Second-order perceptron (SOP).

    Parameters
    ----------
    a : float > 0, default 1.0
        The initial correlation ``A = a I``: how strongly the first examples are trusted (small
        ``a``: strongly; large ``a``: SOP starts like the plain perceptron).
    covariance : {"diag", "full"}, default "diag"
        ``full`` keeps the ``d x d`` correlation matrix (small ``d`` only); ``diag`` keeps its
        diagonal, so ``w_j = vsum_j / (A_jj + x_j^2)``.
    n_epochs : int, default 5
    shuffle, random_state, fit_intercept
        As for every online learner.

    Notes
    -----
    Fitted attributes: ``coef_`` is ``A^{-1} vsum`` (full) or ``vsum / diag(A)`` (diag), the
    weights SOP would use for a new example were it not included in ``A``.
    :meth:`decision_function` is SOP's own score, with the example included:
    ``(coef . x) / (1 + x' A^{-1} x)`` (full, by Sherman-Morrison; the sign is that of
    ``coef . x``) or ``sum_j vsum_j x_j / (A_jj + x_j^2)`` (diag).
    """

    constraints = {
        **OnlineLinearClassifier.constraints,
        "a": SCALE,
        "covariance": Options(("diag", "full")),
    }
    tuning = (Axis("a", grid=decades(-2, 3), quick=(1.0,)),)  # tune's grid; no "auto"
    state_params = ("fit_intercept", "covariance")
    positive_states = ("A",)  # checked when a state is loaded
    factor_states = ("R",)

    def __init__(self, *, a=1.0, covariance="diag", n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False):
        self.a = a
        self.covariance = covariance
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    @property
    def state_names(self):
        return ("mu", "vsum", "R") if self.covariance == "full" else ("mu", "vsum", "A")

    def epoch_call(self, binary):
        if self.covariance == "full":
            kernel = second_order.binary_full_epoch if binary else second_order.multiclass_full_epoch
        else:
            kernel = second_order.binary_diag_epoch if binary else second_order.multiclass_diag_epoch
        return bind_kernel(kernel, self.state_names, {})

    def state_shapes(self, n_rows, n_labels):
        shape = self.weight_shape(n_rows, n_labels)
        if self.covariance == "diag":
            return {"mu": shape, "vsum": shape, "A": shape}
        full = (n_rows, n_rows) if n_labels is None else (n_labels, n_rows, n_rows)
        return {"mu": shape, "vsum": shape, "R": full}

    def new_state(self, n_rows, n_labels):
        shape = self.weight_shape(n_rows, n_labels)
        state = {"mu": np.zeros(shape), "vsum": np.zeros(shape)}
        if self.covariance == "diag":
            state["A"] = np.full(shape, float(self.a))
            return state
        check_full_fits(self, n_rows, 1 if n_labels is None else n_labels, "diag")
        factor = np.eye(n_rows) * np.sqrt(float(self.a))  # A = a I = R' R
        state["R"] = factor if n_labels is None else np.repeat(factor[None], n_labels, axis=0)
        return state

    def decision_function(self, X):
        """SOP's score ``vsum' (A + x x')^{-1} x`` per row (per label block if multi-class)."""
        X = self._check_predict_input(X)
        state = self.fitted_state()
        Xa = with_intercept_column(X, self.fit_intercept)
        vsum = state["vsum"]
        if self.covariance == "diag":
            A = state["A"]
            Xa = sp.csr_matrix(Xa)
            rows = np.repeat(np.arange(Xa.shape[0]), np.diff(Xa.indptr))
            x = Xa.data
            cols = Xa.indices
            if self._binary:
                terms = vsum[cols] * x / (A[cols] + x * x)
                scores = np.bincount(rows, weights=terms, minlength=Xa.shape[0])
            else:
                scores = np.column_stack([
                    np.bincount(rows, weights=vsum[cols, k] * x / (A[cols, k] + x * x),
                                minlength=Xa.shape[0])
                    for k in range(vsum.shape[1])
                ])
            return scores
        linear = np.asarray(Xa @ state["mu"])
        R = state["R"]
        if self._binary:
            return linear / (1.0 + quadratic_forms(Xa, R))
        q = np.column_stack([quadratic_forms(Xa, R[k]) for k in range(R.shape[0])])
        return linear / (1.0 + q)
