"""Linear algebra shared by the learners that keep a matrix per label block (full-covariance
Gaussian learners and the second-order perceptron): memory checks, quadratic forms and the
variances read off an upper Cholesky factor, never forming a ``d x d`` inverse unless asked.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from textcw.errors import ParameterError
from textcw.learners.state import memory_budget

_CHUNK = 4096


# The full-covariance matrices may take the memory any learner state may take (a module-level
# name, so that tests can shrink it).
full_matrix_budget = memory_budget


def check_full_fits(learner, n_rows: int, n_blocks: int, diagonal: str) -> None:
    """Refuse ``covariance="full"`` when ``n_blocks`` matrices of ``n_rows^2`` floats do not fit."""
    need = n_blocks * n_rows * n_rows * 8
    budget = full_matrix_budget()
    if need > budget:
        what = (f"a {n_rows} x {n_rows} matrix" if n_blocks == 1
                else f"{n_blocks} matrices of {n_rows} x {n_rows}, one per label,")
        raise ParameterError(
            f"{type(learner).__name__}: covariance='full' needs {what} ({need / 1e9:.1f} GB), more "
            f"than the {budget / 1e9:.1f} GB available (half of this machine's memory); use "
            f"covariance={diagonal!r}, which keeps one value per feature, or reduce the number of "
            "features"
        )


def with_intercept_column(X, fit_intercept: bool):
    return sp.hstack([X, np.ones((X.shape[0], 1))], format="csr") if fit_intercept else X


def quadratic_forms(X, R) -> np.ndarray:
    """``x' (R' R)^{-1} x = ||R^{-T} x||^2`` for every row of ``X`` (``R`` upper triangular)."""
    out = np.empty(X.shape[0])
    for start in range(0, X.shape[0], _CHUNK):
        block = X[start:start + _CHUNK]
        dense = block.toarray().T if sp.issparse(block) else np.asarray(block).T
        z = scipy.linalg.solve_triangular(R, dense, trans="T", lower=False, check_finite=False)
        out[start:start + _CHUNK] = np.einsum("ij,ij->j", z, z)
    return out


# Floats of R^{-1} that variances_from_factor holds at a time (two blocks of this size: 64 MB).
_BLOCK_FLOATS = 1 << 22


def variances_from_factor(R) -> np.ndarray:
    """``diag((R' R)^{-1})`` without forming the matrix, in ``O(d)`` extra memory per column block.

    ``Sigma = R^{-1} R^{-T}``, so ``Sigma_ii`` is the squared norm of row ``i`` of ``R^{-1}``.
    Column ``j`` of the upper-triangular ``R^{-1}`` solves ``R z = e_j`` and is zero below row
    ``j``, so a block of columns ``[start, stop)`` needs only ``R[:stop, :stop]``; the squares are
    summed block by block. The working memory is two blocks of at most ``_BLOCK_FLOATS`` floats,
    whatever ``d``: reading the variances never needs the ``d x d`` matrices that
    :func:`covariance_from_factor` builds.
    """
    d = R.shape[0]
    out = np.zeros(d)
    width = max(1, min(d, _BLOCK_FLOATS // max(d, 1)))
    # LAPACK reads Fortran order: R's transpose is R's own memory in that order, whereas a
    # C-ordered R (or a slice of it) would be copied whole. Solving R' with trans="T" is R z = e.
    Rt = R.T if R.flags.c_contiguous else np.asfortranarray(R.T)
    for start in range(0, d, width):
        stop = min(d, start + width)
        unit = np.zeros((d, stop - start), order="F")
        unit[np.arange(start, stop), np.arange(stop - start)] = 1.0
        Z = scipy.linalg.solve_triangular(Rt, unit, trans="T", lower=True, check_finite=False,
                                          overwrite_b=True)
        out[:stop] += np.einsum("ij,ij->i", Z[:stop], Z[:stop])
    return out


def covariance_from_factor(R) -> np.ndarray:
    """``Sigma = (R' R)^{-1}``, symmetrised (it is symmetric in exact arithmetic).

    Needs three ``d x d`` temporaries besides ``R``: see :meth:`GaussianLinearClassifier.covariance_`
    for the memory check."""
    inv = scipy.linalg.solve_triangular(R, np.eye(R.shape[0]), lower=False, check_finite=False)
    sigma = inv @ inv.T
    return (sigma + sigma.T) / 2.0
