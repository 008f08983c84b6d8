"""The covariance forms of the Gaussian learners, each described in one place.

A form decides the variance state array (``s``: one variance per weight; ``R``: the upper
Cholesky factor of each label block's precision), how it starts (``Sigma_1 = a I``), its shapes,
and the three kernels that run an epoch: binary, multi-class top-1 and multi-class k-best
(docs/algorithms.md "Covariance forms"). :data:`FORMS` is the only table that maps
``covariance=`` to any of these; a learner lists the names it accepts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from textcw.learners._kernels import (
    gaussian_diag,
    gaussian_diag_kbest,
    gaussian_exact,
    gaussian_exact_kbest,
    gaussian_full,
    gaussian_full_kbest,
)
from textcw.learners._kernels.constants import DIAG_KL, DIAG_L2, MC_TOP1
from textcw.learners.interleaved import paired_state
from textcw.learners.linalg import check_full_fits


@dataclass(frozen=True)
class CovarianceForm:
    """One ``covariance=`` value.

    Attributes
    ----------
    name : str
        The parameter value (``"diag-kl"``, ``"diag-l2"``, ``"exact"``, ``"full"``).
    variance : str
        The state array beside ``mu``: ``"s"`` (diagonal) or ``"R"`` (Cholesky factors).
    binary, top1, kbest : numba kernels
        One epoch of binary updates, of multi-class top-1 updates, and of multi-class updates
        against the top-k competitors (``multiclass="seq"``, ``"par"``, ``"exact"``).
    code : int or None
        The kernels' ``covariance`` argument (``DIAG_KL``/``DIAG_L2``), for the forms whose
        kernels serve more than one form.
    counts_floored : bool
        Its kernels count the updates that left a variance at the floor (``counts``); the
        ``exact`` and ``full`` forms keep variances positive otherwise.
    paired : bool
        A binary problem's ``mu`` and ``s`` are the two columns of one ``(n_rows, 2)`` array, a
        feature's mean and variance side by side (:mod:`textcw.learners.interleaved`): the forms
        whose epochs run on the diagonal loop.
    """

    name: str
    variance: str
    binary: Callable
    top1: Callable
    kbest: Callable
    code: int | None = None
    counts_floored: bool = False
    paired: bool = False

    @property
    def diagonal(self) -> bool:
        return self.variance == "s"

    @property
    def state_names(self) -> tuple[str, str]:
        return ("mu", self.variance)

    def kernel(self, binary: bool, strategy: int):
        """The epoch kernel for a binary problem or a multi-class ``strategy`` (``MC_*``)."""
        if binary:
            return self.binary
        return self.top1 if strategy == MC_TOP1 else self.kbest

    def state_shapes(self, n_rows: int, n_labels: int | None) -> dict[str, tuple[int, ...]]:
        shape = (n_rows,) if n_labels is None else (n_rows, n_labels)
        if self.diagonal:
            return {"mu": shape, "s": shape}
        return {"mu": shape, "R": (n_rows, n_rows) if n_labels is None else (n_labels, n_rows, n_rows)}

    def new_state(self, learner, n_rows: int, n_labels: int | None, a: float,
                  dtype=np.float64) -> dict[str, np.ndarray]:
        """``mu = 0`` and ``Sigma = a I`` (for ``R``: the factor ``a^{-1/2} I`` of the precision
        ``a^{-1} I``); a full form that would not fit in memory is refused first. ``dtype``: of
        ``mu`` and ``s`` (the learners allow float32 for the diagonal forms only)."""
        shape = (n_rows,) if n_labels is None else (n_rows, n_labels)
        if self.paired and n_labels is None:
            mu, s = paired_state(n_rows, float(a), dtype)
            return {"mu": mu, "s": s}
        mu = np.zeros(shape, dtype=dtype)
        if self.diagonal:
            return {"mu": mu, "s": np.full(shape, float(a), dtype=dtype)}
        check_full_fits(learner, n_rows, 1 if n_labels is None else n_labels,
                        learner.diagonal_suggestion)
        factor = np.eye(n_rows) / np.sqrt(float(a))
        R = factor if n_labels is None else np.repeat(factor[None], n_labels, axis=0)
        return {"mu": mu, "R": R}


FORMS = {
    form.name: form for form in (
        CovarianceForm("diag-kl", "s", gaussian_diag.binary_epoch, gaussian_diag.multiclass_top1_epoch,
                       gaussian_diag_kbest.multiclass_epoch, DIAG_KL, True, True),
        CovarianceForm("diag-l2", "s", gaussian_diag.binary_epoch, gaussian_diag.multiclass_top1_epoch,
                       gaussian_diag_kbest.multiclass_epoch, DIAG_L2, True, True),
        CovarianceForm("exact", "s", gaussian_exact.binary_epoch, gaussian_exact.multiclass_top1_epoch,
                       gaussian_exact_kbest.multiclass_epoch),
        CovarianceForm("full", "R", gaussian_full.binary_epoch, gaussian_full.multiclass_top1_epoch,
                       gaussian_full_kbest.multiclass_epoch),
    )
}
