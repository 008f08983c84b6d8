"""The kit's metric and design checks: each catches its kind of mistake, by name, one item each."""

from __future__ import annotations

import numpy as np
import pytest
from textcw.evaluation.contract import Metric, Option, SplitDesign
from textcw.evaluation.designs import CV
from textcw.evaluation.measures import Error
from textcw.testing import (
    DESIGN_CHECKS,
    METRIC_CHECKS,
    check_design,
    check_metric,
    design_under_test,
    iter_checks,
    metric_under_test,
)

METRIC_CHECK_NAMES = ["declares_its_contract", "refuses_unknown_options", "returns_finite_values",
                      "reads_only_what_it_declares", "leaves_the_fold_alone",
                      "is_deterministic_and_order_free", "prefers_right_predictions"]
DESIGN_CHECK_NAMES = ["declares_its_contract", "refuses_unknown_options", "splits_are_disjoint_and_seeded",
                      "runs_a_table_of_folds", "is_seeded", "report_round_trips"]


def test_check_names_and_order():
    assert [c.name for c in METRIC_CHECKS] == METRIC_CHECK_NAMES
    assert [c.name for c in DESIGN_CHECKS] == DESIGN_CHECK_NAMES
    ids = [f"{component.name}-{check.name}" for component, check in iter_checks([metric_under_test(Error)])]
    assert ids == [f"Error-{name}" for name in METRIC_CHECK_NAMES]


class NoNeeds(Error):
    needs = frozenset()


class Untitled(Error):
    title = ""


class Mapping(Error):
    """Returns a mapping without declaring per_class."""

    def __call__(self, fold):
        return {"all": super().__call__(fold)}


class Loose(Metric):
    """Overrides __init__ without checking its options."""

    title = "loose"

    def __init__(self, **options):
        self.settings = options

    def __call__(self, fold):
        return Error()(fold)


class Infinite(Error):
    def __call__(self, fold):
        return float("inf")


class ReadsProba(Error):
    """Reads probabilities it does not declare."""

    def __call__(self, fold):
        return float(fold.proba.max())


class Sorts(Error):
    """Sorts the fold's labels in place."""

    def __call__(self, fold):
        fold.y_true.sort()
        return super().__call__(fold)


class FirstHalf(Error):
    """Only looks at the first half of the documents: depends on their order."""

    def __call__(self, fold):
        half = len(fold.y_true) // 2
        return float(np.mean(fold.y_true[:half] != fold.y_pred[:half]))


class Random(Error):
    def __call__(self, fold):
        return float(np.random.random())


@pytest.mark.parametrize("factory,check,message", [
    (NoNeeds, "declares_its_contract", "declare a frozenset among"),
    (Untitled, "declares_its_contract", "it has no title"),
    (Loose, "refuses_unknown_options", "it accepted the undeclared option"),
    (Mapping, "returns_finite_values", "does not declare per_class = True"),
    (Infinite, "returns_finite_values", "a metric returns finite numbers"),
    (ReadsProba, "reads_only_what_it_declares", "add what it reads to needs"),
    (Sorts, "leaves_the_fold_alone", "it writes into the fold's arrays"),
    (FirstHalf, "is_deterministic_and_order_free", "reordering the documents changed it"),
    (Random, "is_deterministic_and_order_free", "two calls on the same fold gave"),
])
def test_each_metric_check_catches_its_mistake(factory, check, message):
    component = metric_under_test(factory)
    failing = next(c for c in component.checks if c.name == check)
    with pytest.raises(AssertionError, match=f"metric {factory.__qualname__} fails {check}: .*{message}"):
        failing(component)


class Reseeded(SplitDesign):
    """Ignores the seed: a new random split every call."""

    options = {"seed": Option("int", 0, "seed")}

    def splits(self, task, seed):
        order = np.random.permutation(len(task))
        return [(np.sort(order[: len(task) // 2]), np.sort(order[len(task) // 2:]))]


class Misnamed(SplitDesign):
    options = {"seed": Option("int", 0, "seed")}
    protocol = "kfold"

    def splits(self, task, seed):
        return CV(folds=2).splits(task, seed)


def test_design_checks_catch_unseeded_splits_and_a_bad_protocol():
    reseeded = design_under_test(Reseeded)
    check = next(c for c in reseeded.checks if c.name == "splits_are_disjoint_and_seeded")
    with pytest.raises(AssertionError, match="with the same seed gave different splits; seed the splitter"):
        check(reseeded)
    misnamed = design_under_test(Misnamed)
    check = next(c for c in misnamed.checks if c.name == "declares_its_contract")
    with pytest.raises(AssertionError, match="protocol='kfold'; declare one of"):
        check(misnamed)


def test_check_all_runs_every_check_and_honours_expected_failures():
    check_metric(Error)
    check_design(CV, folds=2)
    check_metric(FirstHalf, expected_failures={"is_deterministic_and_order_free": "looks at the first half"})
    with pytest.raises(AssertionError, match="now passes is_seeded, listed as an expected failure"):
        check_design(CV, folds=2, expected_failures={"is_seeded": "stale"})
    with pytest.raises(ValueError, match="expected_failures names unknown checks"):
        metric_under_test(Error, expected_failures={"no_such_check": "?"})
