"""The plugin manager and registries: isolation, providers, duplicates, hook documentation."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest

import textcw
from textcw import hookspecs
from textcw.errors import DuplicateNameError, UnknownNameError
from textcw.learners.perceptron import Perceptron
from textcw.plugins import BUILTIN_PLUGINS, build_registries, get_plugin_manager, installed_plugins, use_registries


class ExtraLearners:
    """A plugin defined in-process, as a test would."""

    @staticmethod
    @textcw.hookimpl
    def register_learners(register):
        register("my-perceptron", Perceptron, summary="A perceptron under another name\nsecond line")


class Clash:
    @staticmethod
    @textcw.hookimpl
    def register_learners(register):
        register("my-perceptron", Perceptron)


class ShadowsBuiltin:
    @staticmethod
    @textcw.hookimpl
    def register_learners(register):
        register("cw-var", Perceptron)


def registries(*plugins):
    return build_registries(get_plugin_manager(entry_points=False, extra=plugins))


def test_builtins_are_registered_by_textcw():
    regs = registries()
    assert {"perceptron", "pa", "pa1", "pa2", "cw-var", "cw-stdev"} <= set(regs.learners.names())
    assert {"binary-bow", "bigram-counts"} <= set(regs.featurizers.names())
    assert "newsgroups" in regs.corpora and regs.evaluators.names() == ["active", "combination", "curve", "cv", "holdout",
                                                                  "noise", "online", "timing", "tune"]
    assert "error" in regs.metrics and "mcnemar" in regs.comparisons
    assert regs.learners.get("cw-stdev").provider == "textcw"
    assert set(regs.corpora.get("newsgroups").tasks) == {"all", "comp", "sci", "talk"}


def test_extra_plugin_is_isolated_to_its_manager():
    with_extra = registries(ExtraLearners)
    entry = with_extra.learners.get("my-perceptron")
    assert entry.provider == "ExtraLearners"
    assert entry.summary == "A perceptron under another name"  # first line only
    assert "my-perceptron" not in registries().learners
    with use_registries(with_extra):
        model = textcw.make_learner("my-perceptron", n_epochs=2)
    assert isinstance(model, Perceptron) and model.n_epochs == 2


def test_duplicate_names_are_an_error_naming_both_providers():
    with pytest.raises(DuplicateNameError, match="learner 'my-perceptron' is registered twice: by ExtraLearners and by Clash"):
        registries(ExtraLearners, Clash)
    with pytest.raises(DuplicateNameError, match="learner 'cw-var' is registered twice: by textcw and by ShadowsBuiltin"):
        registries(ShadowsBuiltin)


def test_unknown_names_list_the_valid_ones():
    regs = registries()
    with pytest.raises(UnknownNameError, match="unknown learner 'cw'; valid learner names: .*cw-stdev, cw-var"):
        regs.learners.get("cw")
    with use_registries(regs):
        with pytest.raises(UnknownNameError, match="unknown task of corpus 'newsgroups' 'politics'; valid .*newsgroups:comp"):
            textcw.load_corpus("newsgroups:politics")
        with pytest.raises(UnknownNameError, match="unknown corpus 'reuter'"):
            textcw.load_corpus("reuter")


def test_installed_plugins_lists_builtins_with_version():
    rows = installed_plugins(get_plugin_manager(entry_points=False, extra=[ExtraLearners]))
    builtin = [r for r in rows if r["distribution"] == "textcw"]
    assert [r["name"] for r in builtin] == list(BUILTIN_PLUGINS)
    assert all(r["version"] == textcw.__version__ for r in builtin)
    assert {"name": "ExtraLearners", "distribution": "(registered in process)", "version": ""} in rows


def test_every_hook_is_documented_with_numpydoc():
    specs = [f for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")]
    assert {f.__name__ for f in specs} == {
        "register_learners", "register_featurizers", "register_corpora", "register_evaluators", "register_metrics",
        "register_comparisons", "register_commands"}
    for f in specs:
        doc = inspect.getdoc(f)
        assert "Parameters\n----------" in doc, f.__name__
    others = {name for name, f in inspect.getmembers(hookspecs, inspect.isfunction)
              if hasattr(f, "textcw_spec") and not name.startswith("register_")}
    assert others == {"provide_client"} and "Returns\n-------" in inspect.getdoc(hookspecs.provide_client)


def test_importing_textcw_builds_no_plugin_manager():
    code = ("import textcw, textcw.plugins as p; "
            "assert p.default_plugin_manager.cache_info().currsize == 0; "
            "assert p.default_registries.cache_info().currsize == 0; print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_no_plugins_variable_leaves_installed_plugins_out():
    # textcw-example is installed in the test environment (dev.py installs plugins/*)
    code = ("import sys, textcw.plugins as p; names = p.default_registries().learners.names(); "
            "print('balanced-winnow' in names, 'textcw_example' in sys.modules)")
    runs = {flag: subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                 env={**os.environ, "TEXTCW_NO_PLUGINS": flag}).stdout.split()
            for flag in ("0", "1")}
    assert runs == {"0": ["True", "True"], "1": ["False", "False"]}


def test_a_factory_named_by_reference_is_imported_only_when_used(tmp_path, monkeypatch):
    import sys

    from textcw.errors import PluginError
    from textcw.registry import Registries

    (tmp_path / "lazy_factory_mod.py").write_text("class Thing:\n    def __init__(self, **kw):\n        self.kw = kw\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    regs = Registries()
    register = regs.register_callable("learners", "some-plugin")
    register("thing", "lazy_factory_mod:Thing", summary="a thing")
    register("ghost", "no_such_module_here:Thing")
    register("empty", "lazy_factory_mod:Nothing")
    assert "lazy_factory_mod" not in sys.modules  # registering imported nothing
    assert regs.learners.get("thing").factory(a=1).kw == {"a": 1}
    assert "lazy_factory_mod" in sys.modules
    with pytest.raises(PluginError, match=r"some-plugin registered 'ghost' as 'no_such_module_here:Thing', "
                                          r"which cannot be loaded \(ModuleNotFoundError"):
        regs.learners.get("ghost").factory
    with pytest.raises(PluginError, match="which cannot be loaded .*TEXTCW_NO_PLUGINS=1"):
        regs.learners.get("empty").factory
    for bad in ("not a reference", "module:", ":attr", "mod.:x", 42):
        with pytest.raises(TypeError, match="is not callable"):
            register("bad", bad)


def test_listing_learners_imports_no_learner():
    """``textcw list learners`` reads names and summaries: every built-in and first-party learner
    is registered by reference."""
    import subprocess
    import sys

    code = ("import sys; from textcw.plugins import default_registries; regs = default_registries(); "
            "[e.summary for e in regs.learners]; print(sorted(m for m in ('numba', 'sklearn') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stderr


class MisspelledField:
    @staticmethod
    @textcw.hookimpl
    def register_learners(register):
        register("typo-perceptron", Perceptron, summary="a perceptron", quick_grd={"eta": [0.9]})


def test_registration_fields_are_typed_per_kind():
    from textcw.errors import PluginError
    from textcw.learners.selftune import tune_grid
    from textcw.registry import CorpusEntry, LearnerEntry

    regs = registries()
    cw = regs.learners.get("cw-var")
    assert isinstance(cw, LearnerEntry) and cw.online
    assert not any(hasattr(cw, field) for field in ("grid", "quick_grid", "train_defaults"))  # on the class
    assert tune_grid(regs.learners.get("sgd").factory, quick=True) == {"alpha": [1e-5, 1e-3]}
    assert tune_grid(regs.learners.get("svm").factory) == {"C": [1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0]}
    assert not regs.learners.get("svm").online and tune_grid(regs.learners.get("perceptron").factory) == {}
    svmlight = regs.corpora.get("svmlight")
    assert isinstance(svmlight, CorpusEntry) and svmlight.takes_path and svmlight.featurizer == "precomputed"
    assert regs.corpora.get("newsgroups").featurizer == "tfidf"
    assert not regs.corpora.get("newsgroups").takes_path
    assert not hasattr(regs.corpora.get("amazon"), "extra")  # typed fields only
    assert regs.corpora.get("newsgroups").takes_download and not regs.corpora.get("synthetic").takes_download
    with pytest.raises(PluginError, match=r"MisspelledField registered learner 'typo-perceptron' with unknown "
                                          r"keyword\(s\) 'quick_grd'; a learner takes online"):
        registries(MisspelledField)
    register = regs.register_callable("featurizers", "some-plugin")
    with pytest.raises(PluginError, match="a featurizer takes no keyword beyond name, factory and summary"):
        register("f", Perceptron, "a featurizer", tasks={})
    with pytest.raises(PluginError, match="unknown keyword.*'provider'"):
        regs.register_callable("corpora", "some-plugin")("c", Perceptron, "s", provider="someone-else")


class MisspelledHook:
    @staticmethod
    @textcw.hookimpl
    def register_learner(register):
        register("never", Perceptron, summary="never registered")


def test_a_misspelled_hook_of_an_in_process_plugin_is_an_error():
    import pluggy

    from textcw.errors import PluginError
    from textcw.plugins import UnknownHookError

    with pytest.raises(UnknownHookError, match=r"plugin MisspelledHook: it implements 'register_learner', which is "
                                               r"not a textcw hook \(misspelled\?\); textcw's hooks are: .*register_learners"):
        get_plugin_manager(entry_points=False, extra=[MisspelledHook])
    assert issubclass(UnknownHookError, PluginError) and issubclass(UnknownHookError, pluggy.PluginValidationError)


def test_builtin_commands_come_through_the_register_commands_hook():
    """textcw's own commands are a default plugin's, module-level functions a test can call."""
    import typer

    from textcw.cli import build_app, train
    from textcw.default_plugins import commands

    pm = get_plugin_manager(entry_points=False)
    assert pm.is_registered(commands)
    app = typer.Typer()
    commands.register_commands(app=app)
    assert [c.callback for c in app.registered_commands][0] is train.train
    names = [c.name or c.callback.__name__ for c in build_app(pm).registered_commands]
    assert names[:2] == ["train", "predict"] and {"list", "export", "cache", "reproduce"} <= set(names)


def test_the_register_protocols_take_the_fields_of_their_kind():
    # the hooks' annotations and the registry's typed entries must not drift apart
    from textcw.registry import CorpusEntry, LearnerEntry, declared_fields

    def keywords(protocol):
        parameters = inspect.signature(protocol.__call__).parameters.values()
        return [p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY]

    assert keywords(hookspecs.RegisterLearner) == declared_fields(LearnerEntry)
    assert keywords(hookspecs.RegisterCorpus) == declared_fields(CorpusEntry)
    assert keywords(hookspecs.Register) == []
    hooks = {name: inspect.signature(f).parameters["register"].annotation
             for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")
             and name != "register_commands"}
    assert hooks == {"register_learners": "RegisterLearner", "register_corpora": "RegisterCorpus",
                     "register_featurizers": "Register", "register_evaluators": "Register",
                     "register_metrics": "Register", "register_comparisons": "Register"}


class FunctionFactory:
    @staticmethod
    @textcw.hookimpl
    def register_learners(register):
        from textcw.learners.sgd import SGD

        register("sgd-by-function", lambda **params: SGD(**params), summary="SGD built by a function")


def test_a_factory_function_tunes_with_the_grid_of_the_class_it_builds():
    # tuning is declared on the class only, so the tune grid is read from what the factory builds
    from textcw.evaluation.grids import grid_for
    from textcw.plugins import use_registries

    with use_registries(registries(FunctionFactory)):
        assert grid_for("sgd-by-function", {}, quick=True) == {"alpha": [1e-5, 1e-3]}
        assert grid_for("sgd-by-function", {"alpha": 1e-4}) == {}
