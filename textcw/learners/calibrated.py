"""Calibrated label probabilities from the learner's own progressive-validation scores.

An online learner can score each chunk of training documents before it learns from them: those
scores are as honest as scores on held-out data, with no data set aside (progressive
validation, Blum, Kalai and Langford, COLT 1999). :class:`Calibrated` records them during one
pass of training and fits a single temperature ``T`` to them by maximum likelihood
(temperature scaling: Guo, Pleiss, Sun and Weinberger, "On calibration of modern neural
networks", ICML 2017, section 4.2):

- multi-class: ``P(k | x) = softmax_k(z_k / T)``;
- binary: ``P(classes_[1] | x) = 1 / (1 + exp(-z / T))``, the logistic of the margin (Platt
  scaling without its offset; the same formula as the softmax of ``(0, z)``).

``z`` is the learner's decision score (``margin="raw"``) or, for the Gaussian learners, the
score in units of its standard deviation under ``N(mu, Sigma)`` (``margin="standardized"``):
binary ``z = m / sqrt(x' Sigma x)``, the argument of the learners' own probability
``Phi(m / sqrt(v))`` (docs/algorithms.md "Label probabilities"); multi-class
``z_k = m_k / sqrt(mean_j v_j)``, one scale per document so that the order of the labels, and
so the prediction, is kept. ``margin="auto"`` fits both and keeps the one with the lower
log-loss on the recorded scores.

Why one temperature and no offset: ``z / T`` with ``T > 0`` keeps the order of the scores, so
the most probable label is exactly the label ``predict`` returns (binary: the probability of
``classes_[1]`` exceeds 1/2 exactly when the margin is positive, and a zero margin gives 1/2
and ``classes_[0]``, as ``predict`` does). An offset or per-class temperatures could fit the
scores more closely but would break that agreement. The one exception: when the recorded
scores carry no information (the log-loss is lowest at ``1/T = 0``), every probability is
``1/K`` and the argmax is the first class.

Which pass is recorded (``record=``): the documents of the *first* pass are unseen by the model
that scores them, as test documents are unseen by the final model, but that model is younger
than the final one; in the *last* pass the model is nearly final but has seen every document
``n_epochs - 1`` times before. With one epoch both are the same pass.
"""

from __future__ import annotations

import numpy as np
import scipy.optimize
from scipy.special import logsumexp, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from textcw.errors import ParameterError
from textcw.learners.params import Interval, Options, check_params
from textcw.learners.selftune import check_online_learner, check_training_data, epoch_orders, learner_has

MARGINS = ("auto", "raw", "standardized")
# The inverse temperature is searched in [0, BETA_MAX / scale of the scores]: past that the
# probabilities of recorded scores that are all on the right side are 0 and 1 in float64 anyway.
BETA_MAX = 1e6


def standardized_scores(scores: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """Scores over their standard deviation: per label of a binary margin, per document (the
    root mean variance of its labels) for multi-class scores. A zero variance leaves a zero."""
    scale = variances if scores.ndim == 1 else variances.mean(axis=1, keepdims=True)
    out = np.zeros_like(scores, dtype=float)
    np.divide(scores, np.sqrt(np.maximum(scale, 0.0)), out=out, where=np.broadcast_to(scale > 0, scores.shape))
    return out


def as_logits(z: np.ndarray) -> np.ndarray:
    """``(n, K)`` scores: a binary margin ``z`` becomes ``(0, z)``, whose softmax is the logistic."""
    return np.column_stack([np.zeros_like(z), z]) if z.ndim == 1 else z


def temperature_log_loss(beta: float, logits: np.ndarray, target: np.ndarray) -> float:
    """Mean ``-log softmax(beta * logits)[target]``."""
    scaled = beta * logits
    return float(np.mean(logsumexp(scaled, axis=1) - scaled[np.arange(len(target)), target]))


def _gradient(beta, logits, target) -> float:
    """``d/d beta`` of :func:`temperature_log_loss`: ``mean(E_p[z] - z_target)``; increasing in
    ``beta`` (its derivative is the mean variance of ``z`` under ``p``), as the loss is convex."""
    p = softmax(beta * logits, axis=1)
    return float(np.mean((p * logits).sum(axis=1) - logits[np.arange(len(target)), target]))


def fit_inverse_temperature(logits: np.ndarray, target: np.ndarray) -> float:
    """The ``beta = 1/T >= 0`` that minimises the log-loss of ``softmax(beta * logits)``.

    The loss is convex in ``beta`` (a log-sum-exp of linear functions minus a linear one), so the
    minimum is where its derivative changes sign: 0 when the derivative at 0 is already >= 0
    (scores no better than chance), else the root found by Brent's method on a bracket doubled
    until the derivative is no longer negative. When every recorded document is on the right
    side the loss falls towards 0 without a minimum: the search stops where the derivative
    underflows to 0 (the probabilities are then 0 and 1 in float64), or at the cap
    ``BETA_MAX / max|z|``.
    """
    logits = np.asarray(logits, dtype=float)
    spread = float(np.max(np.abs(logits))) if logits.size else 0.0
    if spread == 0.0 or _gradient(0.0, logits, target) >= 0.0:
        return 0.0
    cap = BETA_MAX / spread
    high = 1.0 / spread
    while _gradient(high, logits, target) < 0.0:
        if high >= cap:
            return cap
        high = min(2.0 * high, cap)
    return float(scipy.optimize.brentq(_gradient, 0.0, high, args=(logits, target), xtol=1e-14 / spread,
                                       rtol=1e-12, maxiter=500))


class Calibrated(ClassifierMixin, BaseEstimator):
    """A learner whose ``predict_proba`` is temperature-scaled on its own pre-update scores.

    Parameters
    ----------
    learner : online learner
        Trained as its own ``fit`` would: the same seeded orders, the same model (bit for bit,
        except SGD, whose scaled weights are folded back at the end of every ``partial_fit``
        call, so that learning the recorded pass in chunks changes the last bits).
    margin : {"auto", "raw", "standardized"}, default "auto"
        What is scaled (module docstring); ``standardized`` needs a Gaussian learner
        (``margin_variance``); ``auto`` uses it when there is one and it fits better.
    record : {"first", "last"}, default "first"
        The pass whose pre-update scores are recorded (module docstring).
    chunk_size : int in [1, 1000000], default 256
        The recorded pass is learned this many documents at a time; each chunk is scored by the
        model before the chunk (the scores of one chunk come from one model).
    probability : {"calibrated", "raw"}, default "calibrated"
        ``raw`` returns the learner's own ``predict_proba`` (the Gaussian probability).

    Fitted attributes
    -----------------
    estimator_ : the fitted learner (its ``mistakes_`` has one entry per chunk of the recorded
        pass; ``mistakes_`` here has one per pass).
    temperature_ : float
        ``T`` (``inf`` when the recorded scores carried no information).
    margin_ : str
        ``"raw"`` or ``"standardized"``: what was scaled.
    recorded_log_loss_ : dict
        Log-loss on the recorded scores per margin tried, at its fitted temperature.
    mistakes_ : list of int
        Online mistakes per pass.
    classes_, n_features_in_
    """

    _constraints = {
        "margin": Options(MARGINS),
        "record": Options(("first", "last")),
        "chunk_size": Interval(1, 1_000_000, closed="both", integer=True),
        "probability": Options(("calibrated", "raw")),
    }

    def __init__(self, learner, *, margin="auto", record="first", chunk_size=256,
                 probability="calibrated"):
        self.learner = learner
        self.margin = margin
        self.record = record
        self.chunk_size = chunk_size
        self.probability = probability

    def fit(self, X, y):
        check_params(self, self._constraints)
        params = check_online_learner(self.learner, "Calibrated")
        gaussian = hasattr(self.learner, "margin_variance")
        if self.margin == "standardized" and not gaussian:
            raise ParameterError(
                f"Calibrated: margin='standardized' needs a Gaussian learner (cw-var, cw-stdev, "
                f"arow, scw1, scw2) with margin_variance; {type(self.learner).__name__} has none: "
                "use margin='raw' or 'auto'"
            )
        X, y, labels = check_training_data(X, y, "Calibrated")
        model = clone(self.learner)
        n_epochs = params["n_epochs"]
        recorded = 0 if self.record == "first" else n_epochs - 1
        self.mistakes_ = []
        for epoch, order in enumerate(epoch_orders(X.shape[0], n_epochs, params["shuffle"],
                                                   params["random_state"])):
            Xe, ye = X[order], y[order]
            if epoch != recorded:
                model.partial_fit(Xe, ye, classes=labels)
                self.mistakes_.append(int(model.mistakes_[-1]))
                continue
            scores, variances = self._recorded_pass(model, Xe, ye, labels, gaussian)
            target = np.searchsorted(labels, ye)
            self.mistakes_.append(int(sum(model.mistakes_[-self._n_chunks(Xe.shape[0]):])))
        self.estimator_ = model
        self.classes_ = model.classes_
        self.n_features_in_ = model.n_features_in_
        tried = {"raw": scores}
        if gaussian and self.margin != "raw":
            tried["standardized"] = standardized_scores(scores, variances)
            if self.margin == "standardized":
                del tried["raw"]
        fits = {}
        for name, z in tried.items():
            logits = as_logits(z)
            beta = fit_inverse_temperature(logits, target)
            fits[name] = (temperature_log_loss(beta, logits, target), beta)
        self.margin_ = min(fits, key=lambda name: fits[name][0])  # raw first: kept on a tie
        self.recorded_log_loss_ = {name: loss for name, (loss, _) in fits.items()}
        beta = fits[self.margin_][1]
        self.inverse_temperature_ = beta
        self.temperature_ = np.inf if beta == 0.0 else 1.0 / beta
        return self

    def _n_chunks(self, n: int) -> int:
        return max(1, -(-n // self.chunk_size))

    def _recorded_pass(self, model, X, y, labels, gaussian):
        """Learn ``(X, y)`` chunk by chunk, scoring each chunk with the model before it."""
        n = X.shape[0]
        binary = labels.shape[0] == 2
        shape = (n,) if binary else (n, labels.shape[0])
        scores = np.zeros(shape)
        variances = np.zeros(shape)
        for start in range(0, max(n, 1), self.chunk_size):
            stop = min(n, start + self.chunk_size)
            chunk = X[start:stop]
            # before the first update the model is all zeros: every score is 0 (left as is)
            if hasattr(model, "classes_"):
                scores[start:stop] = model.decision_function(chunk)
                if gaussian:
                    variances[start:stop] = model.margin_variance(chunk)
            model.partial_fit(chunk, y[start:stop], classes=labels)
        return scores, variances

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X):
        check_is_fitted(self, "estimator_")
        return self.estimator_.decision_function(X)

    def predict(self, X):
        check_is_fitted(self, "estimator_")
        return self.estimator_.predict(X)

    def calibrated_scores(self, X) -> np.ndarray:
        """The scores the temperature scales (``margin_``), shape (n,) or (n, K)."""
        scores = self.decision_function(X)
        if self.margin_ == "standardized":
            return standardized_scores(scores, self.estimator_.margin_variance(X))
        return scores

    def predict_proba(self, X):
        """``softmax(z / T)`` (binary: the logistic of ``z / T``); ``probability="raw"``: the
        learner's own probabilities. Columns follow ``classes_``; the argmax is ``predict``'s
        label (module docstring)."""
        check_is_fitted(self, "estimator_")
        if self.probability == "raw":
            if not hasattr(self.estimator_, "predict_proba"):
                raise ParameterError(
                    f"Calibrated: probability='raw' needs a learner with its own predict_proba; "
                    f"{type(self.estimator_).__name__} has none: use probability='calibrated'"
                )
            return self.estimator_.predict_proba(X)
        return softmax(self.inverse_temperature_ * as_logits(self.calibrated_scores(X)), axis=1)

    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    @available_if(learner_has("margin_variance"))
    def margin_variance(self, X):
        return self.estimator_.margin_variance(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
