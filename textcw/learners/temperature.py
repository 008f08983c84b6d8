"""Temperature scaling of a learner's scores: one inverse temperature fitted by maximum likelihood.

Guo, Pleiss, Sun and Weinberger, "On calibration of modern neural networks", ICML 2017,
section 4.2: ``P(k | x) = softmax_k(z_k / T)``; for two labels ``P(classes_[1] | x)`` is the
logistic of ``z / T``, the softmax of ``(0, z)`` (Platt scaling without its offset).

``z`` is the learner's decision score (margin ``"raw"``) or, for the Gaussian learners, the
score in units of its standard deviation under ``N(mu, Sigma)`` (``"standardized"``): binary
``z = m / sqrt(x' Sigma x)``, the argument of the learners' own probability ``Phi(m / sqrt(v))``
(docs/algorithms.md "Label probabilities"); multi-class ``z_k = m_k / sqrt(mean_j v_j)``, one
scale per document so that the order of the labels, and so the prediction, is kept.

:class:`TemperatureScaling` is the fitted result: what was scaled and by how much. It holds no
model, so the same object serves :class:`textcw.learners.calibrated.Calibrated` and the
calibrated pipelines of :mod:`textcw.learners.calibrated_pipeline`, and pickles as plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
from scipy.special import logsumexp, softmax

from textcw.errors import ParameterError

# The inverse temperature is searched in [0, BETA_MAX / scale of the scores]: past that the
# probabilities of recorded scores that are all on the right side are 0 and 1 in float64 anyway.
BETA_MAX = 1e6
MARGIN_KINDS = ("raw", "standardized")


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


@dataclass(frozen=True)
class TemperatureScaling:
    """A fitted temperature: ``softmax(inverse_temperature * z)`` of the ``margin`` scores.

    ``record`` says where the fitted scores came from (``"first"``, ``"last"`` or
    ``"cross-fit"``: :class:`textcw.learners.calibrated.Calibrated`); ``recorded_log_loss`` is
    the log-loss of those scores at the fitted temperature, per margin tried.
    """

    margin: str
    inverse_temperature: float
    record: str
    recorded_log_loss: dict = field(default_factory=dict)

    @property
    def temperature(self) -> float:
        """``T`` (``inf`` when the fitted scores carried no information: every probability 1/K)."""
        return np.inf if self.inverse_temperature == 0.0 else 1.0 / self.inverse_temperature

    def scores(self, learner, X) -> np.ndarray:
        """The scores the temperature scales, shape (n,) or (n, K)."""
        scores = learner.decision_function(X)
        if self.margin == "standardized":
            return standardized_scores(scores, learner.margin_variance(X))
        return scores

    def predict_proba(self, learner, X) -> np.ndarray:
        """Columns follow ``learner.classes_``; ``T > 0`` keeps the order of the scores, so the
        argmax is the label ``learner.predict`` returns (binary: a zero margin gives 1/2 and
        ``classes_[0]``, as ``predict`` does)."""
        return softmax(self.inverse_temperature * as_logits(self.scores(learner, X)), axis=1)

    def to_dict(self) -> dict:
        """Plain JSON data (reports, model descriptions, exports): ``temperature`` is ``None``
        where it is infinite; ``inverse_temperature`` is always finite."""
        return {"method": "temperature", "margin": self.margin,
                "inverse_temperature": float(self.inverse_temperature),
                "temperature": None if self.inverse_temperature == 0.0 else float(self.temperature),
                "record": self.record,
                "recorded_log_loss": {k: float(v) for k, v in self.recorded_log_loss.items()}}

    @classmethod
    def from_dict(cls, data) -> TemperatureScaling:
        """The scaling :meth:`to_dict` wrote, checked (e.g. read back from an export)."""
        if not isinstance(data, dict) or data.get("method") != "temperature":
            raise ParameterError("a probability calibration must be a mapping with method 'temperature'")
        margin, beta, record = data.get("margin"), data.get("inverse_temperature"), data.get("record")
        if margin not in MARGIN_KINDS:
            raise ParameterError(f"a calibration's margin must be one of {', '.join(MARGIN_KINDS)}")
        if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 <= beta < np.inf:
            raise ParameterError("a calibration's inverse_temperature must be a finite number >= 0")
        losses = data.get("recorded_log_loss") or {}
        if not (isinstance(losses, dict) and all(isinstance(v, (int, float)) for v in losses.values())):
            raise ParameterError("a calibration's recorded_log_loss must map margins to numbers")
        return cls(margin=margin, inverse_temperature=float(beta), record=str(record),
                   recorded_log_loss={str(k): float(v) for k, v in losses.items()})


def fit_temperature(scores: np.ndarray, variances: np.ndarray | None, target: np.ndarray, *,
                    margin: str, record: str) -> TemperatureScaling:
    """The temperature that minimises the log-loss of the recorded ``scores`` for labels
    ``target`` (indices into the classes). ``margin="auto"`` fits the raw scores and, when
    ``variances`` are given (a Gaussian learner), the standardized ones, and keeps the lower
    log-loss (raw on a tie); ``"standardized"`` needs ``variances``."""
    tried = {}
    if margin != "standardized":
        tried["raw"] = scores
    if variances is not None and margin != "raw":
        tried["standardized"] = standardized_scores(scores, variances)
    fits = {}
    for name, z in tried.items():
        logits = as_logits(z)
        beta = fit_inverse_temperature(logits, target)
        fits[name] = (temperature_log_loss(beta, logits, target), beta)
    chosen = min(fits, key=lambda name: fits[name][0])  # raw first: kept on a tie
    return TemperatureScaling(margin=chosen, inverse_temperature=fits[chosen][1], record=record,
                              recorded_log_loss={name: loss for name, (loss, _) in fits.items()})
