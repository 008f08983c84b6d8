"""Stochastic gradient descent on the hinge, log or modified-Huber loss, with L2 decay.

The losses are named as scikit-learn's ``SGDClassifier`` names them (``"log_loss"`` since
scikit-learn 1.1); the older ``"log"`` is a deprecated alias that warns and fits the same model.

Each example takes one gradient step on ``loss(y w.x) + (alpha/2) ||w||^2``:
``w <- (1 - eta_t alpha) w + eta_t g y x`` with ``g = -dloss/dm`` (see
:mod:`textcw.learners._kernels.sgd` for the losses and the ``O(nnz)`` scaled-weight trick).

Learning-rate schedules, with ``t`` the number of examples seen (1, 2, ...; it continues across
epochs and ``partial_fit`` calls):

- ``"decay"`` (default): ``eta_t = eta0 / (1 + eta0 alpha t)``, the schedule Bottou recommends
  for L2-regularised SGD ("Stochastic gradient descent tricks", 2012); the decay factors
  telescope, so the weights shrink as ``1 / (1 + eta0 alpha t)`` overall and never change sign;
- ``"constant"``: ``eta_t = eta0``;
- ``"invscaling"``: ``eta_t = eta0 / t^power_t``.
"""

from __future__ import annotations

import warnings

import numpy as np

from textcw.errors import ParameterError
from textcw.learners import weighting
from textcw.learners._kernels import sgd
from textcw.learners._kernels.constants import CONSTANT, DECAY, HINGE, INVSCALING, LOG, MODIFIED_HUBER
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.params import SCALE, SCALE_HIGH, Interval, Options
from textcw.learners.selftune import Axis, decades

LOSS_CODES = {"hinge": HINGE, "log_loss": LOG, "modified_huber": MODIFIED_HUBER,
              "log": LOG}  # deprecated alias of log_loss (scikit-learn removed it in 1.3)
DEPRECATED_LOSSES = {"log": "log_loss"}
SCHEDULE_CODES = {"decay": DECAY, "constant": CONSTANT, "invscaling": INVSCALING}


class SGD(OnlineLinearClassifier):
    """Stochastic gradient descent for linear classifiers.

    Parameters
    ----------
    loss : {"hinge", "log_loss", "modified_huber"}, default "hinge"
        ``hinge`` is the linear SVM loss, ``log_loss`` logistic regression, ``modified_huber`` a
        smoothed hinge (quadratic for margins in [-1, 1], linear below). ``"log"`` is a
        deprecated alias of ``"log_loss"`` (a ``FutureWarning``; scikit-learn's old name).
    alpha : float >= 0, default 1e-4
        L2 regularisation strength (weight decay ``1 - eta_t alpha`` per example).
    learning_rate : {"decay", "constant", "invscaling"}, default "decay"
        The schedule of ``eta_t`` (module docstring).
    eta0 : float > 0, default 1.0
        Initial learning rate.
    power_t : float > 0, default 0.5
        Exponent of the ``invscaling`` schedule.
    n_epochs : int, default 5
    shuffle, random_state, fit_intercept
        As for every online learner (the intercept is decayed like any weight).
    class_weight : None, "balanced" or dict, default None
        Multiplies each document's weight by its label's (docs/algorithms.md "Weighted
        examples"); ``"balanced"`` is ``n_samples / (n_classes * count(label))`` over ``fit``'s
        labels (refused by ``partial_fit``).
    """

    state_names = ("mu", "count")
    state_combine = {"mu": "mean", "count": "sum"}
    binary_kernel = sgd.binary_epoch
    multiclass_kernel = sgd.multiclass_top1_epoch
    constraints = {
        **OnlineLinearClassifier.constraints,
        "loss": Options(tuple(LOSS_CODES)),
        # alpha enters as eta_t alpha and eta0 alpha t: with both at most 1e100 and t at most
        # 2**53 (the count a float64 keeps exactly) these stay finite.
        "alpha": Interval(0.0, SCALE_HIGH, closed="both", natural=">= 0"),
        "learning_rate": Options(tuple(SCHEDULE_CODES)),
        "eta0": SCALE,
        # invscaling divides by t**power_t: with t up to 2**53 and power_t <= 10 that is at most
        # 1e160, so eta_t >= eta0 1e-160 stays a normal double (eta0 >= 1e-100) for every t.
        "power_t": Interval(0.0, 10.0, closed="right", natural="> 0"),
        **weighting.CONSTRAINTS,
    }
    # tune's grid (no self-tuning: the decay's scale is not a margin's)
    tuning = (Axis("alpha", grid=decades(-7, -1), quick=(1e-5, 1e-3)),)

    def __init__(self, *, loss="hinge", alpha=1e-4, learning_rate="decay", eta0=1.0, power_t=0.5,
                 n_epochs=5, shuffle=True, random_state=0, fit_intercept=False, class_weight=None):
        self.class_weight = class_weight
        self.loss = loss
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.eta0 = eta0
        self.power_t = power_t
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def validate_params(self) -> None:
        super().validate_params()
        if self.loss in DEPRECATED_LOSSES:
            warnings.warn(f"{type(self).__name__}: loss={self.loss!r} is deprecated and will be removed; "
                          f"use loss={DEPRECATED_LOSSES[self.loss]!r}, as scikit-learn names it (same model)",
                          FutureWarning, stacklevel=3)
        if self.learning_rate != "decay" and self.eta0 * self.alpha >= 1.0:
            raise ParameterError(
                f"{type(self).__name__}: eta0={self.eta0!r} with alpha={self.alpha!r} is invalid; "
                f"learning_rate={self.learning_rate!r} needs eta0 * alpha < 1 (otherwise the decay "
                "1 - eta0 * alpha wipes out or flips the weights); lower eta0 or alpha, or use "
                "learning_rate='decay'"
            )

    def state_shapes(self, n_rows, n_labels):
        return {"mu": self.weight_shape(n_rows, n_labels), "count": (1,)}

    def new_state(self, n_rows, n_labels):
        shape = self.weight_shape(n_rows, n_labels)
        return {"mu": np.zeros(shape), "count": np.zeros(1)}

    def kernel_values(self):
        return {"loss": LOSS_CODES[self.loss], "schedule": SCHEDULE_CODES[self.learning_rate],
                "alpha": float(self.alpha), "eta0": float(self.eta0), "power_t": float(self.power_t),
                # one weight per row while fit/partial_fit has example weights (base._run_epoch)
                "weights": self.__dict__.get("_epoch_weights")}

    def check_weight_support(self, binary: bool) -> None:
        """A weight ``s`` makes the example's loss ``s loss(m)``, whose gradient is ``s`` times
        the loss's; the decay (the regulariser's gradient) is unchanged. Defined for every loss,
        schedule and the top-1 multi-class update."""
