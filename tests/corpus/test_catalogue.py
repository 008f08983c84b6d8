"""Task names that are patterns, and `textcw list corpora` with every task's size."""

from __future__ import annotations

import json

import numpy as np
import pytest

from textcw.cli import main
from textcw.corpus.base import Dataset
from textcw.corpus.catalogue import task_rows
from textcw.errors import DataError, UnknownNameError
from textcw.pipeline import default_featurizer, load_corpus
from textcw.plugins import use_registries
from textcw.registry import Registries


def run_cli(capsys, *argv) -> tuple[int, str]:
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 0, err
    return code, out


def toy_factory(task=None, split="train", download=True):
    if task == "missing":
        raise DataError("corpus file toy.gz not found in /nowhere")
    n = {"train": 6, "test": 2}[split] * (2 if task == "big" else 1)
    return Dataset(data=["x"] * n, target=np.arange(n) % 3, target_names=["a", "b", "c"],
                   name=f"toy:{task}", split=split)


def check_pattern(task):
    if not task.startswith("n"):
        raise UnknownNameError("task of corpus 'toy'", task, ["toy:nNUMBER"])
    return True


@pytest.fixture
def registries():
    regs = Registries()
    register = regs.register_callable("corpora", "tests")
    register("toy", toy_factory, summary="A toy", tasks={"small": "s", "big": "b"},
             task_check=check_pattern, task_patterns={"nNUMBER": "any n"}, featurizer="hashing",
             takes_download=True)
    register("plain", toy_factory, summary="No patterns", tasks={"small": "s"}, takes_download=True)
    register("old", lambda task=None, split="train": toy_factory(task, split), summary="no download",
             tasks={"small": "s"})
    return regs


def test_listed_and_pattern_tasks_are_accepted(registries):
    with use_registries(registries):
        assert len(load_corpus("toy:big", "test")) == 4
        assert load_corpus("toy:n42").name == "toy:n42"
        with pytest.raises(UnknownNameError, match="toy:nNUMBER"):
            load_corpus("toy:zz")
        with pytest.raises(UnknownNameError, match="valid task of corpus 'plain' names: plain:small"):
            load_corpus("plain:n42")
        assert default_featurizer("toy:n1") == "hashing"
        assert default_featurizer("plain") == "tfidf"


def test_task_rows_have_sizes_classes_and_patterns(registries):
    rows = [r.to_dict() for r in task_rows(registries.corpora.get("toy"))]
    assert rows == [
        {"name": "toy:small", "summary": "s", "train": 6, "test": 2, "classes": 3, "problem": None},
        {"name": "toy:big", "summary": "b", "train": 12, "test": 4, "classes": 3, "problem": None},
        {"name": "toy:nNUMBER", "summary": "any n", "train": None, "test": None, "classes": None,
         "problem": None},
    ]
    assert task_rows(registries.corpora.get("toy"), sizes=False)[0].train is None


def test_task_rows_report_problems_instead_of_failing(registries):
    register = registries.register_callable("corpora", "tests")
    register("gone", toy_factory, summary="missing file", tasks={"missing": "m"}, takes_download=True)
    [row] = task_rows(registries.corpora.get("gone"))
    assert row.train is None and row.problem == "corpus file toy.gz not found in /nowhere"
    [row] = task_rows(registries.corpora.get("old"))  # cannot be told not to download
    assert row.train is None and "no download=False option" in row.problem


@pytest.mark.corpus
def test_cli_lists_every_task_with_sizes(data_home, capsys, monkeypatch):
    monkeypatch.setenv("TEXTCW_OFFLINE", "1")
    _, out = run_cli(capsys, "list", "corpora", "--json")
    corpora = {c["name"]: c for c in json.loads(out)}
    tasks = {t["name"]: t for c in corpora.values() for t in c["tasks"]}
    assert (tasks["newsgroups:all"]["train"], tasks["newsgroups:all"]["test"]) == (11314, 7532)
    assert tasks["newsgroups:all"]["classes"] == 20
    assert (tasks["amazon:domains"]["train"], tasks["amazon:domains"]["classes"]) == (6400, 4)
    assert (tasks["spam:u02"]["train"], tasks["spam:u02"]["test"]) == (1600, 400)
    assert (tasks["reuters:r8"]["train"], tasks["reuters:r8"]["test"]) == (5485, 2189)
    assert tasks["rcv1:insurance"]["train"] is None and "not found" in tasks["rcv1:insurance"]["problem"]
    assert tasks["folder:PATH"]["train"] is None and tasks["svmlight:PATH[,TEST_PATH]"]["problem"] is None
    assert corpora["amazon"]["featurizer"] == "precomputed"


def test_cli_table_without_sizes(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    _, out = run_cli(capsys, "list", "corpora", "--no-sizes")
    for name in ("newsgroups:comp", "amazon:books-vs-dvd", "spam:u00", "reuters:money",
                 "rcv1:retail", "enron:kaminski-v", "folder:PATH", "svmlight:PATH[,TEST_PATH]"):
        assert name in out
