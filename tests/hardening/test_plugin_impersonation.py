"""Plugins cannot impersonate (issue 26): a command name that clashes is an error naming both
plugins, what a plugin says about itself is printed escaped, and a plugin slow to import is named
while it imports. The plugins are real entry points (the ``site`` fixture of
test_plugin_broken.py)."""

from __future__ import annotations

import json
import logging
import sys
import time
import types
from pathlib import Path

import pytest
import typer

import textcw
from textcw.errors import PluginError
from textcw.plugins import (build_registries, command_names, get_plugin_manager, installed_plugins,
                            register_commands)

sys.path.insert(0, str(Path(__file__).parent))
from test_plugin_broken import load, only_broken, site, textcw_cli  # noqa: E402,F401

sys.path.pop(0)

ESC = "\x1b]0;owned\x07\x1b[2J"


def commands(name: str) -> str:
    return f"""
        import textcw

        @textcw.hookimpl
        def register_commands(app):
            @app.command("{name}")
            def impostor():
                print("impostor ran")
    """


def build(caplog):
    app = typer.Typer()
    with caplog.at_level(logging.WARNING, logger="textcw"):
        pm = get_plugin_manager(entry_points=True)
        register_commands(pm, app)
    return pm, app


def test_a_plugin_cannot_replace_a_builtin_command(site, caplog):
    site("impostor", commands("train"))
    pm, app = build(caplog)
    trains = [c for c in app.registered_commands if (c.name or c.callback.__name__) == "train"]
    assert len(trains) == 1 and trains[0].callback.__module__ == "textcw.cli.train"
    assert command_names(app, unique=False).count("train") == 1
    reason = only_broken(pm, "impostor").reason
    assert reason == ("its command 'train' clashes with the command 'train' of textcw; a command name "
                      "belongs to one plugin: uninstall impostor or textcw")
    assert "'impostor'" in caplog.text and "clashes with the command 'train' of textcw" in caplog.text


def test_two_plugins_with_one_command_name_name_each_other(site, caplog):
    site("first-hello", commands("hello"))
    site("second-hello", commands("hello"))
    pm, app = build(caplog)
    assert sum(c.name == "hello" for c in app.registered_commands) == 1
    broken = [b for b in pm.broken if "hello" in b.reason]
    assert len(broken) == 1
    other = ({"first-hello", "second-hello"} - {broken[0].name}).pop()
    assert f"of {other}" in broken[0].reason and f"uninstall {broken[0].name} or {other}" in broken[0].reason


def test_a_group_name_clashes_too(site, caplog):
    site("group-impostor", """
        import textcw, typer

        @textcw.hookimpl
        def register_commands(app):
            app.add_typer(typer.Typer(), name="cache")
    """)
    pm, app = build(caplog)
    assert "clashes with the command 'cache' of textcw" in only_broken(pm, "group-impostor").reason
    assert app.registered_groups == []


def test_an_in_process_plugin_clash_raises_naming_both():
    plugin = types.ModuleType("my_commands")

    @textcw.hookimpl
    def hook(app):
        @app.command("predict")
        def predict():
            pass

    plugin.register_commands = hook
    pm = get_plugin_manager(entry_points=False, extra=[plugin])
    with pytest.raises(PluginError, match="plugin my_commands: its command 'predict' clashes with the "
                                          "command 'predict' of textcw"):
        register_commands(pm, typer.Typer())


def test_the_command_line_runs_the_builtin(site):
    site("impostor", commands("list"))
    run = textcw_cli(site.folder, "list", "learners", "--json")
    assert run.returncode == 0 and "impostor ran" not in run.stdout
    assert json.loads(run.stdout) and "clashes with the command 'list' of textcw" in run.stderr


def test_summaries_are_escaped_and_control_characters_in_names_refused(site, caplog):
    site("loud", f"""
        import textcw
        from textcw.learners.perceptron import Perceptron

        @textcw.hookimpl
        def register_learners(register):
            register("loud-perceptron", Perceptron, summary={ESC!r})
    """)
    site("sneaky", """
        import textcw
        from textcw.learners.perceptron import Perceptron

        @textcw.hookimpl
        def register_learners(register):
            register("perceptron\\x1b[8m", Perceptron, summary="hidden")
    """)
    pm, regs, _ = load(caplog)
    summary = regs.learners.get("loud-perceptron").summary
    assert "\x1b" not in summary and "\x07" not in summary and summary == ESC.encode("unicode_escape").decode()
    assert "perceptron\x1b[8m" not in regs.learners
    assert "holds a control character (U+001B)" in only_broken(pm, "sneaky").reason


def test_corpus_task_summaries_are_escaped(site, caplog):
    site("tasks", f"""
        import textcw

        @textcw.hookimpl
        def register_corpora(register):
            register("loud-corpus", lambda **kw: None, summary="ok", tasks={{"t": {ESC!r}}})
    """)
    _, regs, _ = load(caplog)
    assert "\x1b" not in regs.corpora.get("loud-corpus").tasks["t"]


def test_reasons_versions_and_distributions_are_escaped(site, caplog):
    site("evil-reason", f"raise ValueError({ESC!r})")
    pm, _, lines = load(caplog)
    reason = only_broken(pm, "evil-reason").reason
    assert "\x1b" not in reason and "\\x1b]0;owned\\x07" in reason
    assert not any("\x1b" in line for line in lines)
    rows = installed_plugins(pm)
    assert not any("\x1b" in str(value) for row in rows for value in row.values())


def test_a_version_with_escapes_is_listed_escaped(site, caplog):
    name = site("odd-version", commands("odd"))
    meta = site.folder / f"{name}-1.0.dist-info" / "METADATA"
    meta.write_text(meta.read_text().replace("Version: 1.0", "Version: 1.0\x1b[31m"))
    pm, _, _ = load(caplog)
    rows = [r for r in installed_plugins(pm) if r["name"] == "odd-version"]
    assert [r["version"] for r in rows] == ["1.0\\x1b[31m"]


def test_a_slow_import_is_named_while_it_runs(site, monkeypatch, capsys):
    from textcw.plugins import manager

    monkeypatch.setattr(manager, "SLOW_IMPORT_SECONDS", 0.05)  # read where the timer starts
    site("slow-plugin", "import time\ntime.sleep(1.0)")
    site("quick-plugin", "")
    capsys.readouterr()
    get_plugin_manager(entry_points=True)
    err = capsys.readouterr().err
    assert "still importing plugin slow-plugin (from slow-plugin)... (set TEXTCW_NO_PLUGINS=1" in err
    assert "quick-plugin" not in err


def test_a_slow_hook_is_named_while_it_runs(site, monkeypatch, capsys):
    from textcw.plugins import manager

    monkeypatch.setattr(manager, "SLOW_IMPORT_SECONDS", 0.05)  # read where the timer starts
    site("slow-hook", """
        import time
        import textcw

        @textcw.hookimpl
        def register_learners(register):
            time.sleep(1.0)
    """)
    capsys.readouterr()
    build_registries(get_plugin_manager(entry_points=True))
    err = capsys.readouterr().err
    assert "plugin slow-hook is still running its hook register_learners (from slow-hook)..." in err


def test_a_fast_import_says_nothing_and_leaves_no_timer(site, capsys):
    import threading

    site("quick-plugin", "")
    before = threading.active_count()
    get_plugin_manager(entry_points=True)
    time.sleep(0.05)
    assert threading.active_count() <= before  # the timer was cancelled, not left running
    assert "still importing" not in capsys.readouterr().err


def test_registries_still_build_with_the_installed_plugins(site, caplog):
    site("impostor", commands("train"))
    assert "perceptron" in build_registries(get_plugin_manager(entry_points=True)).learners
