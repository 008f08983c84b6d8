"""check_plugin and plugin_components check a plugin's metrics and evaluation designs too.

A plugin's metrics go through the metric checks and its designs through the design checks
(textcw.testing.evaluation_checks), built from their registered factories with the options the
test gives (``evaluation_options``); one test item per check with plugin_components.
"""

from __future__ import annotations

import types

import numpy as np
import pytest
import textcw
from textcw.evaluation.contract import Metric, Option, SplitDesign
from textcw.testing import check_plugin, plugin_components
from textcw.testing.evaluation_checks import DESIGN_CHECKS, METRIC_CHECKS


class Accuracy(Metric):
    """Share of right predictions (%), higher is better."""

    title = "accuracy (%)"
    better = "higher"

    def __call__(self, fold):
        return 100.0 * float(np.mean(fold.y_true == fold.y_pred))


class WeightedError(Metric):
    """Error with every mistake weighted by ``weight``: a required option."""

    title = "weighted error"
    options = {"weight": Option("float", None, "the weight of a mistake", minimum=0.0, required=True)}

    def __call__(self, fold):
        return self.settings["weight"] * float(np.mean(fold.y_true != fold.y_pred))


class Upside(Metric):
    """Calls a lower value better while returning accuracy: the kit must catch it."""

    title = "upside-down accuracy"

    def __call__(self, fold):
        return float(np.mean(fold.y_true == fold.y_pred))


class Halves(SplitDesign):
    """Two folds: a seeded random half of the documents trains, the other half tests, and back."""

    options = {"seed": Option("int", 0, "seed of the halves", minimum=0)}

    def splits(self, task, seed):
        order = np.random.default_rng(seed).permutation(len(task))
        first, second = np.sort(order[: len(task) // 2]), np.sort(order[len(task) // 2:])
        return [(first, second), (second, first)]


def evaluation_plugin(name="evaluation_plugin", metrics=(("test-accuracy", Accuracy),), designs=(("test-halves", Halves),)):
    @textcw.hookimpl
    def register_metrics(register):
        for metric, factory in metrics:
            register(metric, factory, summary=f"{metric}, for the tests")

    @textcw.hookimpl
    def register_evaluators(register):
        for design, factory in designs:
            register(design, factory, summary=f"{design}, for the tests")

    module = types.ModuleType(name)
    module.register_metrics, module.register_evaluators = register_metrics, register_evaluators
    return module


def test_components_are_the_plugins_metrics_then_designs_with_one_item_per_check():
    components = plugin_components(evaluation_plugin())
    assert [(c.kind, c.name) for c in components] == [("metric", "'test-accuracy'"), ("design", "'test-halves'")]
    assert [c.name for c in components[0].checks] == [c.name for c in METRIC_CHECKS]
    assert [c.name for c in components[1].checks] == [c.name for c in DESIGN_CHECKS]
    assert components[0].subject.factory is Accuracy and components[1].subject.factory is Halves


def test_a_well_made_evaluation_plugin_passes():
    check_plugin(evaluation_plugin())


def test_options_reach_the_component_and_the_kit():
    plugin = evaluation_plugin(metrics=(("test-weighted", WeightedError),), designs=())
    (component,) = plugin_components(plugin, evaluation_options={"test-weighted": {"weight": 2.0, "n_classes": (2,)}})
    assert component.subject.options == {"weight": 2.0} and component.subject.n_classes == (2,)
    assert component.subject.make().settings["weight"] == 2.0
    component.check_all()


def test_a_required_option_that_is_not_given_is_a_usage_error():
    plugin = evaluation_plugin(metrics=(("test-weighted", WeightedError),), designs=())
    message = r"metric 'test-weighted' requires the option\(s\) weight: give them as " \
              r"evaluation_options=\{'test-weighted': \{'weight': \.\.\.\}\}"
    with pytest.raises(ValueError, match=message):
        plugin_components(plugin)
    with pytest.raises(ValueError, match=message):
        check_plugin(plugin)


def test_a_broken_metric_fails_check_plugin_naming_it_and_the_check():
    plugin = evaluation_plugin(metrics=(("test-upside", Upside),), designs=())
    with pytest.raises(AssertionError, match=r"metric 'test-upside' fails prefers_right_predictions"):
        check_plugin(plugin)
    # listed as an expected failure, it must fail (strict), and the rest must pass
    check_plugin(plugin, expected_failures={"test-upside": {"prefers_right_predictions": "upside down"}})


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"evaluation_options": {"test-nothing": {}}},
     r"evaluation_options names \['test-nothing'\], which are not metrics or designs the plugin registers "
     r"\(test-accuracy, test-halves\)"),
    ({"evaluation_options": {"test-accuracy": 2}}, r"evaluation_options\['test-accuracy'\] is 2; give a dict"),
    ({"evaluation_options": {"test-accuracy": {"name": "x"}}}, r"sets \['name'\], which the kit sets itself"),
    ({"expected_failures": {"test-nothing": {}}}, r"expected_failures names \['test-nothing'\]"),
    ({"expected_failures": {"test-halves": {"no_such_check": "x"}}}, r"expected_failures names unknown checks"),
])
def test_arguments_naming_nothing_the_plugin_registers_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        plugin_components(evaluation_plugin(), **kwargs)
