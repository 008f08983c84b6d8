"""Installed plugins are imported on first use (textcw.plugins.lazy), through the plugin index
(textcw.plugins.index): a command that names only built-ins imports no plugin, a plugin's name
or command imports that plugin, and an index that is stale, damaged or untrusted is not used
(every plugin is loaded, as before).

The first-party plugins textcw-example, textcw-pixels and textcw-serve are installed in the test
environment (dev.py installs plugins/*). Each test that starts processes gives them a cache
folder of its own (``TEXTCW_CACHE``), so that its first process finds no index.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from textcw.plugins import index

PLUGIN_MODULES = ("textcw_example", "textcw_pixels", "textcw_serve")
REPORT = ("import sys, json\n"
          "print('\\nLOADED ' + json.dumps(sorted({m.split('.')[0] for m in sys.modules} & set(%r))))\n"
          % (PLUGIN_MODULES,))


def run(cache: Path, code: str, *, pythonpath: Path | None = None) -> tuple[list[str], subprocess.CompletedProcess]:
    """Run ``code`` in a new process with ``cache`` as the cache folder: the plugin modules it
    imported, and the process."""
    env = {**os.environ, "TEXTCW_CACHE": str(cache), "TEXTCW_NO_PLUGINS": "0"}
    env.pop("TEXTCW_NO_CACHE", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pythonpath), env.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, "-c", code + "\n" + REPORT], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    line = [x for x in done.stdout.splitlines() if x.startswith("LOADED ")][-1]
    return json.loads(line[len("LOADED "):]), done


HELP = ("from textcw.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit as exc:\n    assert exc.code in (0, None)\n")
TRAIN_BUILTIN = ("import textcw.pipeline as p\n"
                 "p.train('synthetic', 'perceptron', epochs=1, probability_metrics=False, mistake_curve=False)\n")


def indexes(cache: Path) -> list[Path]:
    return sorted((cache / "plugins").glob("index-*.json"))


@pytest.fixture
def cache(tmp_path):
    folder = tmp_path / "cache"
    # the first start finds no index: it loads every plugin, as textcw always did, and writes one
    loaded, _ = run(folder, HELP)
    assert loaded == sorted(PLUGIN_MODULES)
    assert len(indexes(folder)) == 1
    return folder


def test_help_and_a_builtin_learner_import_no_plugin(cache):
    loaded, done = run(cache, HELP)
    assert loaded == [], "textcw --help imported plugin code before any of its names was asked for"
    assert "serve" in done.stdout  # the plugin's command is listed all the same, from the index
    loaded, _ = run(cache, TRAIN_BUILTIN)
    assert loaded == [], "training a built-in learner imported plugin code"


def test_listing_learners_imports_only_the_plugins_with_learners(cache):
    heavy = ("import sys\nprint('HEAVY', sorted({m.split('.')[0] for m in sys.modules} & "
             "{'numpy', 'scipy', 'sklearn', 'numba'}))\n")
    loaded, done = run(cache, "from textcw.cli import main\nmain(['list', 'learners'])\n" + heavy)
    assert loaded == ["textcw_example"] and "balanced-winnow" in done.stdout
    # nor the built-in corpora, which import NumPy and SciPy to register
    assert "HEAVY []" in done.stdout


def test_a_plugin_name_imports_its_plugin(cache):
    loaded, _ = run(cache, "import textcw\nassert textcw.make_learner('balanced-winnow') is not None")
    assert loaded == ["textcw_example"]
    loaded, _ = run(cache, "from textcw.plugins import resolve_corpus\nresolve_corpus('usps')")
    assert loaded == ["textcw_pixels"]
    loaded, done = run(cache, "from textcw.cli import main\ntry:\n    main(['serve', '--help'])\n"
                              "except SystemExit as exc:\n    assert exc.code in (0, None)\n")
    assert loaded == ["textcw_serve"] and "--port" in done.stdout


def test_an_unknown_name_imports_every_plugin_to_list_the_valid_ones(cache):
    code = ("import textcw\nfrom textcw.errors import UnknownNameError\n"
            "try:\n    textcw.make_learner('no-such')\n"
            "except UnknownNameError as exc:\n    assert 'balanced-winnow' in str(exc), exc\n"
            "else:\n    raise AssertionError\n")
    loaded, _ = run(cache, code)
    assert loaded == sorted(PLUGIN_MODULES)


def test_textcw_plugins_lists_every_plugin(cache):
    loaded, done = run(cache, "from textcw.cli import main\nmain(['plugins', '--json'])")
    assert loaded == sorted(PLUGIN_MODULES)
    rows = json.loads(done.stdout.split("\nLOADED ")[0])
    assert {"example", "pixels", "serve"} <= {r["name"] for r in rows} and not any("broken" in r for r in rows)


# ------------------------------------------------------------------ stale, damaged and untrusted indexes

def _fake_distribution(site: Path, dist: str, source: str) -> None:
    module = dist.replace("-", "_")
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{dist}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[textcw]\n{dist} = {module}\n")


FRESH = """
    import textcw

    @textcw.hookimpl
    def register_learners(register):
        register("fresh-perceptron", "textcw.learners.perceptron:Perceptron", summary="new")
"""


def test_the_index_is_rebuilt_when_the_distributions_change(cache, tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _fake_distribution(site, "fresh-plugin", FRESH)
    code = "import textcw\ntextcw.make_learner('fresh-perceptron')"
    loaded, _ = run(cache, code, pythonpath=site)  # a new distribution: a new key, every plugin loaded
    assert loaded == sorted(PLUGIN_MODULES)
    assert len(indexes(cache)) == 2  # each environment keeps its own index
    fresh = [json.loads(p.read_text()) for p in indexes(cache)]
    assert sum("fresh-plugin" in doc["plugins"] for doc in fresh) == 1
    loaded, _ = run(cache, code + "\nimport sys\nassert 'fresh_plugin' in sys.modules", pythonpath=site)
    assert loaded == []  # its index now: only the plugin named is imported
    loaded, _ = run(cache, HELP)  # back in the first environment: its index is still there
    assert loaded == []


def test_the_key_follows_distributions_and_entry_points(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    before = index.environment_key()
    _fake_distribution(tmp_path, "keyed-plugin", FRESH)
    added = index.environment_key()
    (tmp_path / "keyed-plugin-1.0.dist-info" / "entry_points.txt").write_text("[textcw]\nkeyed = other\n")
    changed = index.environment_key()
    assert len({before, added, changed}) == 3
    assert index.environment_key() == changed  # and stable while nothing changes


def test_a_stale_index_is_caught_and_discarded(cache):
    path = indexes(cache)[0]
    document = json.loads(path.read_text())
    document["plugins"]["example"]["names"]["learners"].remove("balanced-winnow")
    path.write_text(json.dumps(document))
    loaded, _ = run(cache, "import textcw\ntextcw.make_learner('balanced-winnow')")
    assert "textcw_example" in loaded
    assert not path.exists()  # the next start loads every plugin and writes it anew


DAMAGE = {
    "not JSON": lambda doc: "{not json",
    "cut short": lambda doc: json.dumps(doc)[:-10],
    "another key": lambda doc: json.dumps({**doc, "key": "0" * 64}),
    "another textcw": lambda doc: json.dumps({**doc, "textcw": "0.0.0"}),
    "extra field": lambda doc: json.dumps({**doc, "run": "this"}),
    "a repeated key": lambda doc: json.dumps(doc)[:-1] + ', "format": 1}',
    "a name with an escape": lambda doc: json.dumps(
        {**doc, "plugins": {**doc["plugins"], "example": {"names": {"learners": ["x\x1b[2J"]}, "commands": []}}}),
    "an unknown kind": lambda doc: json.dumps(
        {**doc, "plugins": {**doc["plugins"], "example": {"names": {"viruses": ["x"]}, "commands": []}}}),
    "NaN for a flag": lambda doc: json.dumps(doc).replace("false", "NaN", 1),
    "too large": lambda doc: json.dumps({**doc, "pad": "x" * (index.MAX_BYTES + 1)}),
    "deeply nested": lambda doc: "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_index_is_not_used(cache, damage, monkeypatch):
    monkeypatch.setenv("TEXTCW_CACHE", str(cache))
    path = indexes(cache)[0]
    key = index.environment_key()
    assert index.read(key) is not None and path.name == index.index_path(cache, key).name
    path.write_text(DAMAGE[damage](json.loads(path.read_text())))
    assert index.read(key) is None


def test_a_damaged_index_means_a_full_start_that_writes_it_anew(cache):
    path = indexes(cache)[0]
    path.write_text("{not json")
    loaded, done = run(cache, HELP)
    assert loaded == sorted(PLUGIN_MODULES) and "serve" in done.stdout and done.stderr == ""
    assert index.validate(json.loads(path.read_text()), json.loads(path.read_text())["key"])
    assert run(cache, HELP)[0] == []


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners and modes")
@pytest.mark.parametrize("how", ["file writable by others", "folder writable by others", "file is a link"])
def test_an_untrusted_index_is_not_used(cache, how, monkeypatch):
    monkeypatch.setenv("TEXTCW_CACHE", str(cache))
    key = index.environment_key()
    path = index.index_path(cache, key)
    if how == "file writable by others":
        path.chmod(path.stat().st_mode | stat.S_IWOTH)
    elif how == "folder writable by others":
        path.parent.chmod(path.parent.stat().st_mode | stat.S_IWGRP)
    else:
        real = cache / "elsewhere.json"
        path.rename(real)
        path.symlink_to(real)
    assert index.read(key) is None
    loaded, _ = run(cache, HELP)  # a full start, no crash, no warning
    assert loaded == sorted(PLUGIN_MODULES)


def test_no_cache_means_no_index(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_NO_CACHE", "1")
    assert index.cache_folder() is None and index.read("0" * 64) is None
    assert index.write("0" * 64, {}) is None


@pytest.mark.parametrize("env", [
    {"TEXTCW_CACHE": "/some/where"}, {"TEXTCW_CACHE": "~/c"}, {"XDG_CACHE_HOME": "/xdg"},
    {"XDG_CACHE_HOME": "relative/not/used"}, {},
])
def test_the_index_lives_where_the_corpus_cache_does(env, monkeypatch):
    from textcw.corpus.cache import location

    for name in ("TEXTCW_CACHE", "XDG_CACHE_HOME", "TEXTCW_NO_CACHE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert index.cache_folder() == location()[0]


BROKEN = "raise ValueError('broken at import')"


def test_a_broken_plugin_is_reported_at_every_start_and_no_index_is_written(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    _fake_distribution(site, "broken-plugin", BROKEN)
    cache = tmp_path / "cache"
    for _ in range(2):
        loaded, done = run(cache, HELP, pythonpath=site)
        assert loaded == sorted(PLUGIN_MODULES)
        assert sum("'broken-plugin'" in line and "TEXTCW_NO_PLUGINS=1" in line
                   for line in done.stderr.splitlines()) == 1
    assert indexes(cache) == []


def test_the_builtins_register_kind_by_kind():
    import pickle

    from textcw.plugins import get_plugin_manager
    from textcw.plugins.lazy import attach

    regs = attach(get_plugin_manager(entry_points=False))
    assert not regs.corpora.has("newsgroups") and not regs.learners.has("cw-stdev")
    assert "cw-stdev" in regs.learners and not regs.corpora.has("newsgroups")
    assert regs.corpora.get("newsgroups").provider == "textcw"
    copied = pickle.loads(pickle.dumps(regs.metrics))  # whole, without the loader
    assert copied.loader is None and copied.names() == regs.metrics.names() and "error" in copied
