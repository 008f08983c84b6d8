"""The hyperparameter grids the ``tune`` evaluator searches.

A learner class declares its grids in ``tuning`` (:class:`textcw.learners.selftune.Axis`); a
registration may instead carry them (``register(..., grid={"C": [...]}, quick_grid=...)``,
:class:`textcw.registry.LearnerEntry`). ``--quick`` uses the quick values, or the full grid when a
learner has none. Parameters a learner spec fixes are not tuned.
"""

from __future__ import annotations

import itertools

from textcw.errors import ParameterError


def grid_for(name: str, fixed: dict, *, quick: bool = False) -> dict:
    """``{parameter: values}`` to search for learner ``name``, leaving out the ``fixed`` parameters."""
    from textcw.plugins import current_registries

    from textcw.learners.selftune import tune_grid

    entry = current_registries().learners.get(name)
    grid = ((entry.quick_grid if quick else None) or entry.grid
            or tune_grid(entry.factory, quick=quick))
    grid = {k: list(v) for k, v in grid.items() if k not in fixed}
    for key, values in grid.items():
        if not values:
            raise ParameterError(f"the tuning grid of {name!r} has no values for {key!r}")
    return grid


def grid_points(grid: dict) -> list[dict]:
    """Every combination of the grid's values, in order (``[{}]`` for an empty grid)."""
    keys = list(grid)
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]
