"""Numerical limits shared by the input check (:mod:`textcw._csr`) and the kernels.

Plain Python, importable without numba or scipy, and below both users, so that neither reaches
into the other for a number.
"""

from __future__ import annotations

__all__ = ["MAX_ABS_VALUE"]

# The largest feature value, in absolute value, that the kernels accept: larger ones overflow the
# products of squared values in the update rules. Checked by textcw._csr.as_kernel_csr, whose
# docstring gives the reasoning, and by the kernels' own input check (textcw._csr_kernel).
MAX_ABS_VALUE = 1e30
