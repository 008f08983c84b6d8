"""A first day with no surprises: the default learner, the listing of corpora in a pipe, a failed
download, where `dev.py docs` put the site, and what `joblib.load` says about a model file."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

import textcw
from cli_run import run
from textcw.corpus import download
from textcw.corpus.datahome import RemoteFile
from textcw.errors import DataError

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- the default learner

def test_train_without_learner_uses_scw1_and_says_so(capsys):
    code, out, err = run(capsys, "train", "--corpus", "synthetic")
    assert code == 0, err
    assert out.startswith("synthetic  scw1 (the default)  accuracy "), out
    assert "Missing option" not in err


def test_train_with_a_learner_does_not_say_default(capsys, tmp_path):
    code, out, err = run(capsys, "train", "--corpus", "synthetic", "--learner", "pa1",
                         "--out", tmp_path / "m.textcw-model")
    assert code == 0 and out.startswith("synthetic  pa1  accuracy ") and "(the default)" not in out + err


def test_evaluate_without_learner_uses_scw1_and_says_so(capsys):
    code, out, err = run(capsys, "evaluate", "--corpus", "synthetic", "--sample", "200", "--folds", "2")
    assert code == 0, err
    assert out.splitlines()[1].split("\t")[1:] == ["scw1"], out  # after the table's title
    assert "learner scw1 (the default; choose others with --learner" in err


def test_help_shows_the_default_learner(capsys):
    for command in ("train", "evaluate"):
        code, out, _ = run(capsys, command, "--help")
        assert code == 0 and "default: scw1" in " ".join(out.replace("│", " ").split())
        assert "required unless" not in out


# ---------------------------------------------------------------- `textcw list corpora` in a pipe

def test_piped_corpus_listing_keeps_its_lines_short_and_gives_the_advice_once(capsys, monkeypatch, tmp_path):
    """With no archive here, every downloadable corpus has the same few hundred characters of
    advice; the table says "see note N" and the advice goes once per problem to stderr."""
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
    code, out, err = run(capsys, "list", "corpora")
    assert code == 0
    lines = out.splitlines()
    assert max(map(len, lines)) < 200, max(lines, key=len)
    assert all(line.count("\t") == 5 for line in lines)  # still one row per line for scripts
    assert "not found in" not in out and "TEXTCW_DATA" not in out
    rows = {line.split("\t")[0]: line for line in lines}
    number = re.search(r"see note (\d+) below", rows["newsgroups"]).group(1)
    assert err.count(f"note {number} (newsgroups): ") == 1
    notes = re.findall(r"^note (\d+) \(", err, re.MULTILINE)
    assert notes == [str(k) for k in range(1, len(notes) + 1)]  # each note once, in order
    assert set(re.findall(r"see note (\d+) below", out)) == set(notes)
    assert all(len(line) <= 100 or "://" in line for line in err.splitlines())  # wrapped, addresses whole
    assert err.count(f"{tmp_path / 'newsgroups'} ") == 1


# ----------------------------------------------------------------------------- a failed download

def test_a_failed_download_removes_the_folders_it_created(monkeypatch, tmp_path):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    remote = RemoteFile("toy", "data.bin", "http://127.0.0.1:9/data.bin", ("f" * 64,))  # port 9: refused
    with pytest.raises(DataError, match="downloading failed"):
        download.download_file(remote)
    assert not (tmp_path / "home").exists()


def test_a_failed_download_keeps_a_folder_that_was_there(monkeypatch, tmp_path):
    (tmp_path / "home" / "toy").mkdir(parents=True)
    (tmp_path / "home" / "other").mkdir()
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    with pytest.raises(DataError):
        download.download_file(RemoteFile("toy", "data.bin", "http://127.0.0.1:9/data.bin", ("f" * 64,)))
    assert (tmp_path / "home" / "toy").is_dir()
    with pytest.raises(DataError):
        download.download_file(RemoteFile("new", "data.bin", "http://127.0.0.1:9/data.bin", ("f" * 64,)))
    assert not (tmp_path / "home" / "new").exists() and (tmp_path / "home").is_dir()


# ------------------------------------------------------------------------------- `dev.py docs`

def test_dev_docs_says_where_the_site_is(monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("textcw_dev_script", ROOT / "dev.py")
    dev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dev)

    class Done:
        returncode = 0

    monkeypatch.setattr(dev.subprocess, "run", lambda *args, **kwargs: Done())
    assert dev.build_docs() == 0
    index = ROOT / "build" / "site" / "index.html"
    assert f"built: {index} (open {index.as_uri()} in a browser)" in capsys.readouterr().out
    Done.returncode = 1
    assert dev.build_docs() == 1
    assert "did not build" in capsys.readouterr().out


# ----------------------------------------------------------------------- joblib.load on a model

def test_joblib_load_on_a_model_file_fails_as_the_docs_say(tmp_path):
    joblib = pytest.importorskip("joblib")
    X = np.array([[0.0, 1.0], [1.0, 0.0]] * 5)
    model = textcw.make_pipeline("precomputed", "perceptron", probability="raw").fit(X, [0, 1] * 5)
    path = tmp_path / "m.textcw-model"
    textcw.save(model, path)
    with pytest.raises(Exception) as failure:
        joblib.load(path)
    message = str(failure.value)
    assert type(failure.value).__name__ == "UnpicklingError"
    for page in ("docs/reference/persist.md", "docs/guide/quickstart.md", "docs/guide/migrating-from-sklearn.md"):
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        assert f"`joblib.load(path)` fails on it with `UnpicklingError: {message}`" in text or \
            f"`joblib.load` fails on it with `UnpicklingError: {message}`" in text, page
        assert "textcw.load" in text, page
    assert (textcw.load(path).predict(X) == model.predict(X)).all()
