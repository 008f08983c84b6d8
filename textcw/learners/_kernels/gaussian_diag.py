"""Confidence-weighted kernels with a diagonal covariance (mean ``mu``, variances ``s``).

Closed forms are those of ALGORITHMS.md: CW "var" (ICML 2008; JMLR eq. 18) and CW "stdev"
(NIPS 2008; JMLR eq. 31). Each example yields three numbers from its margin ``m`` and margin
variance ``v``: the mean step ``alpha``, the covariance step ``beta`` (diag-l2) and the precision
increment ``c`` (diag-kl: ``1/s_j += c x_j^2``).
"""

from __future__ import annotations

import math

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import row_scores, top_competitor
from textcw.learners._kernels.constants import CW_STDEV, CW_VAR, DIAG_KL


@kernel
def cw_var_steps(m, v, phi):
    """CW-var: ``y (mu . x) >= phi x' Sigma x`` after the update (JMLR eq. 18).

    With ``b = 1 + 2 phi m``, eq. 18 reads ``alpha = (-b + sqrt(b^2 - 8 phi (m - phi v))) / (4 phi v)``.
    For ``b > 0`` the two terms of the numerator nearly cancel when the constraint is almost met,
    so we use the equal rationalised form ``2 (phi v - m) / (v (sqrt(...) + b))``, whose sign is
    exactly that of the constraint violation ``phi v - m``.
    """
    if m >= phi * v:
        return 0.0, 0.0, 0.0
    b = 1.0 + 2.0 * phi * m
    root = math.sqrt(b * b - 8.0 * phi * (m - phi * v))
    if b > 0.0:
        alpha = 2.0 * (phi * v - m) / (v * (root + b))
    else:
        alpha = (root - b) / (4.0 * phi * v)
    c = 2.0 * alpha * phi
    return alpha, c / (1.0 + c * v), c


@kernel
def cw_stdev_steps(m, v, phi):
    """CW-stdev: ``y (mu . x) >= phi sqrt(x' Sigma x)`` after the update (JMLR eq. 31).

    Eq. 31: ``alpha = (-m psi + sqrt(D)) / (v xi)`` with ``D = m^2 phi^4 / 4 + v phi^2 xi``. For
    ``m > 0`` the numerator cancels catastrophically near the constraint boundary; since
    ``D - m^2 psi^2 = xi (phi^2 v - m^2)`` the equal form ``(phi^2 v - m^2) / (v (sqrt(D) + m psi))``
    is stable, and positive exactly when the constraint ``m >= phi sqrt(v)`` is violated.
    ``sqrt_u`` uses the rationalised form of the papers' expression for the same reason
    (ALGORITHMS.md).
    """
    if m >= phi * math.sqrt(v):
        return 0.0, 0.0, 0.0
    psi = 1.0 + phi * phi / 2.0
    xi = 1.0 + phi * phi
    root = math.sqrt(m * m * phi ** 4 / 4.0 + v * phi * phi * xi)
    if m > 0.0:
        alpha = (phi * phi * v - m * m) / (v * (root + m * psi))
    else:
        alpha = (root - m * psi) / (v * xi)
    avp = alpha * v * phi
    sqrt_u = 2.0 * v / (avp + math.sqrt(avp * avp + 4.0 * v))
    beta = alpha * phi / (sqrt_u + avp)
    return alpha, beta, alpha * phi / sqrt_u


@kernel
def steps(rule, m, v, phi):
    if v <= 0.0:  # empty document, or every variance it touches has collapsed
        return 0.0, 0.0, 0.0
    if rule == CW_VAR:
        return cw_var_steps(m, v, phi)
    return cw_stdev_steps(m, v, phi)


@kernel
def update_variance(s_j, x_j, beta, c, covariance):
    if covariance == DIAG_KL:
        return 1.0 / (1.0 / s_j + c * x_j * x_j)
    return s_j - beta * (s_j * x_j) ** 2


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, s, rule, covariance, phi):
    mistakes = 0
    updates = 0
    for t in range(order.shape[0]):
        i = order[t]
        score = 0.0
        v = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            score += mu[j] * data[p]
            v += s[j] * data[p] * data[p]
        m = y[i] * score
        if m <= 0.0:
            mistakes += 1
        alpha, beta, c = steps(rule, m, v, phi)
        if alpha > 0.0:
            updates += 1
            ay = alpha * y[i]
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                mu[j] += ay * s[j] * data[p]  # uses Sigma before the update
                s[j] = update_variance(s[j], data[p], beta, c, covariance)
    return mistakes, updates


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, s, rule, covariance, phi):
    """Top-1 multi-class update (EMNLP 2009): one binary update on ``f(x, y) - f(x, r)``.

    ``m = mu_y . x - mu_r . x`` and ``v = x' Sigma_y x + x' Sigma_r x``; both blocks move.
    """
    mistakes = 0
    updates = 0
    scores = np.empty(mu.shape[1])
    for t in range(order.shape[0]):
        i = order[t]
        yi = y[i]
        row_scores(indptr, indices, data, i, mu, scores)
        r = top_competitor(scores, yi)
        m = scores[yi] - scores[r]
        if m <= 0.0:
            mistakes += 1
        v = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            v += (s[j, yi] + s[j, r]) * data[p] * data[p]
        alpha, beta, c = steps(rule, m, v, phi)
        if alpha > 0.0:
            updates += 1
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                xj = data[p]
                mu[j, yi] += alpha * s[j, yi] * xj
                mu[j, r] -= alpha * s[j, r] * xj
                s[j, yi] = update_variance(s[j, yi], xj, beta, c, covariance)
                s[j, r] = update_variance(s[j, r], xj, beta, c, covariance)
    return mistakes, updates
