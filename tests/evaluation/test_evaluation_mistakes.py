"""A plugin author's evaluation mistakes that used to give a wrong table without a word now end in
an error when the class is defined or the design runs, or in ``n/a``:

- (a) a misspelt ``Metric.better`` (``"smaller"`` inverted the best marks and the ranks): a
  ``TypeError`` when the metric class is defined;
- (b) a top-k metric on a binary task printed a number (every label is in the top k): the
  contract's "not applicable", shown ``n/a``; and the kit's default folds fail no correct top-k
  metric;
- (c) a split design that trains on test documents: refused before training, naming the design.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from textcw.errors import PluginError
from textcw.evaluation.contract import NOT_APPLICABLE, Fold, Metric, Option, SplitDesign
from textcw.evaluation.cv import check_splits, measure
from textcw.evaluation.data import load_task
from textcw.evaluation.designs import CV
from textcw.evaluation.measures import Error, PrecisionAtK
from textcw.evaluation.specs import TaskSpec
from textcw.evaluation.suite import SuiteReport
from textcw.evaluation.table import error_table, per_class_table
from textcw.testing import check_metric, design_under_test, metric_under_test

BINARY, FIVE = "synthetic-text:160", "synthetic-text:200:5"


# ------------------------------------------------------------------ (a) better
def test_a_a_misspelt_better_is_refused_when_the_metric_is_defined():
    with pytest.raises(TypeError, match=r"^Accuracy\.better='smaller': declare better = 'lower' or 'higher' "
                                        r"\(which values are better: it marks the best cell and orders the ranks\)$"):
        class Accuracy(Metric):  # would have marked the worst learner best
            title, better = "accuracy", "smaller"

            def __call__(self, fold):
                return float(np.mean(fold.y_true == fold.y_pred))
    with pytest.raises(TypeError, match=r"did you mean 'higher'\?"):
        type("Typo", (Error,), {"better": "hihger"})
    assert type("Fine", (Error,), {"better": "higher"}).better == "higher"


# ------------------------------------------------------------------ (b) not applicable
def fold(n_classes: int) -> Fold:
    labels = np.asarray([f"c{i}" for i in range(n_classes)], dtype=object)
    truth = labels[np.arange(12) % n_classes]
    scores = np.random.default_rng(0).normal(size=(12, n_classes))
    scores = scores[:, 1] - scores[:, 0] if n_classes == 2 else scores
    predicted = labels[(scores > 0).astype(int)] if n_classes == 2 else labels[np.argmax(scores, axis=1)]
    return Fold(truth, predicted, labels, scores)


def test_b_precision_at_k_is_not_applicable_where_it_is_one_by_construction():
    top3 = PrecisionAtK()
    assert [top3.applies(fold(n)) for n in (2, 3, 4)] == [False, False, True]
    assert not PrecisionAtK(k=1).applies(fold(2))  # the accuracy: read the error
    assert PrecisionAtK(k=1).applies(fold(3))
    # the values the evaluators record: n/a instead of the 1 every binary fold gave
    values = measure({"p@3": top3, "error": Error()}, fold(2), task="t", learner="pa")
    assert values["p@3"] == NOT_APPLICABLE == "n/a" and isinstance(values["error"], float)
    assert isinstance(measure({"p@3": top3}, fold(4), task="t", learner="pa")["p@3"], float)


class NoneOnBinary(Error):
    """A metric that says "not applicable" by returning None."""

    def __call__(self, fold):
        return None if len(fold.labels) == 2 else super().__call__(fold)


def test_b_a_metric_returning_none_is_not_applicable():
    assert measure({"x": NoneOnBinary()}, fold(2), task="t", learner="pa") == {"x": NOT_APPLICABLE}
    assert measure({"x": NoneOnBinary()}, fold(3), task="t", learner="pa")["x"] >= 0.0


@pytest.fixture(scope="module")
def top_k_report():
    metrics = {"error": Error(), "precision@k": PrecisionAtK(), "per-class": PerClassOnBinaryNA()}
    return CV(folds=2).run([BINARY, FIVE], ["perceptron", "pa"], metrics=metrics)


class PerClassOnBinaryNA(Error):
    title, per_class, better = "recall per class", True, "higher"

    def applies(self, fold):
        return len(fold.labels) > 2

    def __call__(self, fold):
        return {str(c): float(np.mean(fold.y_pred[fold.y_true == c] == c)) for c in np.unique(fold.y_true)}


def test_b_the_tables_show_n_a_where_a_metric_does_not_apply(top_k_report):
    report = top_k_report
    assert not report.failures
    binary = report.cell(BINARY, "pa").metrics["precision@k"]
    assert binary == [NOT_APPLICABLE] * 2
    five = report.cell(FIVE, "pa").metrics["precision@k"]
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in five)
    _, rows = error_table(report, metric="precision@k", marks=False)
    row = {r[0]: r[1:] for r in rows}
    assert row[BINARY] == ["n/a", "n/a"]  # it printed 1.00 (every label in the top 3 of 2)
    assert all(cell[-4:].replace("•", "").replace(".", "").isdigit() for cell in row[FIVE])
    _, rows = per_class_table(report, "per-class")
    assert [r for r in rows if r[0] == BINARY] == [[BINARY, "", "n/a", "n/a"]]
    assert len([r for r in rows if r[0] == FIVE]) == 5
    # the ranks leave out the task it does not apply to; the report keeps "n/a" through JSON
    again = SuiteReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again.cell(BINARY, "pa").metrics["precision@k"] == [NOT_APPLICABLE] * 2


def test_b_the_kit_passes_a_correct_top_k_metric_by_default():
    check_metric(PrecisionAtK)  # failed prefers_right_predictions: 1.0 == 1.0 on 2 and 3 classes
    check_metric(PrecisionAtK, k=2)
    component = metric_under_test(PrecisionAtK, n_classes=(2, 3))  # it applies to neither
    check = next(c for c in component.checks if c.name == "returns_finite_values")
    with pytest.raises(AssertionError, match=r"fails returns_finite_values: it applies to none of the folds "
                                             r"it is checked on \(2, 3 classes\)"):
        check(component)


class SaysMaybe(Error):
    def applies(self, fold):
        return "yes"


def test_b_applies_must_say_true_or_false():
    component = metric_under_test(SaysMaybe)
    check = next(c for c in component.checks if c.name == "returns_finite_values")
    with pytest.raises(AssertionError, match=r"applies\(\) returned 'yes' on a 2-class noisy fold; return True or False"):
        check(component)


# ------------------------------------------------------------------ (c) training on test documents
class TrainsOnTestDocuments(SplitDesign):
    """Protocol 'split': tests on half of the corpus's test split and trains on the rest of it too."""

    protocol = "split"
    options = {"seed": Option("int", 0, "seed")}

    def splits(self, task, seed):
        half = len(task.test_index) // 2
        return [(np.concatenate([task.train_index, task.test_index[:half]]), task.test_index[half:])]


class Overlapping(SplitDesign):
    options = {"seed": Option("int", 0, "seed")}

    def splits(self, task, seed):
        every = np.arange(len(task))
        return [(every[:-10], every[-20:])]


def test_c_a_split_design_that_trains_on_test_documents_is_refused_naming_it():
    task = load_task(TaskSpec(BINARY, "split"), seed=0)
    splits = TrainsOnTestDocuments().splits(task, 0)
    assert not np.intersect1d(*splits[0]).size  # disjoint: what went unnoticed
    with pytest.raises(PluginError, match=r"^design TrainsOnTestDocuments, synthetic-text:160: split 0 trains on "
                                          r"\d+ documents of the corpus's test split \(protocol 'split'\); train on "
                                          r"task.train_index only"):
        TrainsOnTestDocuments().checked_splits(task, 0)
    report = TrainsOnTestDocuments().run([BINARY], ["perceptron"], metrics={"error": Error()})
    assert not report.cells and len(report.failures) == 1
    assert "design TrainsOnTestDocuments" in report.failures[0] and "trains on" in report.failures[0]


def test_c_overlapping_parts_name_the_design_and_a_shared_document():
    pool = load_task(TaskSpec(BINARY), seed=0)
    report = Overlapping().run([BINARY], ["perceptron"], metrics={"error": Error()})
    assert not report.cells
    assert report.failures == [f"{BINARY}: design Overlapping, {BINARY}: split 0 tests on documents it trains "
                               f"on (10 of them, e.g. document {len(pool) - 20}); make each split's train and "
                               "test parts disjoint"]
    with pytest.raises(PluginError, match=r"^synthetic-text:160: split 0 tests on documents it trains on"):
        check_splits(pool, Overlapping().splits(pool, 0))  # without a design: the task alone


@pytest.mark.parametrize("design", [TrainsOnTestDocuments, Overlapping])
def test_c_the_kit_fails_such_a_design(design):
    component = design_under_test(design)
    check = next(c for c in component.checks if c.name == "splits_are_disjoint_and_seeded")
    with pytest.raises(AssertionError, match=f"fails splits_are_disjoint_and_seeded: design {design.__name__}, "):
        check(component)
