"""The train/test split of a single file, drawn per row (:mod:`textcw.corpus.tabular`: "The
split without a test file ..."): row ``i`` is a test row when a draw seeded by
``(seed, i // SPLIT_BLOCK)`` puts it there with probability ``test``, so any range of rows knows
its split without reading the rows before it.
"""

from __future__ import annotations

import functools

import numpy as np

from textcw.corpus.tabular.spec import TableSpec

__all__ = ["SPLIT_BLOCK", "split_of"]

# The split of a single file is drawn in blocks of rows, each from its own seed.
SPLIT_BLOCK = 1_000


@functools.lru_cache(maxsize=64)
def _test_rows(seed: int, block: int, share: float) -> np.ndarray:
    """Which rows of ``[block * SPLIT_BLOCK, ...)`` are held out (the module docstring)."""
    return np.random.default_rng([seed, 8191, block]).random(SPLIT_BLOCK) < share


def split_of(spec: TableSpec, row: int) -> str:
    """The split of row ``row`` of a single file."""
    return "test" if _test_rows(spec.seed, row // SPLIT_BLOCK, spec.test_share)[row % SPLIT_BLOCK] else "train"
