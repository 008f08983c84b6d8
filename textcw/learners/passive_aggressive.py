"""Passive-Aggressive learners PA, PA-I and PA-II (Crammer et al., JMLR 2006, section 3).

On hinge loss ``l = max(0, 1 - y w.x)`` the weights move by ``tau y x`` with ``tau = l / ||x||^2``
(PA), ``min(C, l / ||x||^2)`` (PA-I) or ``l / (||x||^2 + 1/(2C))`` (PA-II). Multi-class uses the
top-1 difference vector, whose squared norm is ``2 ||x||^2``.
"""

from __future__ import annotations

import numpy as np

from textcw.learners._kernels import first_order
from textcw.learners._kernels.constants import PA, PA1, PA2
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.params import POSITIVE


class PassiveAggressive(OnlineLinearClassifier):
    """PA: the smallest change that attains margin 1 (no aggressiveness parameter).

    Parameters
    ----------
    n_epochs, shuffle, random_state, fit_intercept
        As for every online learner.
    """

    _rule = PA
    _state_names = ("mu",)
    _binary_kernel = first_order.binary_epoch
    _multiclass_kernel = first_order.multiclass_top1_epoch

    def __init__(self, *, n_epochs=5, shuffle=True, random_state=None, fit_intercept=False):
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def _new_state(self, n_rows, n_labels):
        shape = (n_rows,) if n_labels is None else (n_rows, n_labels)
        return {"mu": np.zeros(shape)}

    def _kernel_args(self):
        return (self._rule, float(getattr(self, "C", 1.0)))


class _PassiveAggressiveC(PassiveAggressive):
    _constraints = {**PassiveAggressive._constraints, "C": POSITIVE}

    def __init__(self, *, C=1.0, n_epochs=5, shuffle=True, random_state=None, fit_intercept=False):
        self.C = C
        super().__init__(n_epochs=n_epochs, shuffle=shuffle, random_state=random_state,
                         fit_intercept=fit_intercept)


class PassiveAggressiveI(_PassiveAggressiveC):
    """PA-I: step capped at ``C`` (hinge-loss slack, JMLR 2006 eq. 4).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness.
    """

    _rule = PA1


class PassiveAggressiveII(_PassiveAggressiveC):
    """PA-II: squared-slack penalty ``C xi^2`` (JMLR 2006 eq. 5).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness.
    """

    _rule = PA2
