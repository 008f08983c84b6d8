"""Bring your own text: folder:PATH."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import textcw
from textcw.errors import DataError, InputError
from textcw.pipeline import train


def write(root: Path, files: dict[str, bytes | str]) -> Path:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def two_topics(root: Path, n: int = 10) -> Path:
    files = {}
    for i in range(n):
        files[f"sport/{i:03d}.txt"] = f"match goal team score {i}"
        files[f"finance/{i:03d}.txt"] = f"bank loan rate market {i}"
    return write(root, files)


def test_classes_are_the_sub_folders_and_the_split_is_seeded(tmp_path):
    root = two_topics(tmp_path / "docs")
    train_set = textcw.load_corpus(f"folder:{root}", "train")
    test_set = textcw.load_corpus(f"folder:{root}", "test")
    assert train_set.target_names == ["finance", "sport"] and train_set.name == f"folder:{root}"
    assert (len(train_set), len(test_set)) == (16, 4)
    assert np.bincount(test_set.target).tolist() == [2, 2]
    assert set(train_set.data).isdisjoint(test_set.data)
    for doc, label in zip(train_set.data, train_set.labels):
        assert ("goal" in doc) == (label == "sport")


def test_train_and_test_folders_are_the_split(tmp_path):
    root = tmp_path / "docs"
    two_topics(root / "train", 6)
    write(root, {"test/sport/a.txt": "team goal", "test/finance/b.txt": "loan bank",
                 "test/finance/deeper/c.txt": "rate market", "test/.hidden/x.txt": "ignored",
                 "test/sport/.swap": "ignored", "README": "ignored"})
    test_set = textcw.load_corpus(f"folder:{root}", "test")
    assert sorted(test_set.data) == ["loan bank", "rate market", "team goal"]
    assert len(textcw.load_corpus(f"folder:{root}", "train")) == 12


def test_undecodable_bytes_fall_back_to_latin1(tmp_path):
    root = two_topics(tmp_path / "docs")
    write(root, {"sport/legacy.txt": b"caf\xe9 goal \xff", "sport/bom.txt": b"\xef\xbb\xbfteam"})
    docs = textcw.load_corpus(f"folder:{root}", "train").data + \
        textcw.load_corpus(f"folder:{root}", "test").data
    assert "caf\xe9 goal \xff" in docs and "team" in docs
    info = textcw.load_corpus(f"folder:{root}", "train").info
    assert info["latin1_files"] == [str(root / "sport" / "legacy.txt")]


def test_empty_class_folder_is_a_clear_error(tmp_path):
    root = two_topics(tmp_path / "docs")
    (root / "weather").mkdir()
    with pytest.raises(DataError, match=r"class folder .*weather has no files"):
        textcw.load_corpus(f"folder:{root}")


@pytest.mark.parametrize("layout,message", [
    ({"only/a.txt": "x", "only/b.txt": "y"}, "has 1 class sub-folder"),
    ({"a/1.txt": "x", "a/2.txt": "y", "b/1.txt": "z"}, "class 'b' has only 1 document"),
    ({"train/a/1.txt": "x", "train/b/1.txt": "x", "test/a/1.txt": "y", "test/c/1.txt": "y"},
     "different class folders"),
])
def test_bad_layouts_are_clear_errors(tmp_path, layout, message):
    root = write(tmp_path / "docs", layout)
    with pytest.raises((DataError, InputError), match=message):
        textcw.load_corpus(f"folder:{root}")


def test_missing_folder_and_missing_path(tmp_path):
    with pytest.raises(DataError, match="not found"):
        textcw.load_corpus(f"folder:{tmp_path / 'nowhere'}")
    with pytest.raises(InputError, match="folder:PATH"):
        textcw.load_corpus("folder")


def test_added_files_are_seen(tmp_path):
    root = two_topics(tmp_path / "docs")
    before = len(textcw.load_corpus(f"folder:{root}", "train"))
    write(root, {f"sport/new{i}.txt": "goal" for i in range(5)})
    assert len(textcw.load_corpus(f"folder:{root}", "train")) == before + 4


def test_trains_end_to_end(tmp_path):
    root = two_topics(tmp_path / "docs", 20)
    result = train(f"folder:{root}", "perceptron")
    assert result.featurizer == "tfidf" and (result.n_train, result.n_test) == (32, 8)
    assert result.accuracy == 1.0
