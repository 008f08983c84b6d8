"""The perceptron (Rosenblatt 1958): on a mistake, ``w += y x``.

Multi-class: on a mistake against the top competitor ``r``, ``w_y += x`` and ``w_r -= x``
(``multiclass="top1"``, Collins 2002). ``seq`` makes that step for each of the top-k competitors
the current weights still rank at or above ``y``; ``par`` averages the k steps taken from the same
weights (:mod:`textcw.learners._kernels.first_order_kbest`). The perceptron minimises nothing, so
there is no joint k-constraint problem: ``multiclass="exact"`` is refused.
"""

from __future__ import annotations

from textcw.errors import ParameterError
from textcw.learners import weighting
from textcw.learners._kernels.constants import PERCEPTRON
from textcw.learners.first_order import FirstOrderLearner


class Perceptron(FirstOrderLearner):
    """Mistake-driven perceptron.

    Parameters
    ----------
    multiclass : {"top1", "seq", "par"}, default "top1"
        The multi-class update (binary problems ignore it): ``top1`` the step against the
        highest-scoring other label; ``seq`` the step against each of the top-k competitors the
        current weights still rank at or above the true label; ``par`` the k steps from the same
        weights, averaged.
    k : int, "all" or None, default None
        Competitors: the ``k`` highest-scoring labels other than the true one, ``1 <= k <= K-1``
        (checked at fit time); ``"all"`` is ``K - 1``; ``None`` is 1 for ``top1`` and ``K - 1``
        otherwise.
    n_epochs : int, default 5
    shuffle : bool, default True
    random_state : int or None, default 0
        Seed of the shuffling; the default makes every run the same (as `textcw train --seed 0`),
        None draws a fresh order each time.
    fit_intercept : bool, default False
    class_weight : None, "balanced" or dict, default None
        Multiplies each document's weight by its label's (docs/algorithms.md "Weighted
        examples"); ``"balanced"`` is ``n_samples / (n_classes * count(label))`` over ``fit``'s
        labels (refused by ``partial_fit``).
    """

    rule = PERCEPTRON
    constraints = {**FirstOrderLearner.constraints, **weighting.CONSTRAINTS}

    def __init__(self, *, multiclass="top1", k=None, n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False, class_weight=None):
        self.class_weight = class_weight
        self.multiclass = multiclass
        self.k = k
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def validate_params(self) -> None:
        super().validate_params()
        if self.multiclass == "exact":
            raise ParameterError(
                "Perceptron: multiclass='exact' is not defined: the perceptron solves no "
                "optimisation problem, so there is no joint k-constraint problem to solve; use "
                "multiclass='seq' or 'par' (or an exact update of 'pa', 'pa1', 'pa2', 'cw-var', "
                "'cw-stdev' or 'arow')"
            )
