"""CW "stdev": the exact convex confidence constraint (Crammer, Dredze, Pereira, NIPS 2008).

After each update ``y (mu . x) >= phi sqrt(x' Sigma x)`` (JMLR 2012 eq. 19); closed form (eq. 31) in
:func:`textcw.learners._kernels.gaussian_rules.cw_stdev_alpha`, exact diagonal form (root
finding) in :mod:`textcw.learners._kernels.gaussian_exact`. Mistakes do not depend on the initial
scale ``a`` (NIPS 2008, Lemma 3).
"""

from __future__ import annotations

from textcw.learners._kernels.constants import CW_STDEV
from textcw.learners.confidence_weighted import ConfidenceWeighted
from textcw.learners.selftune import ETA, PHI, QUICK_ETA, Axis


class CWStdev(ConfidenceWeighted):
    """Confidence-weighted learning, standard-deviation form (NIPS 2008).

    Parameters
    ----------
    eta : float in (0.5, 1) or "auto", default 0.99
        The confidence: after an update the example is classified correctly with probability at
        least ``eta`` under ``w ~ N(mu, Sigma)``: ``y mu'x >= phi sqrt(x' Sigma x)`` with
        ``phi = Phi^{-1}(eta)`` (JMLR 2012 equation 19).
    a, covariance, multiclass, k, proba, n_epochs, shuffle, random_state, fit_intercept, average, dtype
        As for :class:`~textcw.learners.confidence_weighted.ConfidenceWeighted`; mistakes do not depend on
        ``a`` (NIPS 2008, Lemma 3).
    """

    rule = CW_STDEV
    # phi is scale-free for CW-stdev (NIPS 2008, Lemma 3) (selftune)
    tuning = (Axis("eta", "confidence", PHI, grid=ETA, quick=QUICK_ETA, in_train=True),)

    def __init__(self, *, eta=0.99, a=1.0, covariance="diag-kl", multiclass="top1", k=None,
                 proba="quadrature", n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False, average=False, dtype="float64"):
        super().__init__(eta=eta, a=a, covariance=covariance, multiclass=multiclass, k=k,
                         proba=proba, n_epochs=n_epochs, shuffle=shuffle,
                         random_state=random_state, fit_intercept=fit_intercept, average=average,
                         dtype=dtype)
