"""Step sizes of the Gaussian learners: CW var and stdev, AROW, SCW-I and SCW-II.

Every rule turns an example's margin ``m = y mu.x`` and margin variance ``v = x' Sigma x`` into

- ``alpha``: the mean step, ``mu += alpha y Sigma x``;
- ``c``: the precision increment, ``Sigma^{-1} += c x x'`` (full), ``1/s_j += c x_j^2`` (diag-kl);
- ``beta = c / (1 + c v)``: the same update written on the covariance,
  ``Sigma -= beta (Sigma x)(Sigma x)'`` (full), ``s_j -= beta (s_j x_j)^2`` (diag-l2).

The formulas are those of docs/algorithms.md "CW var", "CW stdev", "AROW" and "SCW"; where the
printed closed form cancels catastrophically the code uses an algebraically equal rationalised
form (each function says which and why; docs/algorithms.md "Stable step sizes").
"""

from __future__ import annotations

import math

from textcw._jit import kernel
from textcw.learners._kernels.constants import (
    AROW_HINGE,
    AROW_SQUARED_HINGE,
    CW_STDEV,
    CW_VAR,
    SCW1,
    SCW2,
    SMALLEST_NORMAL,
)

_NONE = (0.0, 0.0, 0.0)


@kernel
def cw_var_steps(m, v, phi):
    """CW-var: ``y (mu . x) >= phi x' Sigma x`` after the update (JMLR eq. 18).

    With ``b = 1 + 2 phi m``, eq. 18 reads ``alpha = (-b + sqrt(b^2 - 8 phi (m - phi v))) / (4 phi v)``.
    For ``b > 0`` the two terms of the numerator nearly cancel when the constraint is almost met,
    so we use the equal rationalised form ``2 (phi v - m) / (v (sqrt(...) + b))``, whose sign is
    exactly that of the constraint violation ``phi v - m``. Precision increment ``c = 2 alpha phi``.
    """
    if m >= phi * v:
        return _NONE
    b = 1.0 + 2.0 * phi * m
    root = math.sqrt(b * b - 8.0 * phi * (m - phi * v))
    if b > 0.0:
        alpha = 2.0 * (phi * v - m) / (v * (root + b))
    else:
        alpha = (root - b) / (4.0 * phi * v)
    c = 2.0 * alpha * phi
    return alpha, c / (1.0 + c * v), c


@kernel
def stdev_covariance_steps(alpha, v, phi):
    """``(beta, c)`` of the stdev-type covariance update for a mean step ``alpha`` (JMLR eq. 31).

    ``sqrt_u = sqrt(x' Sigma_new x)`` is the papers' ``(-alpha v phi + sqrt(alpha^2 v^2 phi^2 + 4 v)) / 2``
    in rationalised form: the printed form cancels catastrophically when ``alpha v phi`` is large
    (a confident mistake) and then divides by zero. ``hypot`` keeps ``(alpha v phi)^2`` from
    overflowing. Then ``c = alpha phi / sqrt_u`` and ``beta = alpha phi / (sqrt_u + v alpha phi)``.
    """
    avp = alpha * v * phi
    sqrt_u = 2.0 * v / (avp + math.hypot(avp, 2.0 * math.sqrt(v)))
    return alpha * phi / (sqrt_u + avp), alpha * phi / sqrt_u


@kernel
def cw_stdev_alpha(m, v, phi):
    """CW-stdev mean step: ``y (mu . x) >= phi sqrt(x' Sigma x)`` after the update (JMLR eq. 31).

    Eq. 31: ``alpha = (-m psi + sqrt(D)) / (v xi)`` with ``D = m^2 phi^4 / 4 + v phi^2 xi``,
    ``psi = 1 + phi^2/2``, ``xi = 1 + phi^2``. For ``m > 0`` the numerator cancels
    catastrophically near the constraint boundary; since ``D - m^2 psi^2 = xi (phi^2 v - m^2)``
    the equal form ``(phi^2 v - m^2) / (v (sqrt(D) + m psi))`` is stable. Zero when the constraint
    ``m >= phi sqrt(v)`` already holds.
    """
    if m >= phi * math.sqrt(v):
        return 0.0
    psi = 1.0 + phi * phi / 2.0
    xi = 1.0 + phi * phi
    root = math.sqrt(m * m * phi ** 4 / 4.0 + v * phi * phi * xi)
    if m > 0.0:
        return (phi * phi * v - m * m) / (v * (root + m * psi))
    return (root - m * psi) / (v * xi)


@kernel
def scw2_alpha(m, v, phi, C):
    """SCW-II mean step (Wang, Zhao and Hoi, ICML 2012, section 3.2, the SCW-II update).

    With ``n = v + 1/(2C)`` and ``gamma = phi sqrt(phi^2 m^2 v^2 + 4 n v (n + v phi^2))``:
    ``alpha = max(0, (-(2 m n + phi^2 m v) + gamma) / (2 (n^2 + n v phi^2)))``. (The squares are
    ``v^2`` and ``phi^2``; copies that write ``v*2`` and ``phi*2`` solve a different problem.)
    Derivation: the KKT conditions give ``m + alpha n = phi sqrt(u)`` with
    ``sqrt(u) = sqrt(x' Sigma_new x)`` from eq. 31, a quadratic in ``alpha`` whose discriminant is
    ``gamma^2``. For ``b = m (2 n + phi^2 v) > 0`` the numerator cancels near the boundary, so we use
    the equal form ``2 (phi^2 v - m^2) / (gamma + b)`` (the product of the roots is
    ``(m^2 - phi^2 v) / (n^2 + n v phi^2)``). As ``C -> inf`` this is CW-stdev's ``alpha``.
    """
    if m >= phi * math.sqrt(v):
        return 0.0
    n = v + 1.0 / (2.0 * C)
    b = m * (2.0 * n + phi * phi * v)
    gamma = phi * math.sqrt(phi * phi * m * m * v * v + 4.0 * n * v * (n + v * phi * phi))
    if b > 0.0:
        return 2.0 * (phi * phi * v - m * m) / (gamma + b)
    return (gamma - b) / (2.0 * (n * n + n * v * phi * phi))


@kernel
def steps(rule, m, v, phi, C, r):
    """``(alpha, beta, c)`` for one example; all zero when the rule makes no update.

    ``phi`` is used by CW and SCW, ``C`` by SCW, ``r`` by AROW.

    Two guards, which change nothing on ordinary data:

    - ``v`` below the smallest normal double (an empty document, or one whose squared values
      underflow, e.g. every ``|x_j| < 1e-154``) makes no update: every rule divides by ``v``
      (``alpha ~ |m| / v`` in eqs. 18 and 31), which would give 0/0 or overflow. Such a document
      carries no usable information in double precision (``constants.SMALLEST_NORMAL``).
    - steps that are not finite make no update. With ``v`` normal they overflow only for a
      large margin against a tiny ``v``: CW-stdev's precision increment grows like
      ``(m phi / v)^2`` on a confident mistake (eq. 31 with ``alpha ~ |m| / v``), and a weight
      grown on tiny feature values can meet a large one. Applying an infinite step would put
      inf/NaN into every weight and variance of the document's features for good.
    """
    if not v >= SMALLEST_NORMAL:  # also false for NaN
        return _NONE
    alpha, beta, c = _rule_steps(rule, m, v, phi, C, r)
    if math.isfinite(alpha) and math.isfinite(beta) and math.isfinite(c):
        return alpha, beta, c
    return _NONE


@kernel
def _rule_steps(rule, m, v, phi, C, r):
    """The rule's ``(alpha, beta, c)`` for ``v > 0`` (see :func:`steps`)."""
    if rule == CW_VAR:
        return cw_var_steps(m, v, phi)
    if rule == AROW_SQUARED_HINGE or rule == AROW_HINGE:
        # AROW (MLJ 2013): update iff m < 1; Sigma^{-1} += x x' / r (eq. 15) for both losses;
        # squared hinge: alpha = (1 - m) beta (eqs. 12, 16); hinge: eq. 23.
        if m >= 1.0:
            return _NONE
        beta = 1.0 / (v + r)
        if rule == AROW_SQUARED_HINGE:
            alpha = (1.0 - m) * beta
        else:  # hinge: PA-I on Sigma^{1/2} x with C = 1 / (2r)
            alpha = min(1.0 / (2.0 * r), (1.0 - m) / v)
        return alpha, beta, 1.0 / r
    if rule == CW_STDEV:
        alpha = cw_stdev_alpha(m, v, phi)
    elif rule == SCW1:
        # SCW-I (Wang, Zhao and Hoi, ICML 2012, section 3.1): CW-stdev's step capped at C.
        alpha = min(C, cw_stdev_alpha(m, v, phi))
    elif rule == SCW2:
        alpha = scw2_alpha(m, v, phi, C)
    else:
        raise ValueError("unknown Gaussian rule code")
    if alpha <= 0.0:
        return _NONE
    beta, c = stdev_covariance_steps(alpha, v, phi)
    return alpha, beta, c
