"""Label probabilities from independent Gaussian label scores.

With a block-diagonal covariance, label ``k``'s score is ``z_k ~ N(m_k, v_k)`` independently
(EMNLP 2009, section 7; docs/algorithms.md "Label probabilities"). Then

    P(k wins) = integral of phi_k(z) prod_{j != k} Phi_j(z) dz,

``phi_k`` the density of ``z_k`` and ``Phi_j`` the distribution function of ``z_j``: a
one-dimensional integral (:func:`label_probabilities_quadrature`), or the papers' Monte Carlo
estimate (:func:`label_probabilities_sampling`).

Why composite Gauss-Legendre and not Gauss-Hermite around each label. The integrand is as
narrow as the *narrowest* label's distribution function: when one label's standard deviation is
a thousandth of another's (common: a label seen often against one seen rarely), a Gauss-Hermite
rule scaled to the wide label steps over the narrow label's ``Phi`` and misses ``P`` by up to
0.03. Here every label contributes knots at ``m_j + sd_j c`` for ``c`` in
``0, +-2.5, +-5, +-8.5``, so each piece between consecutive knots spans at most 2.5 standard
deviations of every label whose mass or step lies in it, and an 8-point Gauss-Legendre rule
integrates it to about 1e-10 (tested against the binary closed form for standard deviations
ten orders of magnitude apart). Only the range from the largest ``m_j - 8.5 sd_j`` (below it
some ``Phi_j < e^-36``) to the largest ``m_j + 8.5 sd_j`` (above it every density is) is
integrated. The cost is at most 7 pieces per label of 8 Gauss-Legendre nodes each (56 nodes per
label). The product over ``j != k`` is taken as a sum of log-CDFs formed from prefix and suffix
sums, never by subtracting a label's own term, so a label whose ``Phi`` underflows cannot turn
the others' product into NaN.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, logsumexp

_OFFSETS = np.array([-8.5, -5.0, -2.5, 0.0, 2.5, 5.0, 8.5])
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(8)
_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)
# A zero (or vanishing) variance is a certain score. Standard deviations are kept at or above
# this fraction of the row's scale (its largest standard deviation or absolute mean): the score
# stays certain for all practical purposes, while the quadrature pieces around it stay wide
# enough, in floating point, for the rule to integrate its density.
_RELATIVE_SD = 1e-9


def _standard_deviations(means, variances):
    sd = np.sqrt(np.maximum(variances, 0.0))
    scale = np.maximum(sd.max(axis=1, keepdims=True), np.abs(means).max(axis=1, keepdims=True))
    return np.maximum(sd, np.maximum(_RELATIVE_SD * scale, 1e-300))


def label_probabilities_quadrature(means: np.ndarray, variances: np.ndarray, chunk: int = 32):
    """``P(label k has the highest score)`` for each row; rows sum to 1.

    Parameters
    ----------
    means, variances : ndarray of shape (n, K)
        Mean and variance of each label's score.
    """
    means = np.asarray(means, dtype=float)
    variances = np.asarray(variances, dtype=float)
    n, K = means.shape
    out = np.empty((n, K))
    certain = ~(variances > 0).any(axis=1)  # no uncertainty at all: the top score wins
    if certain.any():
        top = means[certain] == means[certain].max(axis=1, keepdims=True)
        out[certain] = top / top.sum(axis=1, keepdims=True)
    rows = np.flatnonzero(~certain)
    sds = _standard_deviations(means[rows], variances[rows])
    reach = _OFFSETS[-1]
    for start in range(0, rows.size, chunk):
        m = means[rows[start:start + chunk]]
        sd = sds[start:start + chunk]
        b = m.shape[0]
        # Below the largest m_j - 8.5 sd_j some Phi_j is negligible, above the largest
        # m_j + 8.5 sd_j every density is: only knots in between matter.
        low = (m - reach * sd).max(axis=1, keepdims=True)
        high = (m + reach * sd).max(axis=1, keepdims=True)
        knots = (m[:, :, None] + sd[:, :, None] * _OFFSETS).reshape(b, -1)
        inside = (knots > low) & (knots < high)
        count = int(inside.sum(axis=1).max())
        kept = np.sort(np.where(inside, knots, np.inf), axis=1)[:, :count]
        # low, the row's knots, then high; rows with fewer knots repeat high (empty pieces)
        knots = np.concatenate([low, np.where(np.isinf(kept), high, kept), high], axis=1)
        half = (knots[:, 1:] - knots[:, :-1]) / 2.0  # (b, S)
        centre = (knots[:, 1:] + knots[:, :-1]) / 2.0
        z = (centre[:, :, None] + half[:, :, None] * _GL_NODES).reshape(b, -1)  # (b, N)
        with np.errstate(divide="ignore", over="ignore"):
            log_w = np.log(half[:, :, None] * _GL_WEIGHTS).reshape(b, -1)  # -inf for empty pieces
            t = (z[:, :, None] - m[:, None, :]) / sd[:, None, :]  # (b, N, K)
            log_pdf = -0.5 * t * t - np.log(sd)[:, None, :] - _LOG_SQRT_2PI
        others = _excluding(log_ndtr(t))
        logp = logsumexp(log_w[:, :, None] + log_pdf + others, axis=1)  # (b, K)
        logp -= logp.max(axis=1, keepdims=True)
        p = np.exp(logp)
        out[rows[start:start + chunk]] = p / p.sum(axis=1, keepdims=True)
    return out


def _excluding(log_cdf):
    """``sum_{j != k} log_cdf[..., j]`` for every ``k``: the sum of the terms before ``k`` plus the
    sum of those after it, so a label's own term is never subtracted (it may be ``-inf``, or so
    large that subtracting it would erase the others)."""
    prefix = np.zeros_like(log_cdf)
    suffix = np.zeros_like(log_cdf)
    prefix[:, :, 1:] = np.cumsum(log_cdf[:, :, :-1], axis=2)
    suffix[:, :, :-1] = np.cumsum(log_cdf[:, :, :0:-1], axis=2)[:, :, ::-1]
    return prefix + suffix


# Draws per document for the sampling estimate: its standard error is at most
# 0.5 / sqrt(DRAWS) ~ 0.011 per probability.
DRAWS = 2000


def standard_draws(n_labels: int, seed) -> np.ndarray:
    """``DRAWS x n_labels`` standard normal numbers from ``seed`` (``None`` reads as 0)."""
    return np.random.default_rng(0 if seed is None else seed).standard_normal((DRAWS, n_labels))


def label_probabilities_sampling(means: np.ndarray, variances: np.ndarray, seed=None,
                                 chunk: int = 64) -> np.ndarray:
    """The papers' estimate of ``P(label k has the highest score)``: the fraction of draws it wins.

    EMNLP 2009 (section 7) draws weight vectors ``w ~ N(mu, Sigma)`` and counts, for each
    document, how often each label has the largest score ``w . f(x, label)``. With a
    block-diagonal covariance a document's label scores are independent Gaussians
    ``N(mu_k . x, x' Sigma_k x)``, so drawing the ``K`` scores is the same per document and costs
    ``O(K)`` per draw instead of ``O(dK)``. Every document uses the same seeded standard normal
    numbers (common random numbers, as the papers' draws of ``w`` are shared by all test
    documents), so a document's probabilities depend only on the model, the document and
    ``seed``: not on the other rows of the batch or their order. A tie for the top score (a
    document without features) splits the draw evenly between the tied labels. Rows sum to 1.
    """
    means = np.asarray(means, dtype=float)
    sds = np.sqrt(np.asarray(variances, dtype=float))
    n, K = means.shape
    z = standard_draws(K, seed)
    out = np.empty((n, K))
    for start in range(0, n, chunk):
        scores = means[start:start + chunk, None, :] + sds[start:start + chunk, None, :] * z[None]
        top = scores.max(axis=2, keepdims=True)
        winners = scores == top
        share = winners / winners.sum(axis=2, keepdims=True)
        out[start:start + chunk] = share.mean(axis=1)
    return out


def binary_probability_sampling(scores: np.ndarray, variances: np.ndarray, seed=None,
                                chunk: int = 1024) -> np.ndarray:
    """``P(score > 0)`` estimated from the same kind of draws: the binary case of the estimate above."""
    scores = np.asarray(scores, dtype=float)
    sds = np.sqrt(np.asarray(variances, dtype=float))
    z = standard_draws(1, seed)[:, 0]
    out = np.empty(scores.shape[0])
    for start in range(0, scores.shape[0], chunk):
        draws = scores[start:start + chunk, None] + sds[start:start + chunk, None] * z[None, :]
        out[start:start + chunk] = ((draws > 0).sum(axis=1) + 0.5 * (draws == 0).sum(axis=1)) / z.shape[0]
    return out
