"""Passive-Aggressive learners PA, PA-I and PA-II (Crammer et al., JMLR 2006, section 3).

On hinge loss ``l = max(0, 1 - y w.x)`` the weights move by ``tau y x`` with ``tau = l / ||x||^2``
(PA), ``min(C, l / ||x||^2)`` (PA-I) or ``l / (||x||^2 + 1/(2C))`` (PA-II). Multi-class uses the
top-1 difference vector, whose squared norm is ``2 ||x||^2``, by default; ``multiclass="seq"``,
``"par"`` and ``"exact"`` use the top-k competitors (k-best PA, Crammer and Singer 2003; McDonald
et al. 2004): ``exact`` solves ``min ||W - W_t||^2 / 2`` subject to margin 1 against each
competitor, with one slack per competitor for PA-I (``+ C sum_j xi_j``) and PA-II
(``+ C sum_j xi_j^2``), a quadratic program solved exactly; see
:mod:`textcw.learners._kernels.first_order_kbest` for the rules and why one slack per constraint.
"""

from __future__ import annotations

import numpy as np

from textcw.learners import multiclass as mc
from textcw.learners._kernels import first_order, first_order_kbest
from textcw.learners._kernels.constants import MC_TOP1, PA, PA1, PA2
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.params import SCALE


class FirstOrderMulticlass(OnlineLinearClassifier):
    """The perceptron and PA family: weights ``mu``, one rule code, and the multi-class strategies."""

    _rule: int
    _state_names = ("mu",)
    _constraints = {**OnlineLinearClassifier._constraints, **mc.CONSTRAINTS}
    _late_defaults = mc.DEFAULTS

    def _state_shapes(self, n_rows, n_labels):
        return {"mu": self._weight_shape(n_rows, n_labels)}

    def _new_state(self, n_rows, n_labels):
        return {"mu": np.zeros(self._weight_shape(n_rows, n_labels))}

    def validate_params(self) -> None:
        super().validate_params()
        mc.check_strategy(self)

    def _check_classes(self, n_classes):
        mc.competitors(self, n_classes)

    def _strategy(self, binary: bool) -> int:
        return MC_TOP1 if binary else mc.MULTICLASS_CODES[self.multiclass]

    def _kernel(self, binary):
        if binary:
            return first_order.binary_epoch
        if self._strategy(binary) == MC_TOP1:
            return first_order.multiclass_top1_epoch
        return first_order_kbest.multiclass_epoch

    def _kernel_args(self):
        C = float(getattr(self, "C", 1.0))
        strategy = self._strategy(self._binary)
        if strategy == MC_TOP1:
            return (self._rule, C)
        return (self._rule, strategy, mc.competitors(self, len(self.classes_)), C)


class PassiveAggressive(FirstOrderMulticlass):
    __doc__ = """PA: the smallest change that attains margin 1 (no aggressiveness parameter).

    Parameters
    ----------
""" + mc.PARAMETER_DOC + """\
    n_epochs, shuffle, random_state, fit_intercept
        As for every online learner.
    """

    _rule = PA

    def __init__(self, *, multiclass="top1", k=None, n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False):
        self.multiclass = multiclass
        self.k = k
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept


class _PassiveAggressiveC(PassiveAggressive):
    _constraints = {**PassiveAggressive._constraints, "C": SCALE}

    def __init__(self, *, C=1.0, multiclass="top1", k=None, n_epochs=5, shuffle=True,
                 random_state=0, fit_intercept=False):
        self.C = C
        super().__init__(multiclass=multiclass, k=k, n_epochs=n_epochs, shuffle=shuffle,
                         random_state=random_state, fit_intercept=fit_intercept)


class PassiveAggressiveI(_PassiveAggressiveC):
    __doc__ = """PA-I: step capped at ``C`` (hinge-loss slack, JMLR 2006 eq. 4).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness.
""" + mc.PARAMETER_DOC

    _rule = PA1


class PassiveAggressiveII(_PassiveAggressiveC):
    __doc__ = """PA-II: squared-slack penalty ``C xi^2`` (JMLR 2006 eq. 5).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness.
""" + mc.PARAMETER_DOC

    _rule = PA2
