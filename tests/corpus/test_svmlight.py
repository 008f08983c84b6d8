"""Bring your own vectors: svmlight:PATH[,TEST_PATH]."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import textcw
from textcw.corpus import svmlight
from textcw.errors import DataError, InputError
from textcw.pipeline import train

LINES = ["1 1:1 3:2.5 # a comment", "-1 2:1", "1 qid:4 1:2 4:1", "-1 2:3 4:0.5"]


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def separable(n: int) -> list[str]:
    return [f"1 1:{1 + i % 3} 3:1" if i % 2 else f"-1 2:{1 + i % 3} 4:1" for i in range(n)]


def test_two_files_give_the_split_with_one_width(tmp_path):
    a = write(tmp_path / "train.svm", LINES)
    b = write(tmp_path / "test.svm", ["1 6:1", "-1 1:1"])
    train_set = textcw.load_corpus(f"svmlight:{a},{b}", "train")
    test_set = textcw.load_corpus(f"svmlight:{a},{b}", "test")
    assert train_set.target_names == ["-1", "1"]
    assert train_set.data.shape == (4, 6) and test_set.data.shape == (2, 6)
    rows = {tuple(r.toarray().ravel()) : label for r, label in zip(train_set.data, train_set.labels)}
    assert rows[(1.0, 0.0, 2.5, 0.0, 0.0, 0.0)] == "1"  # one-based indices: 3:2.5 is column 2
    assert rows[(0.0, 3.0, 0.0, 0.5, 0.0, 0.0)] == "-1"


def test_one_file_is_split_by_class(tmp_path):
    path = write(tmp_path / "all.svm.gz", [])
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(separable(50)) + "\n")
    train_set = textcw.load_corpus(f"svmlight:{path}", "train")
    test_set = textcw.load_corpus(f"svmlight:{path}", "test")
    assert (len(train_set), len(test_set)) == (40, 10)
    assert np.bincount(test_set.target).tolist() == [5, 5]


@pytest.mark.parametrize("bad,problem", [
    ("1 1:1 x", "'x' is not index:value"),
    ("spam 1:1", "the label 'spam' is not a number"),
    ("1,2 1:1", "the label '1,2' is not a number"),
    ("1 3:1 2:1", "indices must increase along a line; '2:1' comes after index 3"),
    ("1 2:1 2:1", "indices must increase along a line"),
    ("1 2:abc", "the value in '2:abc' is not a number"),
    ("1 2.5:1", "the index in '2.5:1' is not an integer"),
    ("1 -4:1", "the index in '-4:1' is out of range"),
    ("1 2:nan", "the value in '2:nan' is not finite"),
])
def test_malformed_line_names_file_and_line(tmp_path, bad, problem):
    path = write(tmp_path / "data.svm", [*LINES[:2], "", "# comment only", bad, *LINES[2:]])
    with pytest.raises(DataError) as err:
        textcw.load_corpus(f"svmlight:{path}")
    assert str(err.value).startswith(f"{path}, line 5: {problem}")


def test_malformed_test_file_is_named(tmp_path):
    a = write(tmp_path / "a.svm", separable(10))
    b = write(tmp_path / "b.svm", ["1 1:1", "oops"])
    with pytest.raises(DataError, match=rf"{b}, line 2: the label 'oops' is not a number"):
        textcw.load_corpus(f"svmlight:{a},{b}", "test")


def test_other_bad_inputs(tmp_path):
    with pytest.raises(DataError, match="svmlight file .*missing.svm not found"):
        textcw.load_corpus(f"svmlight:{tmp_path / 'missing.svm'}")
    with pytest.raises(DataError, match="holds no documents"):
        textcw.load_corpus(f"svmlight:{write(tmp_path / 'empty.svm', ['# nothing'])}")
    with pytest.raises(DataError, match="has a single label"):
        textcw.load_corpus(f"svmlight:{write(tmp_path / 'one.svm', ['1 1:1'] * 4)}")
    with pytest.raises(InputError, match="not PATH or PATH,TEST_PATH"):
        textcw.load_corpus("svmlight:a,b,c")
    with pytest.raises(InputError, match="svmlight needs a file"):
        textcw.load_corpus("svmlight")


def test_labels_are_named_as_written(tmp_path):
    path = write(tmp_path / "labels.svm", [f"{label} 1:1" for label in
                                           ["1000000", "2.5", "-1", "1000000", "2.5", "-1"] * 2])
    assert textcw.load_corpus(f"svmlight:{path}").target_names == ["-1", "2.5", "1000000"]


def test_path_with_a_comma_is_taken_whole(tmp_path):
    path = write(tmp_path / "a,b.svm", separable(20))
    assert svmlight.split_paths(str(path)) == [str(path)]
    assert len(textcw.load_corpus(f"svmlight:{path}", "test")) == 4


def test_trains_end_to_end_with_precomputed_features(tmp_path):
    a = write(tmp_path / "train.svm", separable(60))
    b = write(tmp_path / "test.svm", [*separable(20), "1 1:1 3:1 9:7"])
    result = train(f"svmlight:{a},{b}", "pa")
    # both files are read together, so the width covers the test file's feature 9 too
    assert result.featurizer == "precomputed" and result.n_features == 9
    assert result.accuracy == 1.0
