"""Seeded sparse test matrices for the learner tests.

The same generator as ``random_sparse`` in tests/conftest.py; it lives in a module of its own
because several test folders have a ``conftest.py``, so ``from conftest import ...`` resolves
to whichever of them was imported first.
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
