"""``textcw cache info|clear`` and ``textcw train --no-cache``."""

from __future__ import annotations

import json

import pytest

from cli_run import one_line_error, run
from textcw.corpus import cache


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    cache._parsed.clear()
    yield tmp_path / "cache"
    cache._parsed.clear()


def test_info_of_an_empty_cache(capsys, cache_home):
    code, out, _ = run(capsys, "cache", "info")
    assert code == 0
    assert out.splitlines() == [f"cache folder: {cache_home}", "chosen as: $TEXTCW_CACHE", "0 files, 0 bytes"]


def test_unknown_action(capsys, cache_home):
    code, _, err = run(capsys, "cache", "purge")
    assert code == 2
    assert one_line_error(err) == "error: unknown cache action 'purge'; valid cache action names: clear, info"


@pytest.mark.corpus
def test_train_fills_info_shows_clear_empties_and_no_cache_bypasses(capsys, data_home, cache_home, tmp_path):
    args = ("train", "--corpus", "newsgroups:sci", "--learner", "cw-stdev")
    code, plain, _ = run(capsys, *args, "--no-cache", "--out", tmp_path / "a.textcw-model")
    assert code == 0 and not cache_home.exists()  # --no-cache writes nothing

    code, first, _ = run(capsys, *args, "--out", tmp_path / "b.textcw-model")
    assert code == 0
    code, out, _ = run(capsys, "cache", "info", "--json")
    info = json.loads(out)
    assert info["folder"] == str(cache_home) and info["enabled"] is True
    assert sorted(e["kind"] for e in info["entries"]) == ["corpus", "features"]
    assert all(e["name"] in ("newsgroups", "newsgroups-sci") for e in info["entries"])
    assert info["total_bytes"] == sum(e["bytes"] for e in info["entries"]) > 0

    code, second, _ = run(capsys, *args, "--out", tmp_path / "c.textcw-model")
    assert code == 0
    accuracy = [line.split("accuracy ")[1].split()[0] for line in (plain, first, second)]
    assert accuracy[0] == accuracy[1] == accuracy[2]
    model = (tmp_path / "a.textcw-model").read_bytes()
    assert model == (tmp_path / "b.textcw-model").read_bytes() == (tmp_path / "c.textcw-model").read_bytes()

    code, out, _ = run(capsys, "cache", "clear")
    assert code == 0
    assert out.startswith(f"removed 3 files (") and out.rstrip().endswith(f"from {cache_home}")
    code, out, _ = run(capsys, "cache", "info")
    assert out.splitlines()[-1] == "0 files, 0 bytes"


@pytest.mark.corpus
def test_no_cache_variable(capsys, data_home, cache_home, monkeypatch):
    monkeypatch.setenv("TEXTCW_NO_CACHE", "1")
    code, _, _ = run(capsys, "train", "--corpus", "newsgroups:sci", "--learner", "perceptron")
    assert code == 0 and not cache_home.exists()
    code, out, _ = run(capsys, "cache", "info")
    assert out.splitlines()[0] == f"cache folder: {cache_home} (off: TEXTCW_NO_CACHE=1)"


@pytest.mark.skipif(not hasattr(__import__("os"), "geteuid"), reason="POSIX modes")
def test_info_and_clear_say_why_a_cache_folder_is_not_used(capsys, cache_home, tmp_path):
    import os

    cache_home.mkdir()
    (cache_home / "corpus").mkdir()
    (cache_home / "corpus" / "x.npz").write_bytes(b"kept")
    os.chmod(cache_home, 0o777)
    code, out, err = run(capsys, "cache", "info")
    assert code == 0 and err == ""
    assert out.splitlines()[2] == (f"not used: the cache folder {cache_home} can be written by others (mode 0777); "
                                   f"run: chmod go-w '{cache_home}' (textcw reads state only from places that only "
                                   "you can write: docs/security.md)")
    code, out, _ = run(capsys, "cache", "clear", "--json")
    assert json.loads(out)["removed_files"] == 0 and "chmod go-w" in json.loads(out)["problem"]
    assert (cache_home / "corpus" / "x.npz").exists()
