"""The first-order family: the perceptron and the passive-aggressive learners.

They keep only weights (``mu``) and differ by one rule code (``PERCEPTRON``, ``PA``, ``PA1``,
``PA2`` in :mod:`textcw.learners._kernels.constants`); in multi-class problems they share the
strategies of :mod:`textcw.learners.multiclass` (top-1, or the top-k competitors updated in
sequence, in parallel or jointly; docs/algorithms.md "Multi-class"). The PA learners can predict
with their averaged weights (``average=True``, :mod:`textcw.learners.averaging`).
"""

from __future__ import annotations

import numpy as np

from textcw.errors import ParameterError
from textcw.learners import multiclass as mc
from textcw.learners._kernels import first_order, first_order_kbest
from textcw.learners._kernels.constants import MC_TOP1
from textcw.learners.averaging import AVERAGE_COMBINE, AveragedMean
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.protocol import bind_kernel


class FirstOrderLearner(AveragedMean, OnlineLinearClassifier):
    """Weights ``mu``, one rule code (``rule``), and the multi-class strategies; with
    ``average=True`` (where a subclass has the parameter) also the averaging arrays, for every
    strategy."""

    rule: int
    kernel_state_names = ("mu",)
    state_names = AveragedMean.state_names
    constraints = {**OnlineLinearClassifier.constraints, **mc.CONSTRAINTS}

    @property
    def state_combine(self):
        return {"mu": "mean", **(AVERAGE_COMBINE if self.averaged else {})}

    def state_shapes(self, n_rows, n_labels):
        shape = self.weight_shape(n_rows, n_labels)
        return {"mu": shape, **self.average_shapes(shape)}

    def new_state(self, n_rows, n_labels):
        shape = self.weight_shape(n_rows, n_labels)
        return {"mu": np.zeros(shape), **self.average_state(shape)}

    def validate_params(self) -> None:
        super().validate_params()
        mc.check_strategy(self)

    def check_classes(self, n_classes):
        mc.competitors(self, n_classes)
        self.check_average_support(n_classes)

    def strategy(self, binary: bool) -> int:
        """The multi-class update (a ``MC_*`` code); top-1 for binary problems."""
        return MC_TOP1 if binary else mc.MULTICLASS_CODES[self.multiclass]

    def epoch_call(self, binary):
        strategy = self.strategy(binary)
        if binary:
            kernel = first_order.binary_epoch
        elif strategy == MC_TOP1:
            kernel = first_order.multiclass_top1_epoch
        else:
            kernel = first_order_kbest.multiclass_epoch
        values = {
            "rule": self.rule,
            # PA-I and PA-II's aggressiveness; the kernels take it for every rule
            "C": float(self.resolved("C")) if hasattr(self, "C") else 1.0,
            **self.average_values(),
        }
        if strategy != MC_TOP1:
            values.update(strategy=strategy, k=mc.competitors(self, len(self.classes_)))
        weights = self.__dict__.get("_epoch_weights")  # while fit/partial_fit weights examples
        if weights is not None:
            values["weights"] = weights
        return bind_kernel(kernel, self.kernel_state_names, values)

    def check_weight_support(self, binary: bool) -> None:
        """Weights scale the perceptron's step and PA-I/PA-II's ``C`` (docs/algorithms.md
        "Weighted examples"), in the binary and top-1 updates; the k-competitor strategies
        would need a weighted joint problem and are refused."""
        if self.strategy(binary) != MC_TOP1:
            raise ParameterError(
                f"{type(self).__name__}: sample_weight and class_weight are supported for binary "
                f"problems and multiclass='top1', not multiclass={self.multiclass!r}; use "
                "multiclass='top1' for weighted examples")


# The name before the family had a module of its own (kept for one release).
FirstOrderMulticlass = FirstOrderLearner
