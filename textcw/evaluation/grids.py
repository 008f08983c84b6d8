"""The hyperparameter grids the ``tune`` evaluator searches.

A learner class declares its grids in ``tuning`` (:class:`textcw.learners.selftune.Axis`), the one
place a learner's tuning is declared. ``--quick`` uses the quick values, or the full grid when a
learner has none. Parameters a learner spec fixes are not tuned.
"""

from __future__ import annotations

import itertools
import math

from textcw.errors import ParameterError
from textcw.learners.selftune import tune_grid
from textcw.plugins import current_registries


def grid_for(name: str, fixed: dict, *, quick: bool = False) -> dict:
    """``{parameter: values}`` to search for learner ``name``, leaving out the ``fixed`` parameters."""
    # the tuning of the class the factory builds (a factory may be a function, not the class)
    grid = tune_grid(current_registries().learners.get(name).factory(), quick=quick)
    grid = {k: list(v) for k, v in grid.items() if k not in fixed}
    for key, values in grid.items():
        if not values:
            raise ParameterError(f"the tuning grid of {name!r} has no values for {key!r}")
    return grid


MAX_GRID_POINTS = 10_000  # each point is a fit on every task: far past what a search can afford


def grid_points(grid: dict) -> list[dict]:
    """Every combination of the grid's values, in order (``[{}]`` for an empty grid).

    The combinations are counted from the axes' lengths before any is built: a grid of more
    than :data:`MAX_GRID_POINTS` is refused at once (it would otherwise be built in full first).
    """
    keys = list(grid)
    count = math.prod(len(grid[k]) for k in keys)
    if count > MAX_GRID_POINTS:
        raise ParameterError(f"the tuning grid has {count:,} combinations ({' x '.join(str(len(grid[k])) for k in keys)}), "
                             f"more than {MAX_GRID_POINTS:,}; each is a fit, so give fewer values per parameter")
    return [dict(zip(keys, values)) for values in itertools.product(*(grid[k] for k in keys))]
