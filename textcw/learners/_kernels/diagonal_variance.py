"""textcw's variance update of the two diagonal forms, as the diagonal loop calls a variant's.

Every diagonal Gaussian update named in the papers changes the precision by a rank-one term,
``Sigma^{-1} += c x x'`` (CW, ICML 2008 eq. 11; AROW, NIPS 2009 eq. 9; SCW, ICML 2012
eqs. 11-12), and projects it onto diagonal matrices in one of two ways: ``diag-kl``
(``1/s_j += c x_j^2``, the KL projection, MLJ 2013 section 3.2) and ``diag-l2``
(``s_j -= beta (s_j x_j)^2``, the Euclidean one). :func:`diagonal_variance` is those two for a
variant's ``(beta, c)``: the built-in rules use it, and a plugin variant that names no variance
function of its own gets it (:func:`textcw.kernels.diagonal_gaussian_kernels`), so the usual
variant cannot compute one form while the user asked for the other.
"""

from __future__ import annotations

from textcw._jit import kernel
from textcw.learners._kernels.constants import DIAG_KL

__all__ = ["FORMS", "diagonal_variance"]

FORMS = ("diag-kl", "diag-l2")  # the covariance forms diagonal_variance computes


@kernel
def diagonal_variance(s_j, x_j, beta, c, params, covariance, floor):
    """One variance after the update in the form ``covariance`` (``DIAG_KL`` or ``DIAG_L2``,
    which the entry kernels checked): no error path and no floor (the loop applies it), so the
    compiler inlines it into the loop and moves the test of the form out of it."""
    if covariance == DIAG_KL:
        return s_j / (1.0 + c * (s_j * x_j * x_j))
    sx = s_j * x_j
    return s_j - beta * sx * sx
