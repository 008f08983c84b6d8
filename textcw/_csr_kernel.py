"""The kernel input contract checked in one compiled pass: :func:`kernel_ready`.

:func:`textcw._csr.as_kernel_csr` calls it to decide whether a CSR matrix can go to the kernels
as it is; it lives below the kernels (:mod:`textcw.learners._kernels`) so that the input check
does not depend on them. Importing this module loads numba.
"""

from __future__ import annotations

from textcw._jit import kernel
from textcw._limits import MAX_ABS_VALUE

__all__ = ["kernel_ready"]


@kernel
def kernel_ready(indptr, indices, data, n_columns):
    """Whether CSR arrays already meet the kernel contract.

    The contract (see :mod:`textcw._csr`): ``indptr`` non-decreasing from 0 to ``len(data)``,
    column indices strictly increasing within each row and inside ``[0, n_columns)``, values
    non-zero and at most ``MAX_ABS_VALUE`` in absolute value (so finite). Index arrays may be
    int32 or int64 (the kernels are compiled for both). The loops count violations instead of
    branching on each entry, so they vectorise: the check costs a fraction of one epoch.
    """
    n_rows = indptr.shape[0] - 1
    if n_rows < 0 or indptr[0] != 0 or indptr[n_rows] != data.shape[0] or indices.shape[0] != data.shape[0]:
        return False
    bad = 0
    for p in range(data.shape[0]):
        value = data[p]
        # zero, out of range (inf included), or NaN (the one value unequal to itself)
        bad += (value == 0.0) | (abs(value) > MAX_ABS_VALUE) | (value != value)
    if bad:
        return False
    for i in range(n_rows):
        if indptr[i + 1] < indptr[i]:
            return False
    # Column indices strictly increasing within each row: one flat pass over all of them (it
    # vectorises; a loop per row of a few dozen entries does not), then the pairs that straddle
    # two rows, which may decrease, are taken back out, one per non-empty row after the first.
    # indptr is known to be monotone from 0 to len(indices) here, so no read leaves the arrays.
    steps_down = 0
    for p in range(1, indices.shape[0]):
        steps_down += indices[p] <= indices[p - 1]
    for i in range(n_rows):
        start = indptr[i]
        stop = indptr[i + 1]
        if stop > start:
            if indices[start] < 0 or indices[stop - 1] >= n_columns:
                return False
            if start > 0:
                steps_down -= indices[start] <= indices[start - 1]
    return steps_down == 0
