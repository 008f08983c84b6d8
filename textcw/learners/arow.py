"""AROW: adaptive regularization of weight vectors (Crammer, Kulesza and Dredze, MLJ 2013).

CW's hard constraint is replaced by a loss and a regulariser on the confidence: each example
minimises ``KL(N(mu, Sigma) || N(mu_t, Sigma_t)) + (1/(2r)) loss(mu; x, y) + (1/(2r)) x' Sigma x``
(MLJ 2013, eq. 3), so a mislabeled example moves the model only a bounded amount and AROW
degrades gracefully under label noise where CW overfits it. Updates happen when ``m < 1``:

- squared hinge: ``beta = 1 / (v + r)``, ``alpha = (1 - m) beta`` (eqs. 12, 16);
- hinge: ``alpha = min(1/(2r), (1 - m) / v)``, PA-I on ``Sigma^{1/2} x`` (section 3.2, eq. 23);

then ``mu += alpha y Sigma x`` and ``Sigma^{-1} += x x' / r`` (eq. 15) for both losses.
"""

from __future__ import annotations

from textcw.learners._kernels.constants import AROW_HINGE, AROW_SQUARED_HINGE
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import GaussianLinearClassifier
from textcw.learners.params import POSITIVE, Options

LOSS_CODES = {"squared_hinge": AROW_SQUARED_HINGE, "hinge": AROW_HINGE}


class AROW(GaussianLinearClassifier):
    """Adaptive regularization of weight vectors (MLJ 2013).

    Parameters
    ----------
    r : float > 0, default 1.0
        Regularisation: the weight of the current example is ``1/(2r)``. Smaller ``r`` means
        larger steps and faster shrinking variances; larger ``r`` is more conservative (and
        more robust to label noise).
    loss : {"squared_hinge", "hinge"}, default "squared_hinge"
        ``squared_hinge`` is the paper's main algorithm; ``hinge`` is AROW-H (section 3.2).
    a : float > 0, default 1.0
        Initial variance, ``Sigma_1 = a I``.
    covariance : {"diag-kl", "diag-l2", "full"}, default "diag-kl"
        ``diag-kl`` keeps the diagonal of the precision (``1/s_j += x_j^2 / r``), ``diag-l2``
        the diagonal of the covariance update, ``full`` the whole matrix (small ``d`` only).
    n_epochs : int, default 5
    shuffle, random_state, fit_intercept
        As for every online learner.
    """

    _covariances = ("diag-kl", "diag-l2", "full")
    _constraints = {
        **OnlineLinearClassifier._constraints,
        "r": POSITIVE,
        "loss": Options(tuple(LOSS_CODES)),
        "a": POSITIVE,
        "covariance": Options(_covariances),
    }

    def __init__(self, *, r=1.0, loss="squared_hinge", a=1.0, covariance="diag-kl", n_epochs=5,
                 shuffle=True, random_state=None, fit_intercept=False):
        self.r = r
        self.loss = loss
        self.a = a
        self.covariance = covariance
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def _rule_code(self):
        return LOSS_CODES[self.loss]

    def _rule_args(self):
        return (0.0, 0.0, float(self.r))
