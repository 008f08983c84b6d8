"""CW "var": the linearised confidence constraint (Dredze, Crammer, Pereira, ICML 2008).

After each update ``y (mu . x) >= phi x' Sigma x`` (JMLR 2012 eq. 10); closed form (eq. 18) in
:func:`textcw.learners._kernels.gaussian_rules.cw_var_steps`, exact diagonal form (root finding)
in :mod:`textcw.learners._kernels.gaussian_exact`.
"""

from __future__ import annotations

from textcw.learners._kernels.constants import CW_VAR
from textcw.learners.gaussian import ConfidenceWeighted


class CWVar(ConfidenceWeighted):
    __doc__ = "Confidence-weighted learning, variance form (ICML 2008).\n" + ConfidenceWeighted.__doc__
    rule = CW_VAR

    def __init__(self, *, eta=0.95, a=1.0, covariance="diag-kl", multiclass="top1", k=None,
                 proba="quadrature", n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False):
        super().__init__(eta=eta, a=a, covariance=covariance, multiclass=multiclass, k=k,
                         proba=proba, n_epochs=n_epochs, shuffle=shuffle,
                         random_state=random_state, fit_intercept=fit_intercept)
