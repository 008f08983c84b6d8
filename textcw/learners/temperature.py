"""Temperature scaling of a learner's scores: one inverse temperature fitted by regularised
maximum likelihood.

Guo, Pleiss, Sun and Weinberger, "On calibration of modern neural networks", ICML 2017,
section 4.2: ``P(k | x) = softmax_k(z_k / T)``; for two labels ``P(classes_[1] | x)`` is the
logistic of ``z / T``, the softmax of ``(0, z)`` (Platt scaling without its offset). The
temperature is fitted to Platt's regularised targets (Platt 1999, section 2.2;
:func:`smoothed_targets`), not to 0/1 labels: on small or separable data the plain maximum
likelihood has no finite temperature (every recorded score on the right side), and the
probabilities it gives saturate (1e-200 at a margin a fifth of the typical one); with Platt's
targets the fit stays finite and the probability of the typical score is about ``1 - 1/(N+2)``.

``z`` is the learner's decision score (margin ``"raw"``), the score over the length of the
scoring model's weights (``"normalized"``: ``z = w.x / ||w||``, the signed distance of ``x`` to
the hyperplane; multi-class, the norm of all the labels' weights together, so that the order of
the labels is kept) or, for the Gaussian learners, the score in units of its standard deviation
under ``N(mu, Sigma)`` (``"standardized"``): binary ``z = m / sqrt(x' Sigma x)``, the argument of
the learners' own probability ``Phi(m / sqrt(v))`` (docs/algorithms.md "Label probabilities");
multi-class ``z_k = m_k / sqrt(mean_j v_j)``, one scale per document so that the order of the
labels, and so the prediction, is kept.

Why ``"normalized"``: the honest scores a temperature is fitted to come from other models than
the final one (the two half-size models of cross-fitting, or the growing model of progressive
validation), and an online learner's weights grow with the documents it has learned. A raw
temperature fitted to the scores of a half-trained model is too large for the final model's
longer weights, whose probabilities then come out over-confident: on the 10-class synthetic
text of docs/quality.md, SCW-I's ECE is 0.078 with raw scores and 0.029 normalized (the
predicted label's mean probability 0.44 against an accuracy of 0.37 raw). Dividing by each
scoring model's own weight length removes that scale; the recorded log-loss cannot tell the two
apart (the half models have nearly equal lengths), so ``"auto"`` tries the normalized scores
instead of the raw ones whenever the scoring models' lengths were recorded.

``method="top-bias"`` or ``"auto"`` of :func:`fit_temperature` adds an offset ``b >= 0`` to the
predicted label's scaled score (:func:`fit_top_bias`): where the final model is more accurate
than the models that gave the recorded scores, one temperature leaves the middle probabilities
too low while the top ones are right (docs/quality.md "A temperature and an offset").

:class:`TemperatureScaling` is the fitted result: what was scaled and by how much. It holds no
model, so the same object serves :class:`textcw.learners.calibrated.Calibrated` and the
calibrated pipelines of :mod:`textcw.learners.calibrated_pipeline`, and pickles as plain data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.optimize
from scipy.special import softmax

from textcw.errors import ParameterError
from textcw.learners.unknown_documents import checked_unknown, unknown_labels, with_unknown

# The inverse temperature is searched in [0, BETA_MAX / scale of the scores]: past that the
# probabilities of recorded scores that are all on the right side are 0 and 1 in float64 anyway.
BETA_MAX = 1e6
MARGIN_KINDS = ("raw", "standardized", "normalized")
# How the scaled scores become probabilities (fit_temperature): one temperature, a temperature
# and an offset on the predicted label (fit_top_bias), or whichever of the two has the lower
# held-out log-loss on the recorded scores (held_out_log_losses).
METHODS = ("temperature", "top-bias", "auto")
# The offset multiplies the predicted label's odds by at most exp(BIAS_MAX) (about 22,000).
BIAS_MAX = 10.0
# "auto" weighs an offset only on at least this many informative recorded scores (500 in each
# half of held_out_log_losses): on breast-cancer's 398 (docs/quality.md "A temperature and an
# offset") the halves chose offsets that raised the test log-loss of two learners of three;
# on digits' 1,257 and more the choice lowered it or kept the temperature alone.
MIN_TOP_BIAS_SCORES = 1000


class CalibrationWarning(UserWarning):
    """A temperature fitted to too few honest scores to be trusted (see ``MIN_HONEST_SCORES``
    in :mod:`textcw.learners.calibrated`)."""


def standardized_scores(scores: np.ndarray, variances: np.ndarray) -> np.ndarray:
    """Scores over their standard deviation: per label of a binary margin, per document (the
    root mean variance of its labels) for multi-class scores. A zero variance leaves a zero."""
    floats = scores.dtype == np.float64 and variances.dtype == np.float64
    if scores.ndim == 1:
        scale = variances
    elif floats:  # numpy's mean of float64, step by step: the row's sum over the count (bit for bit)
        scale = np.add.reduce(variances, axis=1, keepdims=True)
        scale /= variances.shape[1]
    else:
        scale = variances.mean(axis=1, keepdims=True)
    positive = scale > 0
    if floats and positive.all():  # the usual case in two steps instead of five (a service pays them per request)
        return np.true_divide(scores, np.sqrt(scale))
    out = np.zeros_like(scores, dtype=float)
    np.divide(scores, np.sqrt(np.maximum(scale, 0.0)), out=out, where=np.broadcast_to(positive, scores.shape))
    return out


def weight_norm(learner) -> float | None:
    """``||w||`` of a linear learner: its ``coef_`` and ``intercept_`` together (every label's
    weights for multi-class), or ``None`` for a classifier without ``coef_``."""
    try:
        coef = learner.coef_
    except AttributeError:
        return None
    coef = coef.toarray() if hasattr(coef, "toarray") else np.asarray(coef, dtype=float)
    coef = coef.reshape(1, -1) if coef.ndim == 1 else coef
    intercept = np.asarray(getattr(learner, "intercept_", 0.0), dtype=float).ravel()
    # einsum sums the squares without a temporary the size of the weights (a stream's model
    # is scored this way after every chunk)
    return float(np.sqrt(np.einsum("ij,ij->", coef, coef) + np.dot(intercept, intercept)))


def normalized_scores(scores: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """Scores over the length of the weights of the model that gave them (``norms``: one per
    document). A zero length (a model that has learned nothing) leaves a zero."""
    norms = np.asarray(norms, dtype=float)
    scale = norms if scores.ndim == 1 else norms[:, None]
    out = np.zeros_like(scores, dtype=float)
    np.divide(scores, scale, out=out, where=np.broadcast_to(scale > 0, scores.shape))
    return out


def softmax_rows(scaled: np.ndarray) -> np.ndarray:
    """``scipy.special.softmax(scaled, axis=1)``, bit for bit, computed in ``scaled``'s own
    memory: the same operations in the same order (the row's maximum subtracted, the
    exponential, over the row's sum), without scipy's array-namespace dispatch and two
    temporaries (a fixed cost per call that a service predicting one batch at a time pays each
    time). ``scaled`` must be a float64 array of the caller's own, which it overwrites; any
    other input goes to scipy."""
    if not (isinstance(scaled, np.ndarray) and scaled.dtype == np.float64 and scaled.ndim == 2
            and scaled.flags.writeable and scaled.flags.c_contiguous):
        return softmax(scaled, axis=1)
    np.subtract(scaled, scaled.max(axis=1, keepdims=True), out=scaled)
    np.exp(scaled, out=scaled)
    scaled /= scaled.sum(axis=1, keepdims=True)
    return scaled


def as_logits(z: np.ndarray) -> np.ndarray:
    """``(n, K)`` scores: a binary margin ``z`` becomes ``(0, z)``, whose softmax is the logistic."""
    return np.column_stack([np.zeros_like(z), z]) if z.ndim == 1 else z


def smoothed_targets(target: np.ndarray, n_classes: int) -> np.ndarray:
    """``(n, K)`` target probabilities: Platt's regularised targets, as strong for ``K`` labels as
    for two. Platt, "Probabilistic outputs for support vector machines and comparisons to
    regularized likelihood methods" (1999), section 2.2: 0/1 targets let the sigmoid grow without
    bound on separable scores, so a positive document's target is ``(N+ + 1) / (N+ + 2)`` and a
    negative one's ``1 / (N- + 2)``. A document of class ``k`` keeps ``1 - eps`` on ``k`` and
    spreads ``eps = 2 / (K (N_k + 2))`` evenly over the others: Platt's rule for ``K = 2``, and
    about ``2 / N`` on ``N`` balanced documents whatever ``K``. ``1 / (N_k + 2)`` (Platt's rule
    per label) is ``K / 2`` times as strong: on 2,000 documents of 30 labels it kept 1.5% of
    every target off its label, and the fitted probabilities 2-3 points under the accuracy of
    the very scores they were fitted to (docs/quality.md "Platt's targets for many labels").
    """
    target = np.asarray(target, dtype=np.intp)
    counts = np.bincount(target, minlength=n_classes).astype(float)
    eps = 2.0 / (max(n_classes, 2) * (counts[target] + 2.0))
    out = np.repeat((eps / max(n_classes - 1, 1))[:, None], n_classes, axis=1)
    out[np.arange(target.size), target] = 1.0 - eps
    return out


def _targets(logits: np.ndarray, target: np.ndarray, smoothing: bool) -> np.ndarray:
    if smoothing:
        return smoothed_targets(target, logits.shape[1])
    hard = np.zeros(logits.shape)
    hard[np.arange(len(target)), target] = 1.0
    return hard


def softmax_and_log_partition(scaled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(softmax(scaled), logsumexp(scaled))`` by row, from one exponential of the shifted
    scores: the fits evaluate both at every step, and scipy's two functions take one
    exponential each (most of a fit's time on tens of thousands of documents by tens of labels)."""
    top = scaled.max(axis=1, keepdims=True)
    e = np.exp(scaled - top)
    total = e.sum(axis=1, keepdims=True)
    return e / total, (top + np.log(total))[:, 0]


def temperature_log_loss(beta: float, logits: np.ndarray, target: np.ndarray, *,
                         smoothing: bool = False) -> float:
    """Mean cross-entropy of ``softmax(beta * logits)`` against the labels ``target`` (the
    log-loss), or against Platt's targets (:func:`smoothed_targets`) with ``smoothing``."""
    scaled = beta * logits
    weights = _targets(logits, target, smoothing)
    return float(np.mean(softmax_and_log_partition(scaled)[1] - (weights * scaled).sum(axis=1)))


def _gradient(beta, logits, weights) -> float:
    """``d/d beta`` of the cross-entropy against ``weights``: ``mean(E_p[z] - E_t[z])``;
    increasing in ``beta`` (its derivative is the mean variance of ``z`` under ``p``), as the
    loss is convex."""
    p = softmax_and_log_partition(beta * logits)[0]
    return float(np.mean(((p - weights) * logits).sum(axis=1)))


def fit_inverse_temperature(logits: np.ndarray, target: np.ndarray, *, smoothing: bool = True) -> float:
    """The ``beta = 1/T >= 0`` that minimises the cross-entropy of ``softmax(beta * logits)``
    against Platt's targets (:func:`smoothed_targets`; the labels themselves, the plain
    log-loss, with ``smoothing=False``).

    The loss is convex in ``beta`` (a log-sum-exp of linear functions minus a linear one), so the
    minimum is where its derivative changes sign: 0 when the derivative at 0 is already >= 0
    (scores no better than chance), else the root found by Brent's method on a bracket doubled
    until the derivative is no longer negative. With Platt's targets that root always exists:
    every target puts some probability on every label, so the loss grows without bound as
    ``beta`` does, even when every recorded document is on the right side. Without smoothing
    such scores have no minimum: the search stops where the derivative underflows to 0, or at
    the cap ``BETA_MAX / max|z|``.
    """
    logits = np.asarray(logits, dtype=float)
    spread = float(np.max(np.abs(logits))) if logits.size else 0.0
    weights = _targets(logits, target, smoothing) if logits.size else np.zeros(logits.shape)
    return 0.0 if spread == 0.0 else root_of_gradient(_gradient, (logits, weights), spread)


def root_of_gradient(gradient, args: tuple, spread: float) -> float:
    """Where ``gradient(beta, *args)``, the derivative of a loss convex in ``beta``, changes sign
    on ``[0, BETA_MAX / spread]`` (``spread > 0``: the largest ``|logit|``): 0 when it is already
    >= 0 at 0, the cap when it is still negative there, else Brent's root on a bracket doubled
    from ``1 / spread`` (:func:`fit_inverse_temperature`)."""
    if gradient(0.0, *args) >= 0.0:
        return 0.0
    cap, high = BETA_MAX / spread, 1.0 / spread
    while gradient(high, *args) < 0.0:
        if high >= cap:
            return cap
        high = min(2.0 * high, cap)
    return float(scipy.optimize.brentq(gradient, 0.0, high, args=args, xtol=1e-14 / spread, rtol=1e-12,
                                       maxiter=500))


def _top_indicator(logits: np.ndarray) -> np.ndarray:
    """1 at each document's highest score where it is the only highest, else 0. A tie (an
    empty document scores every label 0) gets no offset: which label an offset would favour
    there is arbitrary, and its probabilities stay even."""
    top = np.zeros(logits.shape)
    if logits.shape[1] < 2:
        return top
    best = np.argmax(logits, axis=1)
    rows = np.arange(len(logits))
    ordered = np.sort(logits, axis=1)
    unique = ordered[:, -1] > ordered[:, -2]
    top[rows[unique], best[unique]] = 1.0
    return top


def _top_bias_logits(logits: np.ndarray, beta: float, bias: float) -> np.ndarray:
    """``beta * z`` plus ``bias`` on each document's highest score (:func:`_top_indicator`)."""
    scaled = beta * logits
    return scaled + bias * _top_indicator(logits) if bias else scaled


def top_bias_log_loss(beta: float, bias: float, logits: np.ndarray, target: np.ndarray, *,
                      smoothing: bool = False) -> float:
    """:func:`temperature_log_loss` of ``softmax(beta * z + bias * e_top)``."""
    scaled = _top_bias_logits(logits, beta, bias)
    weights = _targets(logits, target, smoothing)
    return float(np.mean(softmax_and_log_partition(scaled)[1] - (weights * scaled).sum(axis=1)))


def fit_top_bias(logits: np.ndarray, target: np.ndarray, *, smoothing: bool = True,
                 beta0: float | None = None) -> tuple[float, float]:
    """``(beta, bias)``, both ``>= 0``, minimising the cross-entropy of ``softmax(beta * z +
    bias * e_top)`` against Platt's targets, where ``e_top`` is 1 at each document's highest
    score (none on a tie: :func:`_top_indicator`).

    Temperature scaling (Guo et al., ICML 2017, section 4.2) with one more parameter: Platt's
    offset (Platt 1999, section 2.1, ``1 / (1 + exp(A f + B))``) applied to the predicted label
    only, so the odds of the predicted label are multiplied by ``exp(bias)``. The offset moves
    the middle of the reliability curve (a probability of 0.4 becomes 0.52 at ``bias = 0.5``)
    far more than its top (0.97 becomes 0.98): what an under-confident middle under a right
    top bin needs, which one temperature cannot give. ``bias >= 0`` only raises the predicted
    label, so the most probable label stays ``predict``'s. The loss is convex in ``(beta,
    bias)`` (a log-sum-exp of functions linear in them, minus a linear one); L-BFGS-B from
    the temperature's own fit (``beta0``: that fit when the caller has it, the same
    :func:`fit_inverse_temperature` of these scores), within ``[0, BETA_MAX / max|z|] x [0, BIAS_MAX]``.
    """
    logits = np.asarray(logits, dtype=float)
    if beta0 is None:
        beta0 = fit_inverse_temperature(logits, target, smoothing=smoothing)
    spread = float(np.max(np.abs(logits))) if logits.size else 0.0
    if spread == 0.0 or beta0 == 0.0:
        return beta0, 0.0  # no information in the scores: nothing for an offset to sharpen
    weights = _targets(logits, target, smoothing)
    top = _top_indicator(logits)
    # the targets' side of the loss is linear in (beta, bias): its two coefficients, once
    target_z, target_top = np.mean((weights * logits).sum(axis=1)), np.mean((weights * top).sum(axis=1))

    def loss(theta):
        p, log_partition = softmax_and_log_partition(theta[0] * logits + theta[1] * top)
        value = np.mean(log_partition) - theta[0] * target_z - theta[1] * target_top
        return value, np.array([np.mean((p * logits).sum(axis=1)) - target_z,
                                np.mean((p * top).sum(axis=1)) - target_top])

    found = scipy.optimize.minimize(loss, np.array([beta0, 0.0]), jac=True, method="L-BFGS-B",
                                    bounds=[(0.0, BETA_MAX / spread), (0.0, BIAS_MAX)])
    beta, bias = (float(v) for v in found.x)
    if loss(found.x)[0] > loss(np.array([beta0, 0.0]))[0]:  # never worse than the temperature alone
        return beta0, 0.0
    return beta, bias


def held_out_log_losses(logits: np.ndarray, target: np.ndarray) -> dict[str, float]:
    """Plain log-loss of each calibration method on recorded scores it was not fitted to:
    the documents in two seeded halves, each method fitted (with Platt's targets) on one and
    scored on the other, the two losses averaged. What ``method="auto"`` chooses by."""
    order = np.random.default_rng(0).permutation(len(target))
    halves = (order[::2], order[1::2])
    losses = {"temperature": 0.0, "top-bias": 0.0}
    for fitted, scored in (halves, halves[::-1]):
        beta = fit_inverse_temperature(logits[fitted], target[fitted])
        losses["temperature"] += temperature_log_loss(beta, logits[scored], target[scored]) / 2
        beta, bias = fit_top_bias(logits[fitted], target[fitted], beta0=beta)
        losses["top-bias"] += top_bias_log_loss(beta, bias, logits[scored], target[scored]) / 2
    return losses


def informative_scores(scores: np.ndarray) -> int:
    """How many recorded documents have scores that tell the labels apart (not all equal: a
    model that has learned nothing yet scores every label 0)."""
    z = as_logits(np.asarray(scores, dtype=float))
    return int(np.count_nonzero(np.ptp(z, axis=1) > 0)) if z.size else 0


@dataclass(frozen=True)
class TemperatureScaling:
    """A fitted temperature: ``softmax(inverse_temperature * z)`` of the ``margin`` scores.

    ``record`` says where the fitted scores came from (``"first"``, ``"last"`` or
    ``"cross-fit"``: :class:`textcw.learners.calibrated.Calibrated`); ``recorded_log_loss`` is
    the log-loss of those scores at the fitted temperature, per margin tried. ``top_bias``
    (``>= 0``, :func:`fit_top_bias`) is added to the predicted label's scaled score: 0 for
    plain temperature scaling. ``unknown`` (or ``None``): the probabilities, and with them the
    label, of a document with no known feature (:mod:`textcw.learners.unknown_documents`).
    """

    margin: str
    inverse_temperature: float
    record: str
    recorded_log_loss: dict = field(default_factory=dict)
    top_bias: float = 0.0
    unknown: tuple[float, ...] | None = None

    @property
    def temperature(self) -> float:
        """``T`` (``inf`` when the fitted scores carried no information: every probability 1/K)."""
        return np.inf if self.inverse_temperature == 0.0 else 1.0 / self.inverse_temperature

    def scores(self, learner, X) -> np.ndarray:
        """The scores the temperature scales, shape (n,) or (n, K)."""
        scores = learner.decision_function(X)
        if self.margin == "standardized":
            return standardized_scores(scores, learner.margin_variance(X))
        if self.margin == "normalized":
            return normalized_scores(scores, np.full(len(scores), weight_norm(learner)))
        return scores

    def recorded_proba(self, scores, variances=None, norms=None) -> np.ndarray:
        """The probabilities of recorded ``scores`` (with what the margin needs)."""
        z = (standardized_scores(scores, variances) if self.margin == "standardized" else
             normalized_scores(scores, norms) if self.margin == "normalized" else scores)
        return softmax_rows(_top_bias_logits(as_logits(z), self.inverse_temperature, self.top_bias))

    def predict_proba(self, learner, X) -> np.ndarray:
        """Columns follow ``learner.classes_``; ``T > 0`` keeps the order of the scores, so the
        argmax is the label ``learner.predict`` returns (binary: a zero margin gives 1/2 and
        ``classes_[0]``, as ``predict`` does)."""
        logits = as_logits(self.scores(learner, X))
        return with_unknown(softmax_rows(_top_bias_logits(logits, self.inverse_temperature, self.top_bias)),
                            X, self.unknown)

    def predict(self, learner, X, predicted=None) -> np.ndarray:
        """``predicted`` (``learner.predict(X)``), but ``argmax unknown`` for rows with no known feature."""
        predicted = learner.predict(X) if predicted is None else predicted
        return unknown_labels(predicted, X, self.unknown, learner.classes_)

    def to_dict(self) -> dict:
        """Plain JSON data (reports, model descriptions, exports): ``temperature`` is ``None``
        where it is infinite; ``inverse_temperature`` is always finite."""
        return {"method": "temperature", "margin": self.margin,
                "inverse_temperature": float(self.inverse_temperature),
                "temperature": None if self.inverse_temperature == 0.0 else float(self.temperature),
                "record": self.record,
                "recorded_log_loss": {k: float(v) for k, v in self.recorded_log_loss.items()},
                # only when there is one: a plain temperature's data stay as they were
                **({"top_bias": float(self.top_bias)} if self.top_bias else {}),
                **({"unknown": list(self.unknown)} if self.unknown is not None else {})}

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
        bias = data.get("top_bias", 0.0)
        if isinstance(bias, bool) or not isinstance(bias, (int, float)) or not 0.0 <= bias <= BIAS_MAX:
            raise ParameterError(f"a calibration's top_bias must be a number in [0, {BIAS_MAX:g}]")
        return cls(margin=margin, inverse_temperature=float(beta), record=str(record),
                   recorded_log_loss={str(k): float(v) for k, v in losses.items()}, top_bias=float(bias),
                   unknown=checked_unknown(data.get("unknown")))


def fit_temperature(scores: np.ndarray, variances: np.ndarray | None, target: np.ndarray, *,
                    margin: str, record: str, norms: np.ndarray | None = None,
                    method: str = "temperature") -> TemperatureScaling:
    """The temperature fitted to the recorded ``scores`` for labels ``target`` (indices into the
    classes) against Platt's targets (:func:`fit_inverse_temperature`). ``norms`` (one per
    document) are the weight lengths of the models that gave the scores (:func:`weight_norm`).
    ``margin="auto"`` fits the normalized scores when ``norms`` are given (else the raw ones)
    and, when ``variances`` are given (a Gaussian learner), the standardized ones, and keeps the
    lower log-loss (the first on a tie); ``"standardized"`` needs ``variances``, ``"normalized"``
    needs ``norms``.

    ``method`` (:data:`METHODS`): ``"temperature"`` fits ``beta`` alone; ``"top-bias"`` fits
    ``beta`` and an offset on the predicted label (:func:`fit_top_bias`) to the chosen margin;
    ``"auto"`` keeps the offset only when it lowers the held-out log-loss of the recorded scores
    (:func:`held_out_log_losses`) and at least :data:`MIN_TOP_BIAS_SCORES` of them are
    informative (fewer: the temperature alone)."""
    if method not in METHODS:
        raise ParameterError(f"method={method!r} is invalid; method must be one of "
                             f"{', '.join(repr(m) for m in METHODS)}")
    tried = {}
    if margin == "raw" or (margin == "auto" and norms is None):
        tried["raw"] = scores
    if norms is not None and margin in ("auto", "normalized"):
        tried["normalized"] = normalized_scores(scores, norms)
    if variances is not None and margin in ("auto", "standardized"):
        tried["standardized"] = standardized_scores(scores, variances)
    fits = {}
    for name, z in tried.items():
        logits = as_logits(z)
        beta = fit_inverse_temperature(logits, target)
        fits[name] = (temperature_log_loss(beta, logits, target), beta)
    chosen = min(fits, key=lambda name: fits[name][0])  # the first tried is kept on a tie
    beta, bias = fits[chosen][1], 0.0
    if method != "temperature":
        logits = as_logits(tried[chosen])
        if method == "top-bias" or (informative_scores(tried[chosen]) >= MIN_TOP_BIAS_SCORES and (
                lambda losses: losses["top-bias"] < losses["temperature"])(held_out_log_losses(logits, target))):
            beta, bias = fit_top_bias(logits, target, beta0=beta)
    return TemperatureScaling(margin=chosen, inverse_temperature=beta, record=record,
                              recorded_log_loss={name: loss for name, (loss, _) in fits.items()}, top_bias=bias)
