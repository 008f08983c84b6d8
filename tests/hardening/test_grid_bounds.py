"""Self-tuning grids are counted from their axes' lengths before any candidate is built."""

from __future__ import annotations

import pytest

import textcw
from textcw.errors import ParameterError
from textcw.learners.selftune import MAX_CANDIDATES, SelfTuning, expand_grid
from textcw.testing import make_sparse_classification


class Axis:
    """A grid axis that knows its length but must never be iterated (building it would be the bug)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __iter__(self):
        pytest.fail("the grid was expanded before it was counted")


@pytest.mark.parametrize("grid, count", [
    ({"r": Axis(200), "a": Axis(200), "eta": Axis(200)}, 8_000_000),
    ([{"r": Axis(64)}, {"r": Axis(1)}], 65),
    ({"r": Axis(10**9)}, 10**9),
])
def test_large_grids_are_refused_before_they_are_expanded(grid, count):
    with pytest.raises(ParameterError, match=f"the grid has {count} candidates, more than {MAX_CANDIDATES}"):
        expand_grid(grid)


def test_the_limit_itself_is_accepted_and_expanded_in_order():
    grid = [{"r": [1.0, 2.0], "a": list(range(16))}, {"r": list(range(32))}]
    out = expand_grid(grid)
    assert len(out) == MAX_CANDIDATES
    assert out[:2] == [{"r": 1.0, "a": 0}, {"r": 1.0, "a": 1}] and out[-1] == {"r": 31}


def test_self_tuning_refuses_a_huge_grid_at_fit():
    X, y = make_sparse_classification(30, 40, 2, random_state=0)
    with pytest.raises(ParameterError, match="8000000 candidates, more than 64"):
        SelfTuning(textcw.make_learner("arow"), grid={"r": Axis(2000), "a": Axis(4000)}).fit(X, y)


def test_a_tune_grid_is_counted_before_it_is_expanded():
    from textcw.evaluation.grids import MAX_GRID_POINTS, grid_points

    huge = {name: list(range(200)) for name in ("a", "b", "c")}  # 8,000,000 combinations
    with pytest.raises(ParameterError, match=r"the tuning grid has 8,000,000 combinations \(200 x 200 x 200\), "
                       r"more than 10,000"):
        grid_points(huge)
    assert len(grid_points({"a": list(range(100)), "b": list(range(100))})) == MAX_GRID_POINTS
    assert grid_points({}) == [{}]
