"""The only module that imports numba.

Policy: kernels are compiled ahead of first use and cached on disk (``cache=True``), release the
GIL (``nogil=True``) so shard training can use threads, and never use ``fastmath``: the update
rules divide by small margin variances, and reassociating those sums would make the kernels
disagree with their plain-numpy twins beyond 1e-12.
"""

from __future__ import annotations

import numba


def kernel(fn):
    """Compile ``fn`` as a textcw kernel (no Python objects, cached, GIL released)."""
    return numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")(fn)
