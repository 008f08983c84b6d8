"""The averaged perceptron (Freund and Schapire, Machine Learning 1999; Collins, EMNLP 2002).

Trains exactly like the perceptron (online mistakes are those of the running weights) but
predicts with the average of the weight vectors after every example seen, which behaves like a
large-margin voted classifier and is far less sensitive to the last few examples.
"""

from __future__ import annotations

import numpy as np

from textcw.learners._kernels import averaged
from textcw.learners.base import OnlineLinearClassifier


class AveragedPerceptron(OnlineLinearClassifier):
    """Averaged perceptron.

    Parameters
    ----------
    n_epochs : int, default 5
    shuffle : bool, default True
    random_state : int or None, default 0
        Seed of the shuffling; the default makes every run the same (as `textcw train --seed 0`),
        None draws a fresh order each time.
    fit_intercept : bool, default False

    Notes
    -----
    The average runs over every example of every epoch (and every ``partial_fit`` call);
    ``coef_`` is that average, ``mistakes_`` counts the running perceptron's mistakes.
    """

    state_names = ("mu", "w", "u", "count")
    # the running weights and the average are averaged over shards, the example counts summed,
    # and u follows from them (textcw.scale.combine)
    state_combine = {"mu": "mean", "w": "mean", "count": "sum", "u": "derived"}
    binary_kernel = averaged.binary_epoch
    multiclass_kernel = averaged.multiclass_top1_epoch

    def __init__(self, *, n_epochs=5, shuffle=True, random_state=0, fit_intercept=False):
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def derive_combined_state(self, state):
        """``u`` of a combined model: keep the invariant ``mu = w - u / count`` (Daume's trick), so
        that ``partial_fit`` continues from the combined average (:func:`textcw.combine`)."""
        return {**state, "u": (state["w"] - state["mu"]) * state["count"][0]}

    def state_shapes(self, n_rows, n_labels):
        shape = self.weight_shape(n_rows, n_labels)
        return {"mu": shape, "w": shape, "u": shape, "count": (1,)}

    def new_state(self, n_rows, n_labels):
        shape = self.weight_shape(n_rows, n_labels)
        return {"mu": np.zeros(shape), "w": np.zeros(shape), "u": np.zeros(shape),
                "count": np.zeros(1)}
