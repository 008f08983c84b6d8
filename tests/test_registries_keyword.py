"""Registries are chosen one way: a ``textcw.plugins.use_registries`` block around the call.

The ``registries=`` keyword that the public entry points took as a one-call override is
deprecated: it still does what the same block around the call does, with one ``FutureWarning``
(``textcw.plugins.REGISTRIES_DEPRECATION``) pointing at the caller's line. Every case below
names a component only the isolated registries hold, so that the keyword cannot pass by
falling back on the process-wide registries.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import textcw
from textcw.errors import TextcwError
from textcw.evaluation import evaluators
from textcw.evaluation.designs import CV, Online
from textcw.evaluation.measures import Error
from textcw.evaluation.suite import run_suite
from textcw.learners.perceptron import Perceptron
from textcw.pipeline import default_featurizer, load_corpus, make_featurizer, make_learner, make_pipeline, train
from textcw.plugins import REGISTRIES_DEPRECATION, deprecated_registries, in_registries, use_registries
from textcw.scale import train_sharded, train_stream
from textcw.testing import make_corpus_plugin, make_documents, make_registries

CORPUS = "kw-topics"  # registered only by the plugins below, as are the two names that follow
LEARNER = "kw-perceptron"
FEATURIZER = "kw-bow"


class KeywordPlugin:
    @textcw.hookimpl
    def register_learners(self, register):
        register(LEARNER, Perceptron, summary="the perceptron under a name only these registries hold",
                 online=True)

    @textcw.hookimpl
    def register_featurizers(self, register):
        register(FEATURIZER, make_registries().featurizers.get("binary-bow").factory,
                 summary="binary-bow under a name only these registries hold")


@pytest.fixture(scope="module")
def regs():
    corpus = make_corpus_plugin(CORPUS, make_documents(30, random_state=0), make_documents(15, random_state=1),
                                featurizer=FEATURIZER)
    return make_registries(KeywordPlugin(), corpus)


@pytest.fixture(scope="module")
def export(regs, tmp_path_factory):
    """A portable export whose learner only ``regs`` can rebuild."""
    path = tmp_path_factory.mktemp("export") / "model.textcw"
    with use_registries(regs):
        model = make_pipeline(FEATURIZER, LEARNER, probability="raw").fit(*make_documents(10, random_state=2))
        textcw.export_model(model, path)
    return path


CLOCK = ("seconds", "per_second")  # keys of measured times and speeds


def plain(value):
    """What two runs of the same call share: nested plain data without the clock's readings."""
    if hasattr(value, "to_dict"):
        value = value.to_dict()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if not any(c in k for c in CLOCK)}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def learner_facts(est):
    return type(est).__name__, est.get_params(deep=False)


def model_facts(model):
    docs, _ = make_documents(5, random_state=3)
    return [type(step).__name__ for _, step in model.steps], model.predict(docs).tolist()


def trained(result):
    docs, _ = make_documents(5, random_state=3)
    return plain(result), result.model.predict(docs).tolist()


# (function named in the warning, call taking the keyword's **kw, what the result is compared by).
# A factory warns when it is called, and its runner then works within the registries.
CASES = {
    "textcw.make_learner": (lambda **kw: make_learner(LEARNER, n_epochs=2, **kw), learner_facts),
    "textcw.make_featurizer": (lambda **kw: make_featurizer(FEATURIZER, **kw), learner_facts),
    "textcw.load_corpus": (lambda **kw: load_corpus(CORPUS, "test", **kw),
                           lambda d: (list(d.data), d.labels.tolist())),
    "textcw.pipeline.default_featurizer": (lambda **kw: default_featurizer(CORPUS, **kw), str),
    "textcw.make_pipeline": (lambda **kw: make_pipeline(FEATURIZER, LEARNER, **kw).fit(*make_documents(10)),
                             model_facts),
    "textcw.pipeline.train": (lambda **kw: train(CORPUS, LEARNER, cache=False, **kw), trained),
    "textcw.scale.train_sharded": (lambda **kw: train_sharded(CORPUS, "cw-var", shards=2, workers=1, **kw),
                                   trained),
    "textcw.scale.train_stream": (lambda **kw: train_stream(CORPUS, LEARNER, chunk_size=20, workers=1, **kw),
                                  trained),
    "textcw.import_model": (lambda path, **kw: textcw.import_model(path, **kw), model_facts),
    "textcw.evaluation.suite.run_suite (or a design's run)": (
        lambda **kw: run_suite([CORPUS], [LEARNER], folds=2, **kw), plain),
    "textcw.evaluation.evaluators.cv": (lambda **kw: evaluators.cv(folds=2, **kw)([CORPUS], [LEARNER]), plain),
    "textcw.evaluation.evaluators.noise": (
        lambda **kw: evaluators.noise(levels=(0.0, 0.1), folds=2, tune=False, **kw)([CORPUS], [LEARNER]), plain),
    "textcw.evaluation.evaluators.tune": (lambda **kw: evaluators.tune(quick=True, **kw)(CORPUS, [LEARNER]), plain),
    "textcw.evaluation.evaluators.curve": (
        lambda **kw: evaluators.curve(max_passes=2, folds=2, **kw)(CORPUS, [LEARNER]), plain),
    "textcw.evaluation.evaluators.timing": (
        lambda **kw: evaluators.timing(repeats=1, folds=2, **kw)(CORPUS, [LEARNER]),
        lambda report: [(r.learner, len(r.seconds), r.passes) for r in report.results]),
    "textcw.evaluation.evaluators.online": (
        lambda **kw: evaluators.online(points=3, **kw)(CORPUS, [LEARNER]), plain),
    "textcw.evaluation.evaluators.calibration": (
        lambda **kw: evaluators.calibration(bins=3, **kw)(CORPUS, "cw-var"), plain),
    "textcw.evaluation.evaluators.combination": (
        lambda **kw: evaluators.combination(shard_counts=(2,), workers=1, **kw)(CORPUS, ["cw-var"]), plain),
    # a design passes its hooks to run_suite, which warns for it ...
    "design cv": (lambda **kw: CV(folds=2).run([CORPUS], [LEARNER], metrics={"error": Error()}, **kw), plain),
    # ... or, when it runs the tasks itself, warns itself
    "textcw.evaluation.contract.Design.run": (
        lambda **kw: Online().run([CORPUS], [LEARNER], metrics={"error": Error()}, **kw), plain),
}
WARNED_AS = {"design cv": "textcw.evaluation.suite.run_suite (or a design's run)"}


# a temperature fitted to a few dozen honest scores says it is uncertain, rightly: not this test's concern
@pytest.mark.filterwarnings("ignore::textcw.learners.temperature.CalibrationWarning")
@pytest.mark.parametrize("where", list(CASES))
def test_each_deprecated_keyword_warns_once_and_works_as_the_block_does(where, regs, export):
    call, facts = CASES[where]
    args = (export,) if where == "textcw.import_model" else ()
    with use_registries(regs):
        expected = facts(call(*args))
    # Without the registries the call cannot work: the names are the isolated registries' own.
    with pytest.raises(TextcwError, match="kw-"):
        call(*args)
    with pytest.warns(FutureWarning) as caught:
        got = facts(call(*args, registries=regs))
    assert got == expected
    deprecations = [w for w in caught if "registries= keyword" in str(w.message)]
    message = REGISTRIES_DEPRECATION.format(where=WARNED_AS.get(where, where))
    assert [str(w.message) for w in deprecations] == [message]
    assert message.count("\n") == 0 and "with textcw.plugins.use_registries(r):" in message
    if where not in WARNED_AS:  # run_suite warns from inside the design that passed it on
        assert deprecations[0].filename == __file__  # the line that passed the keyword


def test_the_positional_registries_of_default_featurizer_warns_too(regs):
    with pytest.warns(FutureWarning, match="registries= keyword of textcw.pipeline.default_featurizer"):
        assert default_featurizer(CORPUS, regs) == FEATURIZER


def test_the_test_suite_fails_on_the_deprecated_keyword(regs):
    """pyproject.toml turns the warning into an error, so nothing in the project can use it."""
    with pytest.raises(FutureWarning, match="^the registries= keyword of textcw.make_learner is deprecated"):
        make_learner(LEARNER, registries=regs)


def test_none_is_no_override_and_does_not_warn(regs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert deprecated_registries(None, "f") is None
        with use_registries(regs):
            assert learner_facts(make_learner(LEARNER, registries=None)) == learner_facts(make_learner(LEARNER))


def test_in_registries_keeps_a_factorys_registries_for_its_runner(regs):
    def names():
        return LEARNER in textcw.plugins.current_registries().learners

    assert in_registries(None, names) is names and not names()
    kept = in_registries(regs, names)
    assert kept() and kept.__name__ == "names" and not names()
    with use_registries(make_registries()):  # the kept registries win over the block's
        assert kept() and not names()
