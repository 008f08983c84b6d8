"""The parameters the two CW variants share (:mod:`textcw.learners.cw_var`,
:mod:`textcw.learners.cw_stdev`): the confidence ``eta`` on top of the Gaussian base class of
:mod:`textcw.learners.gaussian` (Dredze, Crammer and Pereira, "Confidence-weighted linear
classification", ICML 2008; Crammer, Dredze and Pereira, "Exact convex confidence-weighted
learning", NIPS 2008)."""

from __future__ import annotations

from scipy.special import ndtri

from textcw.learners import multiclass as mc
from textcw.learners.averaging import AVERAGE_CONSTRAINTS
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import DTYPE, PROBA, GaussianLinearClassifier
from textcw.learners.params import SCALE, Interval, Options


class ConfidenceWeighted(GaussianLinearClassifier):
    """Common parameters of the two CW variants (:class:`~textcw.learners.cw_var.CWVar`,
    :class:`~textcw.learners.cw_stdev.CWStdev`).

    Parameters
    ----------
    eta : float in (0.5, 1)
        The confidence: after an update the example is classified correctly with probability
        at least ``eta`` under ``N(mu, Sigma)``; ``phi = Phi^{-1}(eta)``.
    a : float > 0, default 1.0
        Initial variance, ``Sigma_1 = a I``.
    covariance : {"diag-kl", "diag-l2", "exact", "full"}, default "diag-kl"
        ``diag-kl`` diagonalises the precision update (KL projection, "Project" in ICML 2008),
        ``diag-l2`` drops the off-diagonal part of the covariance update ("Drop"), ``exact``
        solves the constraint exactly over diagonal covariances (JMLR 2012, section 6.2) and
        ``full`` keeps the whole matrix (small ``d`` only). In multi-class problems each label
        has its own block. ``exact`` cannot be combined with ``multiclass="exact"``.
    multiclass : {"top1", "seq", "par", "exact"}, default "top1"
        The multi-class update (binary problems have one competitor and ignore it): ``top1``
        one binary update against the highest-scoring other label; ``seq`` one update per
        competitor, in score order, each from the current parameters; ``par`` the updates
        from the same start, averaged; ``exact`` all ``k`` constraints solved jointly
        (EMNLP 2009 section 5; MLJ 2013 section 3.3).
    k : int, "all" or None, default None
        Competitors: the ``k`` highest-scoring labels other than the true one, ``1 <= k <= K-1``
        (checked at fit time, when the number of classes ``K`` is known); ``"all"`` is ``K - 1``;
        ``None`` is 1 for ``top1`` and ``K - 1`` otherwise.
    proba : {"quadrature", "sampling"}, default "quadrature"
        How :meth:`predict_proba` computes label probabilities: exactly (closed form or
        quadrature) or by the papers' seeded sampling estimate.
    n_epochs : int, default 5
        Passes over the training data.
    shuffle, random_state, fit_intercept
        As for every online learner; ``random_state`` also seeds ``proba="sampling"``.
    average : bool, default False
        Predict with the average of the means after every example seen (docs/algorithms.md
        "Averaging"); training and the variances are unchanged. Binary and ``top1`` only.
    dtype : {"float64", "float32"}, default "float64"
        The floating-point type of the state (``coef_``, ``sigma_``, the intercept's mean and
        variance). ``"float32"`` halves the state's memory; margins and margin variances are
        still summed in 64 bits. Diagonal covariances, binary problems and ``top1``, without
        ``average``; ``a`` in [1e-20, 1e20] (docs/learners.md "A 32-bit state").

    Notes
    -----
    The default ``eta`` differs by variant because the constraints scale differently (``m >= phi v``
    against ``m >= phi sqrt(v)``); both defaults were chosen on the 20 Newsgroups training split.
    """

    covariances = ("diag-kl", "diag-l2", "exact", "full")
    constraints = {
        **OnlineLinearClassifier.constraints,
        # Any double in (0.5, 1) gives phi = Phi^{-1}(eta) in (2.8e-16, 8.3], a usable confidence.
        "eta": Interval(0.5, 1.0, closed="neither"),
        "a": SCALE,
        "covariance": Options(covariances),
        **mc.CONSTRAINTS,
        "proba": PROBA,
        **AVERAGE_CONSTRAINTS,
        "dtype": DTYPE,
    }

    def __init__(self, *, eta, a=1.0, covariance="diag-kl", multiclass="top1", k=None,
                 proba="quadrature", n_epochs=5, shuffle=True, random_state=0,
                 fit_intercept=False, average=False, dtype="float64"):
        self.dtype = dtype
        self.average = average
        self.eta = eta
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
        """``Phi^{-1}(eta)``, the confidence in standard deviations."""
        return float(ndtri(self.resolved("eta")))

    def step_params(self):
        return {"phi": self.phi}
