"""The reproductions' cell cache: a shared cell is computed once and gives the numbers recomputing gives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from textcw.evaluation.experiments.cells import CellCache, canonical
from textcw.evaluation.specs import LearnerSpec, TaskSpec
from textcw.evaluation.suite import run_suite, tuning_run

SHARED = LearnerSpec("cw-var", {"covariance": "diag-kl"}, "var-KL")
# Same label as SHARED, another parameter: another cell, which must never be served SHARED's.
IMPOSTOR = LearnerSpec("cw-var", {"covariance": "diag-l2"}, "var-KL")
TABLE_A = [SHARED, LearnerSpec("perceptron", {}, "Per")]
TABLE_B = [SHARED, LearnerSpec("pa1", {}, "PA")]
TASKS = [TaskSpec("toy:binary")]


def table(learners, cache=None, tasks=TASKS, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # liblinear's convergence notes on 160 random documents
        return run_suite(tasks, learners, folds=3, tune=True, quick=True, cache=cache, **options)


def numbers(cell):
    """What a cell reports, but its training seconds (a measurement, not a result)."""
    out = cell.to_dict()
    out.pop("train_seconds")
    return out


def tuned(result):
    out = result.to_dict()
    out.pop("seconds")
    return out


@pytest.fixture(scope="module")
def recomputed(regs):
    """Both tables without a cache: every cell computed where it is asked for."""
    return table(TABLE_A), table(TABLE_B)


def test_two_tables_sharing_a_cell_compute_it_once_with_the_same_numbers(regs, recomputed):
    cache = CellCache()
    a = table(TABLE_A, cache)
    assert (cache.hits, cache.misses, len(cache)) == (0, 4, 4)  # two tuning runs, two cells
    b = table(TABLE_B, cache)
    # var-KL's tuning run and its cell come from the cache; PA's are computed
    assert (cache.hits, cache.misses, len(cache)) == (2, 6, 6)
    for cached, fresh in zip((a, b), recomputed):
        assert [numbers(c) for c in cached.cells] == [numbers(c) for c in fresh.cells]
        assert [tuned(t) for t in cached.tuning] == [tuned(t) for t in fresh.tuning]
        assert [(i.n_docs, i.n_folds, i.mean_features) for i in cached.task_info] == \
            [(i.n_docs, i.n_folds, i.mean_features) for i in fresh.task_info]
    # the shared cell is the very result table A computed (its seconds included)
    assert b.cell("toy:binary", "var-KL").to_dict() == a.cell("toy:binary", "var-KL").to_dict()
    assert b.tuning[0].to_dict() == a.tuning[0].to_dict()


def test_a_table_served_wholly_from_the_cache_reports_every_model_as_done(regs, recomputed):
    cache = CellCache()
    table(TABLE_A, cache)
    ticks = []
    again = table(TABLE_A, cache, progress=lambda task, done, total: ticks.append((done, total)))
    assert (cache.hits, cache.misses) == (4, 4)
    # 2 tuning runs + 2 learners x 3 folds, as when they are computed
    assert ticks == [(k, 8) for k in range(1, 9)]
    fresh = recomputed[0]
    assert [numbers(c) for c in again.cells] == [numbers(c) for c in fresh.cells] and not again.interrupted
    assert [(i.n_docs, i.n_classes, i.n_folds, i.mean_features) for i in again.task_info] == \
        [(i.n_docs, i.n_classes, i.n_folds, i.mean_features) for i in fresh.task_info]


def test_a_different_cell_with_the_same_label_is_not_served(regs):
    cache = CellCache()
    table([SHARED], cache)
    other = table([IMPOSTOR], cache)
    assert cache.hits == 0 and len(cache) == 4
    assert [numbers(c) for c in other.cells] == [numbers(c) for c in table([IMPOSTOR]).cells]
    # what the cell records is part of it: with probabilities it is another cell
    table([SHARED], cache, probabilities=True)
    assert cache.hits == 1  # its tuning run only
    # another seed, another noise rate, another task: other cells
    table([SHARED], cache, seed=1)
    table([SHARED], cache, noise=[0.2])
    table([SHARED], cache, tasks=[TaskSpec("toy:multi")])
    assert cache.hits == 1 and len(cache) == 11


def test_keys_tell_types_and_order_apart():
    assert len({canonical(v) for v in (1, 1.0, True, "1", np.int64(1), None)}) == 6
    assert canonical({"a": 1, "b": 2.0}) == canonical({"b": 2.0, "a": 1})
    assert canonical([1, 2]) != canonical((1, 2)) != canonical([2, 1])
    assert canonical(0.1) != canonical(0.1 + 1e-17 * 10)
    assert canonical(SHARED) != canonical(IMPOSTOR)
    assert canonical(np.array([0, 1])) != canonical(np.array([0, 1], dtype=np.int32))
    assert canonical(TaskSpec("toy:binary")) != canonical(TaskSpec("toy:binary", sample=100))


def test_a_stored_result_cannot_be_changed_by_its_caller(regs):
    cache = CellCache()
    first = tuning_run(TaskSpec("toy:binary"), [SHARED], quick=True, cache=cache)
    first[0].params["eta"] = "changed"
    again = tuning_run(TaskSpec("toy:binary"), [SHARED], quick=True, cache=cache)
    assert cache.hits == 1 and again[0].params["eta"] != "changed"
    again[0].grid.clear()
    assert tuning_run(TaskSpec("toy:binary"), [SHARED], quick=True, cache=cache)[0].grid
    cache.clear()
    assert (len(cache), cache.hits, cache.misses) == (0, 0, 0)
