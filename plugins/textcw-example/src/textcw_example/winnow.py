"""Balanced Winnow: mistake-driven learning with multiplicative updates.

Winnow (Littlestone, "Learning quickly when irrelevant attributes abound: a new
linear-threshold algorithm", Machine Learning 2(4), 1988) keeps a linear threshold classifier
and, on a mistake, multiplies the weights of the active features instead of adding to them.
Its mistake bound grows with the logarithm of the number of irrelevant features, which suits
text, where most words are irrelevant to any one category. Balanced Winnow keeps two positive
weight vectors ``u`` and ``v`` and predicts with their difference, so a feature can count
against a category; Dagan, Karov and Roth ("Mistake-driven learning in text categorization",
EMNLP 1997) studied it for text categorization.

The rule implemented
--------------------
Binary, label ``y`` in {-1, +1} (``+1`` is ``classes_[1]``), row ``x``:

- score ``s = (u - v) . x - theta``; predict ``+1`` iff ``s > 0``;
- a *mistake* is ``y s <= 0`` (a tie counts, as everywhere in textcw);
- *update* when ``y s <= margin``. ``margin = 0`` is the pure mistake-driven rule;
  ``margin > 0`` is Dagan et al.'s "thick threshold": training treats ``[theta - margin,
  theta + margin]`` as the threshold, so correct but unconvincing documents also update;
- promotion (``y = +1``): ``u_j <- u_j * alpha ** x_j`` and ``v_j <- v_j * beta ** x_j`` for every
  ``j`` with ``x_j != 0``; demotion (``y = -1``): ``u_j <- u_j * beta ** x_j`` and
  ``v_j <- v_j * alpha ** x_j``.

For binary features (``x_j = 1``) this is exactly the promotion/demotion of Littlestone and of
Dagan et al.: multiply by ``alpha`` (> 1) or ``beta`` (< 1). Raising the multipliers to the power
``x_j`` extends it to weighted features the way exponentiated-gradient updates do (Kivinen and
Warmuth, "Exponentiated gradient versus gradient descent for linear predictors", Information
and Computation 132(1), 1997): a feature counts as ``x_j`` repetitions of a binary one, and a
negative value moves its weights the other way.

Weights saturate at ``[1e-100, 1e100]`` (see :mod:`textcw_example.kernels`): on data that is not
separable, multiplicative weights would otherwise overflow to infinity.

Both vectors start at ``init_weight``, so a feature never involved in a mistake has net weight
zero and the learner starts from the zero classifier, like the perceptron; ``theta`` then acts
as a fixed bias. Starting weights are a free choice of the algorithm: only their scale relative
to ``theta`` matters.

Multi-class (textcw's single-constraint top-1 scheme, as for every textcw learner): label ``k``
scores ``s_k = (u_k - v_k) . x``; against the highest-scoring other label ``r`` (ties to the lowest
index), ``m = s_y - s_r`` is a mistake if ``m <= 0`` and updates if ``m <= margin``, promoting
label ``y``'s vectors and demoting label ``r``'s with the binary rule. ``theta`` shifts every
label's score equally and so plays no part.
"""

from __future__ import annotations

import math

import numpy as np
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.params import POSITIVE, Interval

from textcw_example import kernels


class BalancedWinnow(OnlineLinearClassifier):
    """Balanced Winnow (Littlestone 1988; Dagan, Karov and Roth 1997).

    Parameters
    ----------
    alpha : float > 1, default 1.5
        Promotion factor: the weights that should grow are multiplied by ``alpha ** x_j``.
    beta : float in (0, 1), default 0.5
        Demotion factor: the weights that should shrink are multiplied by ``beta ** x_j``.
    theta : float >= 0, default 1.0
        Threshold of the binary classifier: predict ``classes_[1]`` iff ``(u - v) . x > theta``.
        Unused in multi-class problems, where it would shift every label equally.
    margin : float >= 0, default 0.0
        Half-width of the "thick threshold" used in training (Dagan et al. 1997): update also
        when the document is on the right side by at most ``margin``.
    init_weight : float > 0, default 1.0
        Initial value of every entry of ``u`` and ``v``. It sets the scale of the weights
        relative to ``theta``.
    n_epochs : int >= 1, default 5
    shuffle : bool, default True
        Visit the documents in a new random order each epoch.
    random_state : int or None, default 0
        Seed of the shuffling; the default makes every run give the same model (None: a fresh one).
    fit_intercept : bool, default False
        Learn a bias as the weight of an extra, always-active feature.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The net weights ``u - v``.
    intercept_ : ndarray of shape (1,) or (n_classes,)
        Binary: ``-theta`` (plus the learned bias with ``fit_intercept``). Multi-class: the
        learned bias, else zeros.
    n_features_in_ : int
    mistakes_ : list of int
        Online mistakes of each epoch, counted before each update.
    n_updates_ : list of int
        Updates of each epoch (more than the mistakes when ``margin > 0``).

    Notes
    -----
    Multiplicative updates make the weights grow or shrink geometrically: a feature promoted
    ``k`` more times than it was demoted has ``u_j = init_weight * alpha ** k``. In float64 that
    overflows after about ``709 / log(alpha)`` net promotions of one feature (1750 for
    ``alpha = 1.5``); on data that needs more, lower ``alpha``.

    References
    ----------
    N. Littlestone. Learning quickly when irrelevant attributes abound: a new linear-threshold
    algorithm. Machine Learning 2(4):285-318, 1988.

    I. Dagan, Y. Karov, D. Roth. Mistake-driven learning in text categorization. EMNLP 1997.

    Examples
    --------
    >>> import textcw
    >>> model = textcw.make_learner("balanced-winnow", alpha=1.2, beta=0.8)
    """

    constraints = {
        **OnlineLinearClassifier.constraints,
        "alpha": Interval(1.0, closed="neither"),
        "beta": Interval(0.0, 1.0, closed="neither"),
        "theta": Interval(0.0, closed="left"),
        "margin": Interval(0.0, closed="left"),
        "init_weight": POSITIVE,
    }
    state_names = ("u", "v")
    binary_kernel = kernels.binary_epoch
    multiclass_kernel = kernels.multiclass_epoch

    def __init__(self, *, alpha=1.5, beta=0.5, theta=1.0, margin=0.0, init_weight=1.0,
                 n_epochs=5, shuffle=True, random_state=0, fit_intercept=False):
        self.alpha = alpha
        self.beta = beta
        self.theta = theta
        self.margin = margin
        self.init_weight = init_weight
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def new_state(self, n_rows, n_labels):
        shape = (n_rows,) if n_labels is None else (n_rows, n_labels)
        weight = float(self.init_weight)
        return {"u": np.full(shape, weight), "v": np.full(shape, weight)}

    def kernel_values(self):
        # By the kernels' parameter names: the base class binds each to the parameter it names.
        return {"log_alpha": math.log(self.alpha), "log_beta": math.log(self.beta),
                "theta": float(self.theta), "margin": float(self.margin)}

    # The base class reads the weights from a state array named "mu"; Winnow's weights are the
    # difference of its two vectors, and its binary threshold is part of the decision function.
    @property
    def coef_(self) -> np.ndarray:
        state = self.fitted_state()
        w = (state["u"] - state["v"])[: self.n_features_in_]
        return w.reshape(1, -1) if w.ndim == 1 else w.T.copy()

    @property
    def intercept_(self) -> np.ndarray:
        state = self.fitted_state()
        binary = state["u"].ndim == 1
        if self.fit_intercept:
            bias = np.atleast_1d(state["u"][self.n_features_in_] - state["v"][self.n_features_in_])
        else:
            bias = np.zeros(1 if binary else state["u"].shape[1])
        return bias - float(self.theta) if binary else bias
