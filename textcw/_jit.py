"""The only module that imports numba.

Policy: kernels are compiled ahead of first use and cached on disk (``cache=True``), release the
GIL (``nogil=True``) so shard training can use threads, and never use ``fastmath``: the update
rules divide by small margin variances, and reassociating those sums would make the kernels
disagree with their plain-numpy twins beyond 1e-12.

For developers: numba invalidates a cached kernel only when the source file that defines it
changes, not when a kernel it calls in another module does, so after editing, say,
``learners/_kernels/common.py`` the kernels of ``gaussian_diag.py`` would silently run their
stale machine code from ``__pycache__``. ``python3 dev.py`` (``train``, ``test``, ``docs``)
therefore runs everything with ``NUMBA_CACHE_DIR`` set to ``build/numba-cache/<digest>``,
named by the sha256 of every kernel module's source (this one, ``_csr_kernel.py``,
``learners/_kernels/*.py`` and the first-party plugins' kernel modules): any kernel change
starts a fresh cache, and an unchanged tree reuses its folder, so warm runs stay warm. Running
``pytest`` by hand uses numba's default cache; after changing a kernel that others call, set
``NUMBA_CACHE_DIR`` yourself or delete the ``__pycache__/*.nbi`` and ``*.nbc`` files.
"""

from __future__ import annotations

import numba


def kernel(fn):
    """Compile ``fn`` as a textcw kernel (no Python objects, cached, GIL released)."""
    return numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")(fn)
