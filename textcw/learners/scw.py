"""Soft confidence-weighted learning, SCW-I and SCW-II (Wang, Zhao and Hoi, ICML 2012).

CW-stdev's constraint ``y mu.x >= phi sqrt(x' Sigma x)`` becomes a loss
``l = max(0, phi sqrt(x' Sigma x) - y mu.x)`` with slack, as PA-I and PA-II soften PA:

- SCW-I: ``alpha = min(C, alpha_stdev)``, CW-stdev's step (JMLR 2012 eq. 31) capped at ``C``;
- SCW-II: with ``n = v + 1/(2C)`` and ``gamma = phi sqrt(phi^2 m^2 v^2 + 4 n v (n + v phi^2))``,
  ``alpha = max(0, (-(2 m n + phi^2 m v) + gamma) / (2 (n^2 + n v phi^2)))``.

Both then set ``sqrt(u) = (-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v)) / 2``,
``beta = alpha phi / (sqrt(u) + v alpha phi)``, ``mu += alpha y Sigma x`` and
``Sigma -= beta (Sigma x)(Sigma x)'``. Widely copied implementations write SCW-II's ``gamma``
with ``v*2`` and ``phi*2`` where the squares are meant; the derivation is in
:func:`textcw.learners._kernels.gaussian_rules.scw2_alpha` and the tests check it against the
KKT conditions of the SCW-II problem.
"""

from __future__ import annotations

from scipy.special import ndtri

from textcw.learners import multiclass as mc
from textcw.learners import weighting
from textcw.learners._kernels import constants
from textcw.learners.averaging import AVERAGE_CONSTRAINTS
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import DTYPE, PROBA, GaussianLinearClassifier
from textcw.learners.params import SCALE, Interval, Options
from textcw.learners.selftune import SCW_ETA, Axis


class SoftConfidenceWeighted(GaussianLinearClassifier):
    """Soft confidence-weighted learning (ICML 2012); ``scw1`` and ``scw2`` are the two losses.

    Parameters
    ----------
    eta : float in (0.5, 1), default 0.9
        The confidence of the (soft) constraint; ``phi = Phi^{-1}(eta)``.
    C : float > 0, default 1.0
        Aggressiveness: SCW-I caps the mean step at ``C``; SCW-II adds ``1/(2C)`` to the
        margin variance in the step size.
    a : float > 0, default 1.0
        Initial variance, ``Sigma_1 = a I``.
    covariance : {"diag-kl", "diag-l2", "full"}, default "diag-kl"
        As for CW: ``diag-kl`` adds ``alpha phi / sqrt(u) x_j^2`` to each precision, ``diag-l2``
        keeps the diagonal of the covariance update, ``full`` the whole matrix (small ``d`` only).
    multiclass : {"top1", "seq", "par"}, default "top1"
        The multi-class update (binary problems ignore it), as for CW (EMNLP 2009 section 5):
        ``top1`` one update against the highest-scoring other label; ``seq`` one update per
        competitor, in score order, each from the current parameters; ``par`` the ``k`` updates
        from the same start, averaged. Each is SCW's own binary update on the pair's difference
        vector. There is no ``exact``: the ICML 2012 paper gives no joint soft problem.
    k : int, "all" or None, default None
        Competitors: the ``k`` highest-scoring labels other than the true one, ``1 <= k <= K-1``
        (checked at fit time); ``"all"`` is ``K - 1``; ``None`` is 1 for ``top1`` and ``K - 1``
        otherwise.
    proba : {"quadrature", "sampling"}, default "quadrature"
        How :meth:`predict_proba` computes label probabilities: exactly (closed form or
        quadrature) or by the papers' seeded sampling estimate.
    n_epochs : int, default 5
    shuffle, random_state, fit_intercept
        As for every online learner; ``random_state`` also seeds ``proba="sampling"``.
    class_weight : None, "balanced" or dict, default None
        Multiplies each document's weight by its label's (a document of weight ``s`` gets ``s C``; docs/algorithms.md
        "Weighted examples"); ``"balanced"`` is ``n_samples / (n_classes * count(label))`` over
        ``fit``'s labels (refused by ``partial_fit``).
    average : bool, default False
        Predict with the average of the means after every example seen (docs/algorithms.md
        "Averaging"); training and the variances are unchanged.
    dtype : {"float64", "float32"}, default "float64"
        The floating-point type of the state; ``"float32"`` halves its memory (diagonal
        covariances, without ``average``): as for
        :class:`~textcw.learners.confidence_weighted.ConfidenceWeighted`.

    Notes
    -----
    Weights (``class_weight``), ``average`` and ``dtype="float32"`` need the top-1 update in
    multi-class problems, as for CW and AROW.
    """

    covariances = ("diag-kl", "diag-l2", "full")
    constraints = {
        **OnlineLinearClassifier.constraints,
        "eta": Interval(0.5, 1.0, closed="neither"),
        "C": SCALE,
        "a": SCALE,
        "covariance": Options(covariances),
        # no "exact": the ICML 2012 paper gives no joint problem over k soft constraints
        "multiclass": Options(("top1", "seq", "par")),
        "k": mc.K_COMPETITORS,
        "proba": PROBA,
        **weighting.CONSTRAINTS,
        **AVERAGE_CONSTRAINTS,
        "dtype": DTYPE,
    }

    def __init__(self, *, eta=0.9, C=1.0, a=1.0, covariance="diag-kl", multiclass="top1", k=None,
                 proba="quadrature", n_epochs=5, shuffle=True, random_state=0, fit_intercept=False,
                 class_weight=None, average=False, dtype="float64"):
        self.dtype = dtype
        self.average = average
        self.class_weight = class_weight
        self.eta = eta
        self.C = C
        self.a = a
        self.covariance = covariance
        self.multiclass = multiclass
        self.k = k
        self.proba = proba
        self.n_epochs = n_epochs
        self.shuffle = shuffle
        self.random_state = random_state
        self.fit_intercept = fit_intercept

    @property
    def phi(self) -> float:
        """``Phi^{-1}(eta)``."""
        return float(ndtri(self.resolved("eta")))

    def step_params(self):
        return {"phi": self.phi, "C": self.resolved("C")}


class SCW1(SoftConfidenceWeighted):
    """SCW-I: CW-stdev's step capped at ``C`` (ICML 2012).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness: the mean step ``alpha`` is capped at ``C``.
    eta, a, covariance, multiclass, k, proba, n_epochs, shuffle, random_state, fit_intercept, average, dtype
        As for :class:`SoftConfidenceWeighted`.
    """

    rule = constants.SCW1
    # SCW-I caps the mean step alpha, of size 1/sqrt(v): C = c / sqrt(a q) (selftune)
    tuning = (SCW_ETA, Axis("C", "inverse-margin-sd", (0.1, 1.0, 10.0), grid=(0.01, 0.1, 1.0),
                            quick=(0.1,), in_train=True))


class SCW2(SoftConfidenceWeighted):
    """SCW-II: squared slack, ``n = v + 1/(2C)`` (ICML 2012).

    Parameters
    ----------
    C : float > 0, default 1.0
        Aggressiveness: ``1/(2C)`` is added to the margin variance in the step size.
    eta, a, covariance, multiclass, k, proba, n_epochs, shuffle, random_state, fit_intercept, average, dtype
        As for :class:`SoftConfidenceWeighted`.
    """

    rule = constants.SCW2
    # SCW-II adds 1/(2C) to v: C = c / (a q) (selftune)
    tuning = (SCW_ETA, Axis("C", "inverse-margin-variance", (0.1, 1.0, 10.0), grid=(0.01, 0.1, 1.0),
                            quick=(0.1,), in_train=True))
