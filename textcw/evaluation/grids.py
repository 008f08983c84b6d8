"""The hyperparameter grids the ``tune`` evaluator searches.

The papers tune ``phi`` (or ``eta``), ``C`` and ``r`` without printing their grids (JMLR 2012
section 7.6; AROW 2013 section 5.1), so these are textcw's choices: a confidence grid that spans
``phi = Phi^{-1}(eta)`` from 0.025 to 3.1, and decades for the regularisers. A learner
registration may carry its own grid (``register(..., grid={"C": [...]})``), which wins; the
quick grids (``--quick``) keep a few points of each. Parameters a learner spec fixes are not
tuned.
"""

from __future__ import annotations

import itertools

from textcw.errors import ParameterError
from textcw.registry import Registries

ETA = [0.51, 0.55, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999]


def decades(low: int, high: int) -> list[float]:
    """``[10**low, ..., 10**high]``."""
    return [float(10.0 ** k) for k in range(low, high + 1)]


# learner name -> {parameter: values}; a learner not listed has nothing to tune but its passes.
# Ranges were widened where the first full reproductions often chose an end point; under heavy
# label noise CW still prefers the smallest eta (the limit is 0.5) and PA-I the smallest C.
DEFAULT_GRIDS: dict[str, dict[str, list]] = {
    "cw-var": {"eta": ETA},
    "cw-stdev": {"eta": ETA},
    "pa1": {"C": decades(-4, 1)},
    "pa2": {"C": decades(-4, 1)},
    "arow": {"r": decades(-2, 4)},
    "scw1": {"eta": [0.6, 0.8, 0.9, 0.95], "C": [0.01, 0.1, 1.0]},
    "scw2": {"eta": [0.6, 0.8, 0.9, 0.95], "C": [0.01, 0.1, 1.0]},
    "sop": {"a": decades(-2, 3)},
    "sgd": {"alpha": decades(-7, -1)},
    # maxent: C is the variance of the Gaussian prior; svm: the usual C (JMLR 2012 section 7.8)
    "maxent": {"C": decades(-3, 2)},
    "svm": {"C": decades(-4, 1)},
    "nb": {"alpha": decades(-3, 0)},
}
QUICK_GRIDS: dict[str, dict[str, list]] = {
    "cw-var": {"eta": [0.6, 0.8, 0.95]},
    "cw-stdev": {"eta": [0.6, 0.8, 0.95]},
    "pa1": {"C": [0.01, 1.0]},
    "pa2": {"C": [0.01, 1.0]},
    "arow": {"r": [0.1, 10.0]},
    "scw1": {"eta": [0.8, 0.95], "C": [0.1]},
    "scw2": {"eta": [0.8, 0.95], "C": [0.1]},
    "sop": {"a": [1.0]},
    "sgd": {"alpha": [1e-5, 1e-3]},
    "maxent": {"C": [1.0, 10.0]},
    "svm": {"C": [0.1, 1.0]},
    "nb": {"alpha": [0.1, 1.0]},
}


def grid_for(name: str, fixed: dict, *, quick: bool = False, registries: Registries | None = None) -> dict:
    """``{parameter: values}`` to search for learner ``name``, leaving out the ``fixed`` parameters."""
    from textcw.plugins import default_registries

    regs = registries if registries is not None else default_registries()
    entry = regs.learners.get(name)
    grid = entry.extra.get("quick_grid" if quick else "grid") or entry.extra.get("grid")
    if grid is None:
        grid = (QUICK_GRIDS if quick else DEFAULT_GRIDS).get(name, {})
    grid = {k: list(v) for k, v in grid.items() if k not in fixed}
    for key, values in grid.items():
        if not values:
            raise ParameterError(f"the tuning grid of {name!r} has no values for {key!r}")
    return grid


def grid_points(grid: dict) -> list[dict]:
    """Every combination of the grid's values, in order (``[{}]`` for an empty grid)."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]
