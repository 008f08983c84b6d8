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

from textcw.errors import ParameterError
from textcw.learners._kernels.constants import PA, PA1, PA2
from textcw.learners import weighting
from textcw.learners.selftune import PA_C
from textcw.learners.averaging import AVERAGE_CONSTRAINTS
from textcw.learners.first_order import FirstOrderLearner, FirstOrderMulticlass  # noqa: F401
from textcw.learners.params import SCALE


class PassiveAggressive(FirstOrderLearner):
    """PA: the smallest change that attains margin 1 (no aggressiveness parameter).

    Parameters
    ----------
    multiclass : {"top1", "seq", "par", "exact"}, default "top1"
        The multi-class update (binary problems ignore it): ``top1`` the step against the
        highest-scoring other label; ``seq`` one step per competitor in turn; ``par`` the k
        steps from the same weights, averaged; ``exact`` the k margin constraints solved jointly
        (k-best PA: JMLR 2006 equations 2, 4 and 5 with one slack per competitor).
    k : int, "all" or None, default None
        Competitors: the ``k`` highest-scoring other labels, ``1..K-1``, ``"all"`` or ``None``
        (1 for ``top1``, ``K - 1`` otherwise).
    n_epochs, shuffle, random_state, fit_intercept
        As for every online learner.
    average : bool, default False
        Predict with the average of the weights after every example seen (over all epochs and
        ``partial_fit`` calls), as the averaged perceptron does, instead of the last weights;
        training and ``mistakes_`` are unchanged. Kept lazily in O(nnz) per update
        (docs/algorithms.md "Averaging").
    """

    rule = PA
    constraints = {**FirstOrderLearner.constraints, **AVERAGE_CONSTRAINTS}
    state_params = ("fit_intercept", "average")

    def check_weight_support(self, binary: bool) -> None:
        """Plain PA has no slack (JMLR 2006 eq. 2: the margin constraint is hard), so a weight
        has no term to scale: refused. PA-I and PA-II weight their slack (``C -> s C``)."""
        if self.rule == PA:
            raise ParameterError(
                "PassiveAggressive (plain PA) has no weighted update: its margin constraint is "
                "hard (JMLR 2006 eq. 2) and has no slack term for a weight to scale; use "
                "PA-I or PA-II (PassiveAggressiveI, PassiveAggressiveII), where a weight s gives the "
                "example the aggressiveness s*C")
        super().check_weight_support(binary)

    def __init__(self, *, multiclass="top1", k=None, n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False, average=False):
        self.average = average
        self.multiclass = multiclass
        self.k = k
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept


class _PassiveAggressiveC(PassiveAggressive):
    constraints = {**PassiveAggressive.constraints, "C": SCALE, **weighting.CONSTRAINTS}
    tuning = (PA_C,)

    def __init__(self, *, C=1.0, multiclass="top1", k=None, n_epochs=5, shuffle=True,
                 random_state=0, fit_intercept=False, class_weight=None, average=False):
        self.C = C
        self.class_weight = class_weight
        super().__init__(multiclass=multiclass, k=k, n_epochs=n_epochs, shuffle=shuffle,
                         random_state=random_state, fit_intercept=fit_intercept, average=average)


class PassiveAggressiveI(_PassiveAggressiveC):
    """PA-I: step capped at ``C`` (hinge-loss slack, JMLR 2006 eq. 4).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness; a document of weight ``s`` gets ``s C``.
    multiclass, k, n_epochs, shuffle, random_state, fit_intercept, average
        As for :class:`PassiveAggressive`.
    class_weight : None, "balanced" or dict, default None
        Multiplies each document's weight by its label's (docs/algorithms.md "Weighted
        examples"); ``"balanced"`` is ``n_samples / (n_classes * count(label))`` over ``fit``'s
        labels (refused by ``partial_fit``).
    """

    rule = PA1


class PassiveAggressiveII(_PassiveAggressiveC):
    """PA-II: squared-slack penalty ``C xi^2`` (JMLR 2006 eq. 5).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness; a document of weight ``s`` gets ``s C``.
    multiclass, k, n_epochs, shuffle, random_state, fit_intercept, average
        As for :class:`PassiveAggressive`.
    class_weight : None, "balanced" or dict, default None
        Multiplies each document's weight by its label's (docs/algorithms.md "Weighted
        examples"); ``"balanced"`` is ``n_samples / (n_classes * count(label))`` over ``fit``'s
        labels (refused by ``partial_fit``).
    """

    rule = PA2
