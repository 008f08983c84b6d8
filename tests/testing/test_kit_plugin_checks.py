"""check_plugin: a well-made plugin passes; each registration mistake fails, saying why."""

from __future__ import annotations

import importlib
import itertools
import types

import pytest
import textcw
from kit_components import CentroidLearner, ValidatedCentroidLearner
from sklearn.feature_extraction.text import CountVectorizer
from kit_components import Backwards
from textcw.plugins import BUILTIN_PLUGINS
from textcw.testing import check_plugin


def plugin_module(name: str, **hooks) -> types.ModuleType:
    """A plugin module whose attributes are ``hooks`` (pluggy matches hooks by attribute name)."""
    module = types.ModuleType(name)
    for attr, function in hooks.items():
        setattr(module, attr, function)
    return module


def learners(*entries, online=False):
    @textcw.hookimpl
    def register_learners(register):
        for name, factory, summary in entries:
            register(name, factory, summary=summary, online=online)

    return register_learners


def words(**params):
    return CountVectorizer(decode_error="replace", **params)


@textcw.hookimpl
def register_good_featurizers(register):
    register("test-words", words, summary="Word counts, for the tests")


@textcw.hookimpl
def register_good_corpora(register):
    def load(task=None, split="train"):
        raise NotImplementedError

    register("test-corpus", load, summary="A corpus name, for the tests", tasks={"a": "task a"})


@textcw.hookimpl
def register_good_commands(app):
    @app.command("test-hello")
    def hello() -> None:
        """Say hello."""


def good_plugin():
    return plugin_module(
        "good_plugin",
        register_learners=learners(("test-centroid", ValidatedCentroidLearner, "Nearest class mean")),
        register_featurizers=register_good_featurizers,
        register_corpora=register_good_corpora,
        register_commands=register_good_commands,
    )


def test_a_well_made_plugin_passes():
    check_plugin(good_plugin())


def test_a_plain_scikit_learn_learner_can_be_registered():
    plugin = plugin_module("plain", register_learners=learners(
        ("test-plain", CentroidLearner, "Nearest class mean, no parameter checks")))
    check_plugin(plugin)


@pytest.mark.parametrize("module", BUILTIN_PLUGINS)
def test_textcws_own_catalogue_registers_cleanly(module):
    """The built-in modules follow the rules they set for plugins (their components are checked
    one by one in test_kit_learner_checks.py and test_kit_featurizer_checks.py)."""
    check_plugin(importlib.import_module(module), check_components=False)


# ---------------------------------------------------------------- deliberately broken plugins
@textcw.hookimpl
def misspelt(register):
    register("test-x", CentroidLearner, summary="x")


@textcw.hookimpl
def wrong_argument(reg):
    reg("test-x", CentroidLearner, summary="x")


def undecorated(register):
    register("test-x", CentroidLearner, summary="x")


@textcw.hookimpl
def registers_nothing(register):
    pass


_calls = itertools.count()


@textcw.hookimpl
def registers_once(register):
    if next(_calls) == 0:
        register("test-once", CentroidLearner, summary="only the first time")


@textcw.hookimpl
def clashing_command(app):
    @app.command("train")
    def train() -> None:
        """Shadow textcw's train."""


@textcw.hookimpl
def bad_tasks(register):
    register("test-corpus", lambda task=None, split="train": None, summary="s",
             tasks={"a b": "a task name with a space"})


@pytest.mark.parametrize("hooks, says", [
    ({"register_learner": misspelt},
     "registers_in_isolation: .*register_learner.*textcw's hooks are: .*register_learners"),
    ({"register_learners": wrong_argument}, "pluggy refused it: .*reg"),
    ({"register_learners": undecorated}, "implements no textcw hook; decorate"),
    ({"register_learners": registers_nothing}, "registers nothing"),
    ({"register_learners": learners(("perceptron", CentroidLearner, "mine"))},
     "a name clashes: learner 'perceptron' is registered twice: by textcw and by broken"),
    ({"register_learners": learners(("my learner", CentroidLearner, "s"))},
     "learner name 'my learner' is not something users can type"),
    ({"register_learners": learners(("corpus:task", CentroidLearner, "s"))},
     "learner name 'corpus:task' is not something users can type"),
    ({"register_learners": learners(("test-quiet", CentroidLearner, ""))},
     "learner 'test-quiet' has no summary"),
    ({"register_learners": registers_once}, "registration must not depend on global state"),
    ({"register_commands": clashing_command}, r"command\(s\) \['train'\] clash"),
    ({"register_corpora": bad_tasks}, "tasks must be a .task name: one-line summary. dict"),
    ({"register_learners": learners(("test-backwards", Backwards, "Perceptron, backwards"))},
     "components_pass_their_checks: learner 'test-backwards' fails fits_and_predicts: .*accuracy"),
])
def test_broken_plugin_fails_with_a_clear_message(hooks, says):
    with pytest.raises(AssertionError, match=f"plugin 'broken' fails .*{says}"):
        check_plugin(plugin_module("broken", **hooks))


def test_online_learners_must_say_so():
    """An OnlineLinearClassifier registered without online=True trains, but silently without
    progress, calibration or mistake curve; online=True on a learner with no partial_fit lies."""
    from textcw.learners.perceptron import Perceptron

    @textcw.hookimpl
    def undeclared(register):
        register("test-perceptron", Perceptron, summary="s")

    with pytest.raises(AssertionError, match="online_learners_are_declared: learner 'test-perceptron' is an "
                       "OnlineLinearClassifier registered without online=True.*pass online=True"):
        check_plugin(plugin_module("broken", register_learners=undeclared), check_components=False)

    @textcw.hookimpl
    def declared(register):
        register("test-perceptron", Perceptron, summary="s", online=True)

    check_plugin(plugin_module("good", register_learners=declared), check_components=False)

    from sklearn.svm import LinearSVC

    @textcw.hookimpl
    def batch_declared_online(register):
        register("test-svc", LinearSVC, summary="s", online=True)

    with pytest.raises(AssertionError, match="'test-svc' is registered with online=True but has "
                       "no partial_fit"):
        check_plugin(plugin_module("broken", register_learners=batch_declared_online), check_components=False)


def test_broken_featurizer_is_named():
    @textcw.hookimpl
    def register_featurizers(register):
        register("test-strict", lambda: CountVectorizer(decode_error="strict"), summary="s")

    with pytest.raises(AssertionError,
                       match="featurizer 'test-strict' fails fits_and_transforms: .*UnicodeDecodeError"):
        check_plugin(plugin_module("broken", register_featurizers=register_featurizers))


def test_featurizer_data_supplies_non_text_documents():
    import numpy as np
    from sklearn.preprocessing import FunctionTransformer

    @textcw.hookimpl
    def register_featurizers(register):
        register("test-rows", lambda: FunctionTransformer(np.vstack), summary="Rows as they are")

    plugin = plugin_module("rows", register_featurizers=register_featurizers)
    with pytest.raises(AssertionError, match="featurizer 'test-rows' fails"):
        check_plugin(plugin)  # text documents are not rows of numbers
    rows = [np.eye(6)[i % 6] + i % 2 for i in range(30)]
    check_plugin(plugin, featurizer_data={"test-rows": (rows, ["odd", "even"] * 15)})


def test_components_can_be_left_to_their_own_tests():
    plugin = plugin_module("broken", register_learners=learners(("test-b", Backwards, "s"), online=True))
    check_plugin(plugin, check_components=False)


def test_expected_failures_must_name_registered_components():
    with pytest.raises(ValueError, match="names \\['nope'\\], which the plugin does not register"):
        check_plugin(good_plugin(), expected_failures={"nope": {"is_deterministic": "?"}})


def test_distribution_must_be_installed_and_declare_the_entry_point():
    with pytest.raises(AssertionError, match="'textcw-no-such-dist' is not installed"):
        check_plugin(good_plugin(), distribution="textcw-no-such-dist")
    # textcw itself is installed, but declares no plugin in its own entry-point group.
    with pytest.raises(AssertionError, match="'textcw' declares no entry point in group 'textcw'"):
        check_plugin(good_plugin(), distribution="textcw")

