"""The plugin author's kit: checks, small data sets and isolated registries.

Everything a plugin's tests need, without touching anything private to textcw::

    from textcw.testing import check_learner, check_featurizer, check_plugin

    def test_my_plugin():
        check_plugin(my_package.plugin)        # registers it in isolation, checks each entry

pytest fixtures (``make_registries``, ``binary_data``, ``multiclass_data``, ``text_documents``,
...) come from :mod:`textcw.testing.fixtures`; enable them in your top-level ``conftest.py``
(or a test module) with::

    pytest_plugins = ["textcw.testing.fixtures"]

See ``docs/plugins.md`` for a tutorial that builds a complete plugin with this kit.
"""

from textcw.testing.checks import SKLEARN_CONTRACT_CHECKS, check_featurizer, check_learner, check_plugin
from textcw.testing.datasets import awkward_documents, make_documents, make_sparse_classification
from textcw.testing.isolation import make_corpus_plugin, make_plugin_manager, make_registries

__all__ = [
    "SKLEARN_CONTRACT_CHECKS",
    "awkward_documents",
    "check_featurizer",
    "check_learner",
    "check_plugin",
    "make_corpus_plugin",
    "make_documents",
    "make_plugin_manager",
    "make_registries",
    "make_sparse_classification",
]
