"""Every label's temperature of a :class:`~textcw.learners.multilabel.MultiLabel` at once.

A label's probability is the logistic of its margin over a temperature, ``expit(beta * z)``
(temperature scaling, Guo, Pleiss, Sun and Weinberger, "On calibration of modern neural
networks", ICML 2017, section 4.2, for two classes: the softmax of ``(0, z)``), with ``beta``
fitted as :func:`textcw.learners.temperature.fit_inverse_temperature` fits a binary learner's:
the cross-entropy against Platt's regularised targets (Platt 1999, section 2.2: ``(N+ + 1) /
(N+ + 2)`` for a positive document, ``1 / (N- + 2)`` for a negative one), minimised over
``beta >= 0`` on the bracket that function searches.

The loss ``L(beta) = mean(log(1 + exp(beta z)) - t beta z)`` is convex, with

    L'(beta)  = mean((expit(beta z) - t) z)
    L''(beta) = mean(expit(beta z) (1 - expit(beta z)) z^2)  >= 0,

so its minimum is the root of ``L'``. Here the roots of every label (and every margin kind) are
found together, by Newton's method on ``L'`` from the lower end of a bracket: one pass over the recorded scores gives
both derivatives, and the iteration converges in about 12 passes (the bracket's included) for
every label at once, where Brent's method on ``L'`` alone took about 18 evaluations per label,
each a separate call.
The roots are those of :func:`~textcw.learners.temperature.root_of_gradient`, to its tolerance
(``1e-12`` relative; tested against it).

The labels are processed in blocks of at most :data:`BLOCK_ELEMENTS` recorded scores, so the
temporaries stay small whatever the number of labels.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_expit

from textcw.learners.temperature import BETA_MAX, TemperatureScaling

# Recorded scores per block of labels (a few temporaries of this many float64 each).
BLOCK_ELEMENTS = 1 << 20
# The root's tolerance, as root_of_gradient gives it to Brent's method: |error| <= XTOL / spread
# + RTOL * beta, where spread is the column's largest |z|.
XTOL, RTOL = 1e-14, 1e-12
# A bound on Newton's steps per block, far above any real fit (about 6 to 9 after the bracket's
# doublings): the steps rise monotonically to the root, and a bisection halves what is left.
MAX_STEPS = 200


def label_margins(kind: str, scores: np.ndarray, variances: np.ndarray | None, norms: np.ndarray) -> np.ndarray:
    """The margins ``kind`` of every label's temperature, element by element of ``(n, K)``
    arrays (a label's own scores, variances and scoring-model lengths): ``"standardized"``
    ``z / sqrt(v)``, ``"normalized"`` ``z / ||w||``, ``"raw"`` ``z``; a zero divisor leaves 0,
    as :func:`~textcw.learners.temperature.standardized_scores` and ``normalized_scores`` give
    for one label."""
    if kind == "raw":
        return np.asarray(scores, dtype=float)
    divisor = np.sqrt(np.maximum(variances, 0.0)) if kind == "standardized" else np.asarray(norms, dtype=float)
    out = np.zeros(np.shape(scores))
    np.divide(scores, divisor, out=out, where=divisor > 0)
    return out


def margin_kinds(margin: str, gaussian: bool) -> tuple[str, ...]:
    """The margins a label's temperature is fitted to, as ``fit_temperature`` tries them: the
    normalised one (every learner here is linear), and the standardised one of a Gaussian learner."""
    if margin != "auto":
        return (margin,)
    return ("normalized", "standardized") if gaussian else ("normalized",)


def platt_targets(Y: np.ndarray) -> np.ndarray:
    """``(n, K)`` Platt targets of 0/1 labels ``Y``, per column."""
    n = Y.shape[0]
    positives = np.count_nonzero(Y, axis=0)
    return np.where(Y == 1, 1.0 - 1.0 / (positives + 2.0), 1.0 / (n - positives + 2.0))


def inverse_temperatures(Z: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(beta, log_loss)`` per column of the margins ``Z`` ``(n, K)`` with 0/1 labels ``Y``: ``beta``
    is 0 where the margins are all 0 or the derivative at 0 is already >= 0 (scores no better than
    chance), ``BETA_MAX / spread`` where it is still negative there, else the root of ``L'``;
    ``log_loss`` is the mean log-loss of ``expit(beta z)`` against the labels themselves (what
    :func:`label_temperatures` compares margin kinds by)."""
    Z, Y = np.asarray(Z, dtype=float), np.asarray(Y)
    n, k = Z.shape
    betas, losses = np.zeros(k), np.zeros(k)
    if n == 0:
        return betas, losses
    block = max(1, BLOCK_ELEMENTS // n)
    for start in range(0, k, block):
        part = slice(start, start + block)
        # a label's scores contiguous: its sums run along memory, and dropping a label is a row copy
        z, y = np.ascontiguousarray(Z[:, part].T), Y[:, part].T
        betas[part] = _block_roots(z, platt_targets(Y[:, part]).T)
        losses[part] = -np.mean(log_expit(np.where(y == 1, 1.0, -1.0) * betas[part, None] * z), axis=1)
    return betas, losses


def _derivatives(beta: np.ndarray, z: np.ndarray, slope_at_0: np.ndarray, squares: np.ndarray):
    """``(L'(beta), L''(beta))`` per row of ``z`` (one label's margins per row), from one
    hyperbolic tangent: ``expit(u) = (1 + tanh(u / 2)) / 2``, so with ``v = tanh(beta z / 2) z``

        L'(beta)  = L'(0) + mean(v) / 2
        L''(beta) = (mean(z^2) - mean(v^2)) / 4,

    a third of the time of ``scipy.special.expit`` on every recorded score. ``slope_at_0`` is
    ``L'(0)``, ``squares`` the sum of ``z^2`` per row."""
    n = z.shape[1]
    v = (0.5 * beta)[:, None] * z
    np.tanh(v, out=v)
    v *= z
    return slope_at_0 + 0.5 * v.sum(axis=1) / n, 0.25 * (squares - np.einsum("ij,ij->i", v, v)) / n


def _block_roots(z: np.ndarray, t: np.ndarray) -> np.ndarray:
    """:func:`inverse_temperatures` of one block of labels: ``z`` and the targets ``t`` with one
    label per row."""
    betas = np.zeros(z.shape[0])
    n = z.shape[1]
    spread = np.max(np.abs(z), axis=1)
    slope = np.einsum("ij,ij->i", 0.5 - t, z) / n  # L'(0): expit(0) = 1/2
    live = np.flatnonzero((spread > 0) & (slope < 0.0))
    if live.size == 0:
        return betas
    z, spread, at_0 = z[live], spread[live], slope[live]
    squares = np.einsum("ij,ij->i", z, z)
    slope, curve = at_0.copy(), 0.25 * squares / n  # L''(0)
    cap = BETA_MAX / spread
    low, high = np.zeros(live.size), 1.0 / spread
    # the bracket: double its upper end until L' is no longer negative there, or the cap is reached
    # (at most log2(BETA_MAX) + 1 doublings); L'(low) < 0 and L''(low) are kept for Newton
    at_cap = np.zeros(live.size, dtype=bool)
    short = np.arange(live.size)
    while short.size:
        g, h = _derivatives(high[short], z[short], at_0[short], squares[short])
        below = short[g < 0.0]
        low[below], slope[below], curve[below] = high[below], g[g < 0.0], h[g < 0.0]
        at_cap[below[high[below] >= cap[below]]] = True
        short = below[~at_cap[below]]
        high[short] = np.minimum(2.0 * high[short], cap[short])
    roots = np.where(at_cap, cap, low)
    # Newton from the lower end. L'' is decreasing in beta >= 0 (each term's expit(bz)(1 - expit(bz))
    # shrinks as |bz| grows), so L' is concave there and each step from the left lands between the
    # point and the root: the iterates rise to the root without overshooting it. A step that
    # leaves the bracket all the same (rounding) bisects it; one that stays put has converged.
    active = np.flatnonzero(~at_cap)
    x, g, h, hi = low[active], slope[active], curve[active], high[active]
    za, a0, sq, tol_x = z[active], at_0[active], squares[active], XTOL / spread[active]
    for _ in range(MAX_STEPS):  # (with no label left, the first pass stops at once)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = x - g / h
        bisect = ~np.isfinite(step) | (step < x) | (step >= hi)
        step[bisect] = 0.5 * (x[bisect] + hi[bisect])
        roots[active] = step
        going = np.abs(step - x) > tol_x + RTOL * np.abs(step)
        if not going.all():
            active, step, hi = active[going], step[going], hi[going]
            za, a0, sq, tol_x = za[going], a0[going], sq[going], tol_x[going]
        x = step
        if active.size == 0:
            break
        g, h = _derivatives(x, za, a0, sq)
        # at or past the root (rounding): the bracket's upper end, so the next step stays put
        hi = np.where(g >= 0.0, x, hi)
    betas[live] = roots
    return betas


def label_temperatures(margins: dict, Y: np.ndarray, record: str) -> list[TemperatureScaling]:
    """Every label's temperature fitted to each of ``margins`` (``{kind: (n, K) margins}``, tried
    in order), keeping per label the kind of the lowest log-loss against its labels, as
    :func:`~textcw.learners.temperature.fit_temperature` chooses (the first on a tie)."""
    fits = {kind: inverse_temperatures(Z, Y) for kind, Z in margins.items()}
    scalings = []
    for label in range(np.shape(Y)[1]):
        losses = {kind: float(fit[1][label]) for kind, fit in fits.items()}
        chosen = min(losses, key=losses.get)
        scalings.append(TemperatureScaling(margin=chosen, inverse_temperature=float(fits[chosen][0][label]),
                                           record=record, recorded_log_loss=losses))
    return scalings


__all__ = ["inverse_temperatures", "label_margins", "label_temperatures", "margin_kinds", "platt_targets"]
