"""The public toolkit for writing a learner's numba kernels.

A learner's epoch kernel is called as ``kernel(indptr, indices, data, y, order, *state, *args)``
and returns ``(mistakes, updates)``:

- ``indptr, indices, data``: the training matrix in canonical CSR form (sorted, distinct column
  indices in range, finite non-zero values at most :data:`MAX_ABS_VALUE`; the index arrays int32
  or int64, for which numba compiles one version each);
- ``y``: binary problems +1.0/-1.0 (``classes_[1]`` is +1), multi-class label indices (int64);
- ``order``: the rows to visit, in order (shuffling stays in Python, seeded there);
- ``state``: the learner's ``state_names`` arrays, updated in place: weight-like arrays are
  ``w[d]`` (binary) or ``W[d, K]`` (feature-major, so one document's K scores read contiguous
  memory);
- ``args``: the learner's named scalar arguments (:func:`textcw.learners.protocol.bind_kernel`
  passes them by parameter name);
- a mistake is counted before the update, and a tie counts as a mistake.

The kernels index without bounds checks: textcw checks the input and the state's shapes before
every call, so a kernel may trust them. Variant choices are integer codes, never Python
callables, and every dispatch on a code ends in an error for an unknown one (the two loops
below take a variant's compiled functions instead, and call nothing else).

:func:`kernel` is textcw's compilation policy (cached, GIL released, no ``fastmath``), applied
when a kernel is first called (:class:`textcw._jit.Kernel`: importing kernels imports no numba); the
functions below are compiled with it and may be called from a plugin's kernels, as may
:func:`prefetch` (a cache hint); :func:`as_kernel_csr` puts a matrix in the form the kernels
take.

A diagonal Gaussian variant need not write a kernel at all: :func:`diagonal_gaussian_kernels`
builds its binary and top-1 multi-class epoch kernels from its ``step`` and ``variance``
functions, with textcw's guards (smallest normal, floor counting, mistake before update, a tie
counts as a mistake) applied by the loop; set the result as the learner's ``step_kernels``.

A variant whose state is not a Gaussian but per-feature vectors (Balanced Winnow's ``u`` and
``v``, a perceptron's ``w``) writes its net ``weight``, its ``step`` and its per-cell ``update``,
and :func:`per_feature_kernels` builds its binary and top-1 multi-class epoch kernels with the
same guards (mistake before update, a tie or a NaN margin counts as a mistake, no update for an
empty document or a step that is not finite and positive, an update that overflows undone and
refused); they take the state arrays and the parameters by name, so set them as the learner's
``binary_kernel`` and ``multiclass_kernel`` and offer the parameters from ``kernel_values()``.

Both run textcw's own epoch loops, the loops the built-in CW, AROW, SCW (diagonal forms),
perceptron and PA learners run on. Define the variant's functions at module level, with
:func:`kernel`: the loops' code for the variant is then compiled once and cached on disk with
textcw's kernels, so a fresh process loads it as it loads a built-in rule's (functions defined
inside a function work too, compiled once per process).
"""

from __future__ import annotations

from textcw._csr import as_kernel_csr
from textcw._jit import kernel, prefetch
from textcw._limits import MAX_ABS_VALUE
from textcw.learners._kernels.common import (
    column,
    row_dot,
    row_dot_and_variance,
    row_scores,
    row_sq_norm,
    row_variances,
    top_competitor,
    top_competitors,
)
from textcw.learners._kernels.constants import (
    COUNT_FLOORED,
    COUNT_SOLVER_FALLBACKS,
    COUNT_SOLVER_UNCERTIFIED,
    DIAG_KL,
    DIAG_L2,
    N_COUNTS,
    SMALLEST_NORMAL,
    VARIANCE_FLOOR,
)
from textcw.learners._kernels.diagonal_loop import DiagonalKernels, diagonal_gaussian_kernels
from textcw.learners._kernels.feature_loop import PerFeatureKernels, per_feature_kernels
from textcw.learners._kernels.gaussian_diag import update_variance
from textcw.learners.protocol import KernelCall, bind_kernel

__all__ = [
    "COUNT_FLOORED",
    "COUNT_SOLVER_FALLBACKS",
    "COUNT_SOLVER_UNCERTIFIED",
    "DIAG_KL",
    "DIAG_L2",
    "DiagonalKernels",
    "KernelCall",
    "MAX_ABS_VALUE",
    "N_COUNTS",
    "PerFeatureKernels",
    "SMALLEST_NORMAL",
    "VARIANCE_FLOOR",
    "as_kernel_csr",
    "bind_kernel",
    "column",
    "diagonal_gaussian_kernels",
    "kernel",
    "per_feature_kernels",
    "prefetch",
    "row_dot",
    "row_dot_and_variance",
    "row_scores",
    "row_sq_norm",
    "row_variances",
    "top_competitor",
    "top_competitors",
    "update_variance",
]
