"""The plugin author's kit: checks, small data sets and isolated registries.

Everything a plugin's tests need, without touching anything private to textcw. One pytest item
per check, so that every failing check shows at once::

    from textcw.testing import featurizer_under_test, parametrize_with_checks, plugin_components

    @parametrize_with_checks([MyLearner, featurizer_under_test(my_featurizer, min_accuracy=0.9)])
    def test_components(component, check):
        check(component)

    @parametrize_with_checks(plugin_components(my_package.plugin))  # each registered component
    def test_registered_components(component, check):
        check(component)

    def test_my_plugin():
        check_plugin(my_package.plugin, check_components=False)  # the registration itself

``check_learner``, ``check_featurizer`` and ``check_plugin`` (with its components) run the same
checks in one test, stopping at the first failure. :func:`check_names` lists the checks.

pytest fixtures (``make_registries``, ``binary_data``, ``multiclass_data``, ``text_documents``,
...) come from :mod:`textcw.testing.fixtures`; enable them in your top-level ``conftest.py``
(or a test module) with::

    pytest_plugins = ["textcw.testing.fixtures"]

See ``docs/plugins.md`` for a tutorial that builds a complete plugin with this kit.
"""

from textcw.testing.datasets import awkward_documents, make_documents, make_sparse_classification
from textcw.testing.evaluation_checks import (
    DESIGN_CHECKS,
    METRIC_CHECKS,
    check_design,
    check_metric,
    design_under_test,
    metric_under_test,
)
from textcw.testing.featurizer_checks import FEATURIZER_CHECKS, check_featurizer, featurizer_under_test
from textcw.testing.isolation import make_corpus_plugin, make_plugin_manager, make_registries
from textcw.testing.learner_checks import (
    LEARNER_CHECKS,
    SKLEARN_CONTRACT_CHECKS,
    check_learner,
    learner_under_test,
)
from textcw.testing.parametrize import check_names, iter_checks, parametrize_with_checks
from textcw.testing.plugin_checks import check_plugin, plugin_components
from textcw.testing.runner import Check, Component

__all__ = [
    "DESIGN_CHECKS",
    "FEATURIZER_CHECKS",
    "LEARNER_CHECKS",
    "METRIC_CHECKS",
    "SKLEARN_CONTRACT_CHECKS",
    "Check",
    "Component",
    "awkward_documents",
    "check_design",
    "check_featurizer",
    "check_learner",
    "check_metric",
    "check_names",
    "check_plugin",
    "design_under_test",
    "featurizer_under_test",
    "iter_checks",
    "learner_under_test",
    "make_corpus_plugin",
    "make_documents",
    "make_plugin_manager",
    "make_registries",
    "make_sparse_classification",
    "metric_under_test",
    "parametrize_with_checks",
    "plugin_components",
]
