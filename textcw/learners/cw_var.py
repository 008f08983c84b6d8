"""CW "var": the linearised confidence constraint (Dredze, Crammer, Pereira, ICML 2008).

After each update ``y (mu . x) >= phi x' Sigma x`` (JMLR 2012 eq. 10); closed form (eq. 18) in
:func:`textcw.learners._kernels.gaussian_rules.cw_var_steps`, exact diagonal form (root finding)
in :mod:`textcw.learners._kernels.gaussian_exact`.
"""

from __future__ import annotations

from textcw.learners._kernels.constants import CW_VAR
from textcw.learners.confidence_weighted import ConfidenceWeighted
from textcw.learners.selftune import ETA, PHI, QUICK_ETA, Axis


class CWVar(ConfidenceWeighted):
    """Confidence-weighted learning, variance form (ICML 2008).

    Parameters
    ----------
    eta : float in (0.5, 1) or "auto", default 0.95
        The confidence: after an update the margin is at least ``phi = Phi^{-1}(eta)`` times
        its variance (the linearised form of "correct with probability ``eta``", JMLR 2012
        equation 10: ``y mu'x >= phi x' Sigma x``).
    a, covariance, multiclass, k, proba, n_epochs, shuffle, random_state, fit_intercept, average, dtype
        As for :class:`~textcw.learners.confidence_weighted.ConfidenceWeighted`.
    """

    rule = CW_VAR
    # m >= phi v is not scale-free: what matters is phi sqrt(a q) (selftune)
    tuning = (Axis("eta", "confidence-per-sd", PHI, grid=ETA, quick=QUICK_ETA, in_train=True),)

    def __init__(self, *, eta=0.95, a=1.0, covariance="diag-kl", multiclass="top1", k=None,
                 proba="quadrature", n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False, average=False, dtype="float64"):
        super().__init__(eta=eta, a=a, covariance=covariance, multiclass=multiclass, k=k,
                         proba=proba, n_epochs=n_epochs, shuffle=shuffle,
                         random_state=random_state, fit_intercept=fit_intercept, average=average,
                         dtype=dtype)
