"""pytest fixtures for testing textcw plugins.

Enable them in the top-level ``conftest.py`` of a test suite, or at the top of a test module::

    pytest_plugins = ["textcw.testing.fixtures"]

Fixtures
--------
make_registries
    ``make_registries(*plugins)``: the built-ins plus ``plugins``, ignoring whatever else is
    installed; put the result in use with ``with textcw.plugins.use_registries(regs):``
    around the calls (:func:`textcw.make_learner`, :func:`textcw.pipeline.train`, ...), the
    one way to choose registries (their ``registries=`` keyword is deprecated).
make_plugin_manager
    ``make_plugin_manager(*plugins)``: the same isolated :class:`pluggy.PluginManager`.
binary_data, multiclass_data
    ``(X, y)``: a seeded text-like sparse problem (CSR, 200 rows, 60 features) with 2 or 3
    string labels; separable, so a working learner gets nearly all of it right.
text_documents
    ``(docs, labels)``: 40 short English documents on two topics, labels ``"space"`` and
    ``"medicine"``.
awkward_docs
    Documents that break careless featurizers (empty, non-UTF-8 bytes, non-ASCII, long).
topic_corpus
    A plugin registering the in-memory corpus ``"topics"`` (train: ``text_documents``; test:
    other documents on the same topics), for end-to-end tests through
    :func:`textcw.pipeline.train`.
"""

from __future__ import annotations

import pytest

from textcw.testing.datasets import awkward_documents, make_documents, make_sparse_classification
from textcw.testing.isolation import make_corpus_plugin
from textcw.testing.isolation import make_plugin_manager as _make_plugin_manager
from textcw.testing.isolation import make_registries as _make_registries


@pytest.fixture
def make_registries():
    """Factory of isolated registries: ``make_registries(*plugins, entry_points=False)``."""
    return _make_registries


@pytest.fixture
def make_plugin_manager():
    """Factory of isolated plugin managers: ``make_plugin_manager(*plugins, entry_points=False)``."""
    return _make_plugin_manager


@pytest.fixture
def binary_data():
    """``(X, y)``: 200 x 60 CSR, labels ``"neg"``/``"pos"``, seed 0."""
    return make_sparse_classification(200, 60, 2, random_state=0, label_names=("neg", "pos"))


@pytest.fixture
def multiclass_data():
    """``(X, y)``: 200 x 60 CSR, labels ``"alpha"``/``"beta"``/``"gamma"``, seed 0."""
    return make_sparse_classification(200, 60, 3, random_state=0,
                                      label_names=("alpha", "beta", "gamma"))


@pytest.fixture
def text_documents():
    """``(docs, labels)``: 40 documents on two topics, seed 0."""
    return make_documents(20, random_state=0)


@pytest.fixture
def awkward_docs():
    """Empty, whitespace-only, non-UTF-8, non-ASCII and long documents."""
    return awkward_documents()


@pytest.fixture
def topic_corpus():
    """A plugin registering corpus ``"topics"`` (40 train and 40 test documents)."""
    return make_corpus_plugin("topics", make_documents(20, random_state=0),
                              make_documents(20, random_state=1),
                              summary="Two topics, in memory (textcw.testing)")
