"""Broken installed plugins: each is reported by name (with TEXTCW_NO_PLUGINS=1), skipped, listed by
``textcw plugins``, and everything else keeps working.

The plugins are real entry points: each test writes a distribution (``*.dist-info`` with an
``entry_points.txt``) and its module into a temporary folder on ``sys.path``, where
``importlib.metadata`` finds them as it finds installed packages.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import typer

from textcw.errors import DuplicateNameError
from textcw.plugins import (broken_plugins, build_registries, get_plugin_manager, installed_plugins,
                            register_commands)
from hang import HANG_SECONDS

_numbers = itertools.count()

GOOD = """
import textcw
from textcw.learners.perceptron import Perceptron

@textcw.hookimpl
def register_learners(register):
    register("good-perceptron", Perceptron, summary="fine")
"""


@pytest.fixture
def site(tmp_path, monkeypatch):
    """``install(dist, source)``: a one-plugin distribution; returns its entry-point name."""
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    modules = []

    def install(dist: str, source: str, *, target: str | None = None) -> str:
        module = f"fake_textcw_plugin_{next(_numbers)}"
        modules.append(module)
        (folder / f"{module}.py").write_text(textwrap.dedent(source))
        info = folder / f"{dist}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[textcw]\n{dist} = {target or module}\n")
        return dist

    install.folder = folder
    yield install
    for module in modules:
        sys.modules.pop(module, None)


def load(caplog):
    """A manager with the installed plugins, and the warnings it logged."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="textcw"):
        pm = get_plugin_manager(entry_points=True)
        regs = build_registries(pm)
    lines = [r.getMessage() for r in caplog.records if r.name == "textcw"]
    return pm, regs, lines


def only_broken(pm, name):
    found = [b for b in broken_plugins(pm) if b.name == name]
    assert len(found) == 1, broken_plugins(pm)
    return found[0]


@pytest.mark.parametrize("source,reason", [
    ("raise ValueError('boom\\nsecond line')", "raised ValueError: boom second line"),
    ("import sys\nsys.exit(3)", "called sys.exit(3)"),
    ("raise SystemExit('plugin says bye')", "called sys.exit('plugin says bye')"),
    ("import textcw_no_such_dependency", "raised ModuleNotFoundError: No module named 'textcw_no_such_dependency'"),
    ("def broken(:\n    pass", "raised SyntaxError: "),
    ("raise MemoryError()", "raised MemoryError"),
])
def test_plugin_that_fails_to_import_is_reported_and_skipped(site, caplog, source, reason):
    site("good-plugin", GOOD)
    name = site("bad-plugin", source)
    pm, regs, lines = load(caplog)
    broken = only_broken(pm, name)
    assert (broken.distribution, broken.version) == ("bad-plugin", "1.0")
    assert broken.reason.startswith("loading fake_textcw_plugin_") and reason in broken.reason
    assert broken.reason.endswith(reason) or reason.endswith(": ")
    assert "\n" not in broken.reason
    assert [line for line in lines if "bad-plugin" in line] == [
        f"skipping the broken textcw plugin 'bad-plugin' (bad-plugin 1.0): {broken.reason}; "
        "set TEXTCW_NO_PLUGINS=1 to run textcw without installed plugins"]
    assert regs.learners.get("good-perceptron").provider == "good-plugin"  # the others still load
    assert regs.learners.get("cw-stdev").provider == "textcw"
    assert [b.name for b in broken_plugins(pm)] == ["bad-plugin"]


def test_entry_point_naming_a_missing_attribute(site, caplog):
    name = site("bad-target", GOOD, target=None)
    (site.folder / f"{name}-1.0.dist-info" / "entry_points.txt").write_text(
        "[textcw]\nbad-target = textcw.plugins:no_such_object\n")
    pm, regs, _ = load(caplog)
    assert "AttributeError" in only_broken(pm, "bad-target").reason
    assert "cw-var" in regs.learners


def test_keyboard_interrupt_during_import_is_not_swallowed(site):
    site("interrupting", "raise KeyboardInterrupt")
    with pytest.raises(KeyboardInterrupt):
        get_plugin_manager(entry_points=True)


@pytest.mark.parametrize("body,reason", [
    ("register('half-registered', Perceptron); raise RuntimeError('second name failed')",
     "its hook register_learners raised RuntimeError: second name failed"),
    ("register('half-registered', Perceptron); import sys; sys.exit(0)",
     "its hook register_learners called sys.exit(0)"),
    ("register('half-registered', Perceptron); register('half-registered', Perceptron)",
     "its hook register_learners raised DuplicateNameError: learner 'half-registered' is registered twice"),
    ("register('', Perceptron)", "registered a learner with an empty or non-string name"),
    ("register('not-callable', 42)", "TypeError: hook-raises: factory for learner 'not-callable' is not callable"),
])
def test_plugin_whose_hook_fails_leaves_nothing_behind(site, caplog, body, reason):
    site("good-plugin", GOOD)
    site("hook-raises", f"""
        import textcw
        from textcw.learners.perceptron import Perceptron

        @textcw.hookimpl
        def register_featurizers(register):
            register("featurizer-of-a-broken-plugin", lambda: None)

        @textcw.hookimpl
        def register_learners(register):
            {body}
    """)
    pm, regs, lines = load(caplog)
    broken = only_broken(pm, "hook-raises")
    assert reason in broken.reason
    assert sum("'hook-raises'" in line and "TEXTCW_NO_PLUGINS=1" in line for line in lines) == 1
    # all or nothing: neither the names registered before the failure nor its other hooks' names
    assert "half-registered" not in regs.learners and "not-callable" not in regs.learners
    assert "featurizer-of-a-broken-plugin" not in regs.featurizers
    assert "good-perceptron" in regs.learners and "binary-bow" in regs.featurizers
    assert not pm.has_plugin("hook-raises")  # unregistered: no hook of it runs again
    assert build_registries(pm).learners.names() == regs.learners.names()
    assert len(broken_plugins(pm)) == 1  # reported once


def test_plugin_shadowing_a_builtin_name_is_skipped_and_the_builtin_kept(site, caplog):
    site("shadow", """
        import textcw
        from textcw.learners.perceptron import Perceptron

        @textcw.hookimpl
        def register_learners(register):
            register("shadow-own-name", Perceptron)
            register("cw-var", Perceptron)
    """)
    pm, regs, _ = load(caplog)
    assert only_broken(pm, "shadow").reason == (
        "learner 'cw-var' is registered twice: by textcw and by shadow; uninstall one of them or "
        "rename the entry")
    assert regs.learners.get("cw-var").provider == "textcw" and "shadow-own-name" not in regs.learners


def test_in_process_plugins_still_raise(site):
    class Clash:
        @staticmethod
        def register_learners(register):
            from textcw.learners.perceptron import Perceptron
            register("cw-var", Perceptron)

    import textcw

    Clash.register_learners = staticmethod(textcw.hookimpl(Clash.register_learners))
    with pytest.raises(DuplicateNameError, match="by textcw and by Clash"):
        build_registries(get_plugin_manager(entry_points=False, extra=[Clash]))


def test_misspelled_and_refused_hooks_are_reported(site, caplog):
    site("misspelled", """
        import textcw
        from textcw.learners.perceptron import Perceptron

        @textcw.hookimpl
        def register_learner(register):  # the hook is register_learners
            register("never-seen", Perceptron)
    """)
    site("optional-extra", """
        import textcw
        from textcw.learners.perceptron import Perceptron

        @textcw.hookimpl(optionalhook=True)
        def register_something_newer(register):
            pass

        @textcw.hookimpl
        def register_learners(register):
            register("optional-ok", Perceptron)
    """)
    site("wrong-arguments", """
        import textcw

        @textcw.hookimpl
        def register_learners(reg):
            pass
    """)
    pm, regs, lines = load(caplog)
    misspelled = only_broken(pm, "misspelled").reason
    assert misspelled.startswith("it implements 'register_learner', which is not a textcw hook (misspelled?); "
                                 "textcw's hooks are: provide_client, register_commands, register_comparisons,")
    assert "PluginValidationError" in only_broken(pm, "wrong-arguments").reason
    assert "reg" in only_broken(pm, "wrong-arguments").reason
    assert "optional-ok" in regs.learners and "never-seen" not in regs.learners
    assert sorted(b.name for b in broken_plugins(pm)) == ["misspelled", "wrong-arguments"]
    assert len([line for line in lines if "TEXTCW_NO_PLUGINS=1" in line]) == 2


def test_failing_command_hook_is_skipped_with_its_commands(site, caplog):
    site("good-commands", """
        import textcw

        @textcw.hookimpl
        def register_commands(app):
            @app.command("good-one")
            def good_one():
                pass
    """)
    site("bad-commands", """
        import textcw

        @textcw.hookimpl
        def register_commands(app):
            @app.command("half-added")
            def half_added():
                pass
            raise RuntimeError("typer option misuse")
    """)
    app = typer.Typer()
    with caplog.at_level(logging.WARNING, logger="textcw"):
        pm = get_plugin_manager(entry_points=True)
        register_commands(pm, app)
    names = [c.name for c in app.registered_commands]
    assert "good-one" in names and "half-added" not in names
    assert only_broken(pm, "bad-commands").reason == (
        "its hook register_commands raised RuntimeError: typer option misuse")


def test_installed_plugins_lists_the_broken_ones(site, caplog):
    site("bad-plugin", "raise ValueError('boom')")
    pm, _, _ = load(caplog)
    rows = installed_plugins(pm)
    broken = [r for r in rows if "broken" in r]
    assert broken == [{"name": "bad-plugin", "distribution": "bad-plugin", "version": "1.0",
                       "broken": only_broken(pm, "bad-plugin").reason}]
    assert any(r["distribution"] == "textcw" and "broken" not in r for r in rows)


# ------------------------------------------------------------------ the command line, in a process

def textcw_cli(site_folder: Path, *argv: str, no_plugins: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site_folder), os.environ.get("PYTHONPATH", "")]),
           "TEXTCW_NO_PLUGINS": "1" if no_plugins else "0"}
    env.pop("TEXTCW_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "textcw", *argv], capture_output=True, text=True, env=env,
                          timeout=HANG_SECONDS)


def test_command_line_keeps_working_around_broken_plugins(site):
    site("exits-at-import", "import sys\nsys.exit(7)")
    site("hook-raises", """
        import textcw

        @textcw.hookimpl
        def register_learners(register):
            raise RuntimeError("no learners today")
    """)
    expected = {
        "exits-at-import": "called sys.exit(7)",
        "hook-raises": "its hook register_learners raised RuntimeError: no learners today",
    }
    run = textcw_cli(site.folder, "plugins", "--json")
    assert run.returncode == 0, run.stderr
    rows = {r["name"]: r for r in json.loads(run.stdout)}
    assert rows["exits-at-import"]["broken"].endswith(expected["exits-at-import"])
    assert rows["hook-raises"]["broken"] == expected["hook-raises"]
    assert "broken" not in rows["textcw.default_plugins.learners"]
    warnings = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(warnings) == 2 and "Traceback" not in run.stderr  # one line per broken plugin
    for name in expected:
        assert sum(f"'{name}'" in line and "TEXTCW_NO_PLUGINS=1" in line for line in warnings) == 1

    run = textcw_cli(site.folder, "list", "learners", "--json")
    assert run.returncode == 0, run.stderr
    assert "cw-stdev" in {r["name"] for r in json.loads(run.stdout)}

    run = textcw_cli(site.folder, "--help")
    assert run.returncode == 0 and "plugins" in run.stdout
    assert "exits-at-import" in run.stderr

    quiet = textcw_cli(site.folder, "plugins", "--json", no_plugins=True)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert not any("broken" in r for r in json.loads(quiet.stdout))
