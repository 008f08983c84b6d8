"""Dense triangular kernels for the full-covariance learners.

A full covariance is never stored: the learners keep the upper Cholesky factor ``R`` of the
*precision* ``P = Sigma^{-1} = R' R``. Every update of CW, AROW, SCW and SOP adds a rank-one
positive semi-definite term to the precision (``P += c x x'``, docs/algorithms.md
"Covariance forms"), which a Cholesky rank-one *update* applies with plane rotations; the
diagonal of ``R`` can only grow, so
``P`` (and ``Sigma``) stay symmetric positive definite by construction. The textbook form
``Sigma -= beta (Sigma x)(Sigma x)'`` subtracts nearly equal numbers whenever ``beta v`` is close
to 1 (every confident mistake of CW-stdev: the new margin variance is ``v (1 - beta v)``), so its
positive definiteness rests on rounding; without the increment cap of :mod:`.gaussian_full` it
produced a negative margin variance after 5,323 updates of CW-stdev (``eta=0.99``) on the
``synthetic:noise10`` stream. It is used only by the plain-numpy reference the kernels are tested
against.

``Sigma x`` costs two triangular solves: ``z = R^{-T} x`` (so ``v = x' Sigma x = z . z``, a sum of
squares that cannot go negative) and ``Sigma x = R^{-1} z``.
"""

from __future__ import annotations

import math

from textcw._jit import kernel
from textcw.learners._kernels.common import column


@kernel
def scatter_row(indptr, indices, data, i, out):
    """``out = x_i`` as a dense vector; returns ``||x_i||^2``."""
    out[:] = 0.0
    total = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        out[column(indices[p])] = data[p]
        total += data[p] * data[p]
    return total


@kernel
def forward_solve(R, x, z):
    """``z = R^{-T} x`` for upper-triangular ``R`` (row-oriented, so ``R`` is read row by row)."""
    d = x.shape[0]
    z[:] = x
    for k in range(d):
        zk = z[k] / R[k, k]
        z[k] = zk
        if zk != 0.0:
            for i in range(k + 1, d):
                z[i] -= R[k, i] * zk


@kernel
def back_solve(R, z, out):
    """``out = R^{-1} z`` for upper-triangular ``R``."""
    d = z.shape[0]
    for k in range(d - 1, -1, -1):
        total = z[k]
        for i in range(k + 1, d):
            total -= R[k, i] * out[i]
        out[k] = total / R[k, k]


@kernel
def cholesky_update(R, w):
    """``R' R += w w'`` in place (``w`` is overwritten); ``O(d^2)`` plane rotations.

    Each step replaces ``R[k, k]`` by ``hypot(R[k, k], w[k]) >= R[k, k]``, so the factor stays
    non-singular and the precision positive definite whatever the rounding.
    """
    d = w.shape[0]
    for k in range(d):
        wk = w[k]
        if wk == 0.0:
            continue  # the rotation would be the identity
        rkk = R[k, k]
        rr = math.hypot(rkk, wk)
        cos = rr / rkk
        sin = wk / rkk
        R[k, k] = rr
        for i in range(k + 1, d):
            rki = (R[k, i] + sin * w[i]) / cos
            R[k, i] = rki
            w[i] = cos * w[i] - sin * rki


@kernel
def dot(a, b):
    total = 0.0
    for k in range(a.shape[0]):
        total += a[k] * b[k]
    return total
