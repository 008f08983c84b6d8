"""Plain-numpy twins of every kernel update rule, written from ALGORITHMS.md.

They operate on dense copies of one example at a time, so they are slow and obviously
correct; the kernel tests check that the numba kernels agree with them to 1e-12.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

PERCEPTRON, PA, PA1, PA2 = "perceptron", "pa", "pa1", "pa2"


def dense_row(X, i):
    return np.asarray(X[i].todense()).ravel()


def pa_tau(rule, m, q, C):
    if rule == PERCEPTRON:
        return 1.0 if m <= 0 else 0.0
    loss = max(0.0, 1.0 - m)
    if loss == 0.0 or q == 0.0:
        return 0.0
    return {PA: loss / q, PA1: min(C, loss / q), PA2: loss / (q + 1.0 / (2.0 * C))}[rule]


def first_order_binary(X, y, order, w, rule, C=1.0):
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        m = y[i] * (w @ x)
        mistakes += m <= 0
        tau = pa_tau(rule, m, x @ x, C)
        if tau > 0 and np.any(x):
            updates += 1
            w += tau * y[i] * x
    return mistakes, updates


def competitor(scores, y):
    masked = np.where(np.arange(len(scores)) == y, -np.inf, scores)
    return int(np.argmax(masked))  # argmax returns the first (lowest) index on ties


def first_order_multiclass(X, y, order, W, rule, C=1.0):
    """``W`` is (d, K); top-1 update on the difference vector, ``||g||^2 = 2 ||x||^2``."""
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        scores = x @ W
        r = competitor(scores, y[i])
        m = scores[y[i]] - scores[r]
        mistakes += m <= 0
        tau = pa_tau(rule, m, 2 * (x @ x), C)
        if tau > 0 and np.any(x):
            updates += 1
            W[:, y[i]] += tau * x
            W[:, r] -= tau * x
    return mistakes, updates


def cw_steps(rule, m, v, phi):
    """(alpha, beta, c) of ALGORITHMS.md for CW var / stdev.

    Update only when the constraint is violated; alpha in the rationalised form for m > 0
    (equal to the papers' closed form, without its cancellation; see test_closed_forms).
    """
    if v <= 0:
        return 0.0, 0.0, 0.0
    if rule == "var":
        if m >= phi * v:
            return 0.0, 0.0, 0.0
        b = 1 + 2 * phi * m
        root = np.sqrt(b * b - 8 * phi * (m - phi * v))
        alpha = 2 * (phi * v - m) / (v * (root + b)) if b > 0 else (root - b) / (4 * phi * v)
        return alpha, 2 * alpha * phi / (1 + 2 * alpha * phi * v), 2 * alpha * phi
    if m >= phi * np.sqrt(v):
        return 0.0, 0.0, 0.0
    psi, xi = 1 + phi**2 / 2, 1 + phi**2
    root = np.sqrt(m**2 * phi**4 / 4 + v * phi**2 * xi)
    alpha = (phi**2 * v - m * m) / (v * (root + m * psi)) if m > 0 else (root - m * psi) / (v * xi)
    avp = alpha * v * phi  # formed first: alpha**2 * v**2 alone can overflow when v is tiny
    sqrt_u = 2 * v / (avp + np.sqrt(avp * avp + 4 * v))
    return alpha, alpha * phi / (sqrt_u + avp), alpha * phi / sqrt_u


def cw_steps_textbook(rule, m, v, phi):
    """alpha exactly as printed (JMLR eqs. 18 and 31), for checking the stable forms."""
    if rule == "var":
        b = 1 + 2 * phi * m
        return max(0.0, (-b + np.sqrt(b * b - 8 * phi * (m - phi * v))) / (4 * phi * v))
    psi, xi = 1 + phi**2 / 2, 1 + phi**2
    return max(0.0, (-m * psi + np.sqrt(m**2 * phi**4 / 4 + v * phi**2 * xi)) / (v * xi))


def diag_update(s, x, beta, c, covariance):
    nz = x != 0
    out = s.copy()
    if covariance == "diag-kl":
        out[nz] = 1 / (1 / s[nz] + c * x[nz] ** 2)
    else:
        out[nz] = s[nz] - beta * (s[nz] * x[nz]) ** 2
    return out


def gaussian_diag_binary(X, y, order, mu, s, rule, covariance, eta):
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        m = y[i] * (mu @ x)
        v = s @ (x * x)
        mistakes += m <= 0
        alpha, beta, c = cw_steps(rule, m, v, phi)
        if alpha > 0:
            updates += 1
            mu += alpha * y[i] * s * x
            s[:] = diag_update(s, x, beta, c, covariance)
    return mistakes, updates


def gaussian_diag_multiclass(X, y, order, mu, s, rule, covariance, eta):
    """``mu`` and ``s`` are (d, K); top-1 update on the two blocks y and r."""
    phi = ndtri(eta)
    mistakes = updates = 0
    for i in order:
        x = dense_row(X, i)
        scores = x @ mu
        yi = y[i]
        r = competitor(scores, yi)
        m = scores[yi] - scores[r]
        v = (s[:, yi] + s[:, r]) @ (x * x)
        mistakes += m <= 0
        alpha, beta, c = cw_steps(rule, m, v, phi)
        if alpha > 0:
            updates += 1
            mu[:, yi] += alpha * s[:, yi] * x
            mu[:, r] -= alpha * s[:, r] * x
            s[:, yi] = diag_update(s[:, yi], x, beta, c, covariance)
            s[:, r] = diag_update(s[:, r], x, beta, c, covariance)
    return mistakes, updates
