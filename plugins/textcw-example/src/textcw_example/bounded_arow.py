"""Diagonal AROW with a lower bound on the variances: a Gaussian variant that is its update.

AROW's squared-hinge update (Crammer, Kulesza and Dredze, MLJ 2013, eqs. 12, 15 and 16):
``beta = 1 / (v + r)``, ``alpha = (1 - m) beta`` when ``m < 1``, ``mu += alpha y Sigma x`` and
``Sigma^{-1} += x x' / r`` (diagonalised by ``covariance=``); then every changed variance is kept
at or above ``b``, so that no feature stops learning (MLJ 2013 section 6 discusses such bounds).
textcw's epoch loop (:func:`textcw.kernels.diagonal_gaussian_kernels`) does everything else.
"""

from textcw.kernels import diagonal_gaussian_kernels, kernel, update_variance
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import PROBA, GaussianLinearClassifier
from textcw.learners.params import SCALE, Interval, Options
from textcw.learners.selftune import Axis, decades


@kernel
def arow_step(m, v, params):
    """``(alpha, beta, c)`` of AROW's squared hinge: ``c = 1/r``, the precision increment."""
    r = params[0]
    if m >= 1.0:
        return 0.0, 0.0, 0.0
    beta = 1.0 / (v + r)
    return (1.0 - m) * beta, beta, 1.0 / r


@kernel
def bounded_variance(s_j, x_j, beta, c, params, covariance, floor):
    """The diagonal update, then the lower bound ``b``."""
    return max(update_variance(s_j, x_j, beta, c, covariance, floor), params[1])


class BoundedAROW(GaussianLinearClassifier):
    """Diagonal AROW whose variances never fall below ``b``.

    Parameters: ``r`` (> 0 or "auto", default 1.0) AROW's regularisation; ``b`` (>= 0, default
    0.05) the variance lower bound; ``a``, ``covariance`` ("diag-kl" or "diag-l2"), ``proba``,
    ``n_epochs``, ``shuffle``, ``random_state`` and ``fit_intercept`` as for every Gaussian learner.
    """

    rule = None
    step_kernels = diagonal_gaussian_kernels(arow_step, bounded_variance, params=("r", "b"),
                                              forms=("diag-kl", "diag-l2"))
    covariances = ("diag-kl", "diag-l2")
    tuning = (Axis("r", "margin-variance", (0.01, 0.1, 1.0, 10.0, 100.0), grid=decades(-2, 4)),)
    constraints = {**OnlineLinearClassifier.constraints, "r": SCALE, "b": Interval(0.0, 1e100, "left"),
                   "a": SCALE, "covariance": Options(covariances), "proba": PROBA}

    def __init__(self, *, r=1.0, b=0.05, a=1.0, covariance="diag-kl", proba="quadrature",
                 n_epochs=5, shuffle=True, random_state=0, fit_intercept=False):
        self.r, self.b, self.a, self.covariance, self.proba = r, b, a, covariance, proba
        self.n_epochs, self.shuffle, self.random_state = n_epochs, shuffle, random_state
        self.fit_intercept = fit_intercept

    def step_params(self):
        return {"r": self.resolved("r"), "b": self.b}
