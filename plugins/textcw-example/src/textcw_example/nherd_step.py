"""NHERD's update (Crammer and Lee, NIPS 2010) as a step: textcw's epoch loop does the rest.

The rule, its derivation and the three diagonal forms are in :mod:`textcw_example.nherd`. Per
example, with margin ``m`` and margin variance ``v = x' Sigma x`` (both before the update):
``alpha = max(0, 1 - m) / (v + 1/C)``; ``c = 2C + C^2 v``, the full update's precision increment
``Sigma^{-1} += c x x'``, applied per form: ``PROJECT`` (``DIAG_KL``) ``1/s_j += c x_j^2``;
``DROP`` (``DIAG_L2``) ``s_j -= beta (s_j x_j)^2`` with ``beta = c / (1 + c v)``; ``EXACT``
``s_j <- s_j / (1 + C x_j^2 s_j)^2``. :func:`textcw.kernels.diagonal_gaussian_kernels` builds
the epoch kernels from these two functions and applies textcw's guards (empty documents,
non-finite steps, the variance floor and its counter, mistakes counted before the update).
"""

from __future__ import annotations

from textcw.kernels import DIAG_KL, DIAG_L2, diagonal_gaussian_kernels, kernel, update_variance

PROJECT = DIAG_KL  # covariance="diag-kl"
DROP = DIAG_L2  # covariance="diag-l2"
EXACT = 2  # covariance="exact": NHERD's exact diagonal update
UNKNOWN_FORM = "unknown NHERD covariance code (PROJECT, DROP or EXACT)"


@kernel
def nherd_step(m, v, params):
    """``(alpha, beta, c)``: ``alpha = max(0, 1 - m) / (v + 1/C)``, ``c = 2C + C^2 v``,
    ``beta = c / (1 + c v)``."""
    C = params[0]
    if m >= 1.0:  # no loss
        return 0.0, 0.0, 0.0
    c = 2.0 * C + C * C * v
    return (1.0 - m) / (v + 1.0 / C), c / (1.0 + c * v), c


@kernel
def nherd_variance(s_j, x_j, beta, c, params, covariance, floor):
    """One variance after the update, in the given form."""
    if covariance == EXACT:
        shrink = 1.0 + params[0] * (x_j * x_j * s_j)
        return s_j / (shrink * shrink)
    if covariance == PROJECT or covariance == DROP:
        return update_variance(s_j, x_j, beta, c, covariance, floor)
    raise ValueError(UNKNOWN_FORM)


KERNELS = diagonal_gaussian_kernels(nherd_step, nherd_variance, params=("C",), forms=("diag-kl", "diag-l2", "exact"))
