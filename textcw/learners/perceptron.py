"""The perceptron (Rosenblatt 1958): on a mistake, ``w += y x``.

Multi-class: on a mistake against the top competitor ``r``, ``w_y += x`` and ``w_r -= x``.
"""

from __future__ import annotations

import numpy as np

from textcw.learners._kernels import first_order
from textcw.learners._kernels.constants import PERCEPTRON
from textcw.learners.base import OnlineLinearClassifier


class Perceptron(OnlineLinearClassifier):
    """Mistake-driven perceptron.

    Parameters
    ----------
    n_epochs : int, default 5
    shuffle : bool, default True
    random_state : int or None, default None
    fit_intercept : bool, default False
    """

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
        return (PERCEPTRON, 0.0)
