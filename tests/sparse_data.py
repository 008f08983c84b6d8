"""Seeded sparse test matrices shared by the test folders.

A module of its own (not ``conftest.py``): several test folders have a ``conftest.py``, so
``from conftest import ...`` would resolve to whichever of them was imported first.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def random_sparse(n, d, density, seed, *, empty_rows=()):
    """A seeded CSR matrix with some negative values and optionally empty rows."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    X = X.tolil()
    for i in empty_rows:
        X[i, :] = 0
    return X.tocsr()
