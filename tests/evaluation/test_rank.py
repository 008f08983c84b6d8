"""Mean ranks: hand-computed cases and the paper's own Table 2 row."""

from __future__ import annotations

import pytest

from textcw.evaluation.experiments.base import published
from textcw.errors import InputError
from textcw.evaluation.rank import RankReport, mean_ranks, rank


def test_hand_computed_ranks_with_ties():
    errors = {"t1": {"a": 1.0, "b": 2.0, "c": 3.0},
              "t2": {"a": 2.0, "b": 2.0, "c": 1.0}}
    r = mean_ranks(errors, ["a", "b", "c"])
    # t2: c first; a and b tie for second and both get rank 2 (competition ranking)
    assert r.ranks["t2"] == {"a": 2.0, "b": 2.0, "c": 1.0}
    assert r.mean_rank == {"a": 1.5, "b": 2.0, "c": 2.0}
    average = mean_ranks(errors, ["a", "b", "c"], ties="average")
    assert average.mean_rank == {"a": 1.75, "b": 2.25, "c": 2.0}


def test_values_equal_to_two_decimals_tie():
    r = mean_ranks({"t": {"a": 1.001, "b": 1.004, "c": 0.5}}, ["a", "b", "c"])
    assert r.ranks["t"] == {"a": 2.0, "b": 2.0, "c": 1.0}
    exact = mean_ranks({"t": {"a": 1.001, "b": 1.004, "c": 0.5}}, ["a", "b", "c"], decimals=None)
    assert exact.ranks["t"] == {"a": 2.0, "b": 3.0, "c": 1.0}


def test_tasks_missing_a_learner_are_skipped():
    r = rank()({"t1": {"a": 1.0, "b": 2.0}, "t2": {"a": 1.0}}, ["a", "b"])
    assert r.tasks == ["t1"] and r.skipped == ["t2"]
    assert r.mean_rank == {"a": 1.0, "b": 2.0}
    assert mean_ranks({}, ["a"]).mean_rank == {"a": None}


def test_reproduces_the_mean_rank_row_of_jmlr_table2():
    paper = published("jmlr2012_table2.json")
    errors = {row["row"]: dict(zip(paper["columns"], row["values"])) for row in paper["rows"]}
    r = mean_ranks(errors, paper["columns"])
    assert [round(r.mean_rank[c], 2) for c in paper["columns"]] == paper["mean_rank"]
    assert len(r.tasks) == 17


def test_round_trip():
    r = mean_ranks({"t1": {"a": 1.0, "b": 2.0}}, ["a", "b"])
    assert RankReport.from_json(r.to_json()) == r


def test_repeated_learner_is_an_error():
    with pytest.raises(InputError, match=r"^learner names repeat: \['a', 'a'\]$"):
        mean_ranks({"t": {"a": 1.0}}, ["a", "a"])
