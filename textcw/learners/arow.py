"""AROW: adaptive regularization of weight vectors (Crammer, Kulesza and Dredze, MLJ 2013).

CW's hard constraint is replaced by a loss and a regulariser on the confidence: each example
minimises ``KL(N(mu, Sigma) || N(mu_t, Sigma_t)) + (1/(2r)) loss(mu; x, y) + (1/(2r)) x' Sigma x``
(MLJ 2013, eq. 3), so a mislabeled example moves the model only a bounded amount and AROW
degrades gracefully under label noise where CW overfits it. Updates happen when ``m < 1``:

- squared hinge: ``beta = 1 / (v + r)``, ``alpha = (1 - m) beta`` (eqs. 12, 16);
- hinge: ``alpha = min(1/(2r), (1 - m) / v)``, PA-I on ``Sigma^{1/2} x`` (section 3.2, eq. 23);

then ``mu += alpha y Sigma x`` and ``Sigma^{-1} += x x' / r`` (eq. 15) for both losses.

Multi-class (section 3.3): ``multiclass="top1"`` is the top-1 reduction (Fig. 3, eqs. 31-32);
``multiclass="exact"`` is the full multi-class update (Fig. 2): the mean solves eq. 27, the squared
multi-class hinge of eq. 25 over the top-k competitors with one shared slack (a quadratic program
solved exactly, :func:`textcw.learners._kernels.shared_qp.arow_multipliers`), and the covariance
follows eq. 29 with ``f_t = sum_l f(x, l)`` (eq. 30), so every label block shrinks, whatever ``k``;
``seq`` and ``par`` apply the binary update to each competitor in turn or from the same start (EMNLP
2009 section 5.2). The paper defines the full update for the squared hinge only, so ``loss="hinge"``
with ``multiclass="exact"`` is refused.
"""

from __future__ import annotations

from textcw.errors import ParameterError
from textcw.learners import multiclass as mc
from textcw.learners import weighting
from textcw.learners._kernels.constants import AROW_HINGE, AROW_SQUARED_HINGE
from textcw.learners.selftune import Axis, decades
from textcw.learners.averaging import AVERAGE_CONSTRAINTS
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import DTYPE, PROBA, GaussianLinearClassifier
from textcw.learners.params import SCALE, Options

LOSS_CODES = {"squared_hinge": AROW_SQUARED_HINGE, "hinge": AROW_HINGE}


class AROW(GaussianLinearClassifier):
    """Adaptive regularization of weight vectors (MLJ 2013).

    Parameters
    ----------
    r : float > 0, default 1.0
        Regularisation: the weight of the current example is ``1/(2r)``. Smaller ``r`` means
        larger steps and faster shrinking variances; larger ``r`` is more conservative (and
        more robust to label noise).
    loss : {"squared_hinge", "hinge"}, default "squared_hinge"
        ``squared_hinge`` is the paper's main algorithm; ``hinge`` is AROW-H (section 3.2).
    a : float > 0, default 1.0
        Initial variance, ``Sigma_1 = a I``.
    covariance : {"diag-kl", "diag-l2", "full"}, default "diag-kl"
        ``diag-kl`` keeps the diagonal of the precision (``1/s_j += x_j^2 / r``), ``diag-l2``
        the diagonal of the covariance update, ``full`` the whole matrix (small ``d`` only).
    multiclass : {"top1", "seq", "par", "exact"}, default "top1"
        The multi-class update (binary problems ignore it): ``top1``, ``seq`` and ``par`` as for
        CW (one update against the top competitor; one per competitor in turn; k updates from
        the same start, averaged); ``exact`` MLJ 2013's full multi-class update (section 3.3,
        equations 25 to 30), which shrinks every label's variances; squared hinge only.
    k : int, "all" or None, default None
        Competitors: the ``k`` highest-scoring other labels, ``1..K-1``, ``"all"`` or ``None``
        (1 for ``top1``, ``K - 1`` otherwise).
    proba : {"quadrature", "sampling"}, default "quadrature"
        How :meth:`predict_proba` computes label probabilities: exactly (closed form or
        quadrature) or by the papers' seeded sampling estimate.
    n_epochs : int, default 5
    shuffle, random_state, fit_intercept
        As for every online learner; ``random_state`` also seeds ``proba="sampling"``.
    class_weight : None, "balanced" or dict, default None
        Multiplies each document's weight by its label's (a document of weight ``s`` acts as ``r -> r / s``; docs/algorithms.md
        "Weighted examples"); ``"balanced"`` is ``n_samples / (n_classes * count(label))`` over
        ``fit``'s labels (refused by ``partial_fit``).
    average : bool, default False
        Predict with the average of the means after every example seen (docs/algorithms.md
        "Averaging"); training and the variances are unchanged. Binary and ``top1`` only.
    dtype : {"float64", "float32"}, default "float64"
        The floating-point type of the state; ``"float32"`` halves its memory (diagonal
        covariances, without ``average``): as for
        :class:`~textcw.learners.confidence_weighted.ConfidenceWeighted`.
    """

    covariances = ("diag-kl", "diag-l2", "full")
    # beta = 1 / (v + r): r = c a q against v = a q on a new document (selftune)
    tuning = (Axis("r", "margin-variance", (0.01, 0.1, 1.0, 10.0, 100.0), grid=decades(-2, 4),
                   quick=(0.1, 10.0)),)
    constraints = {
        **OnlineLinearClassifier.constraints,
        "r": SCALE,
        "loss": Options(tuple(LOSS_CODES)),
        "a": SCALE,
        "covariance": Options(covariances),
        **mc.CONSTRAINTS,
        "proba": PROBA,
        **weighting.CONSTRAINTS,
        **AVERAGE_CONSTRAINTS,
        "dtype": DTYPE,
    }

    def __init__(self, *, r=1.0, loss="squared_hinge", a=1.0, covariance="diag-kl",
                 multiclass="top1", k=None, proba="quadrature", n_epochs=5, shuffle=True,
                 random_state=0, fit_intercept=False, class_weight=None, average=False,
                 dtype="float64"):
        self.dtype = dtype
        self.average = average
        self.class_weight = class_weight
        self.r = r
        self.loss = loss
        self.a = a
        self.covariance = covariance
        self.multiclass = multiclass
        self.k = k
        self.proba = proba
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    def rule_code(self):
        return LOSS_CODES[self.loss]

    def validate_params(self) -> None:
        super().validate_params()
        if self.multiclass == "exact" and self.loss == "hinge":
            raise ParameterError(
                "AROW: multiclass='exact' with loss='hinge' is not defined: the full multi-class "
                "update of MLJ 2013 (section 3.3, eqs. 25-30) is for the squared hinge; use "
                "loss='squared_hinge', or multiclass='seq' or 'par' with the hinge"
            )

    def step_params(self):
        return {"r": self.resolved("r")}
