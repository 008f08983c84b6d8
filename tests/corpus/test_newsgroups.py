"""20 Newsgroups read from the real bydate archive (needs $TEXTCW_DATA)."""

from __future__ import annotations

import hashlib
import shutil
from collections import Counter

import pytest

import textcw
from textcw.corpus import newsgroups
from textcw.errors import DataError

pytestmark = pytest.mark.corpus


def test_published_counts(data_home):
    train = textcw.load_corpus("newsgroups", "train")
    test = textcw.load_corpus("newsgroups", "test")
    assert (len(train), len(test)) == (11314, 7532)
    assert len(train.target_names) == 20 and train.target_names == test.target_names
    counts = Counter(train.labels)
    assert counts["alt.atheism"] == 480 and counts["talk.religion.misc"] == 377
    assert Counter(test.labels)["comp.graphics"] == 389
    assert all(isinstance(doc, str) and doc for doc in train.data[:50])


@pytest.mark.parametrize("task,train_size,test_size", [("comp", 1168, 777), ("sci", 1185, 789), ("talk", 1110, 740)])
def test_binary_pairs(data_home, task, train_size, test_size):
    train = textcw.load_corpus(f"newsgroups:{task}", "train")
    test = textcw.load_corpus(f"newsgroups:{task}", "test")
    assert (len(train), len(test)) == (train_size, test_size)
    assert train.target_names == list(newsgroups.PAIRS[task])
    assert set(train.target) == {0, 1}
    assert train.name == f"newsgroups:{task}"


def test_order_is_seeded_and_mixes_classes(data_home):
    a = textcw.load_corpus("newsgroups:comp", "train")
    b = textcw.load_corpus("newsgroups:comp", "train")
    c = textcw.load_corpus("newsgroups:comp", "train", order_seed=1)
    assert a.data == b.data and a.data != c.data and sorted(a.data) == sorted(c.data)
    assert 0 < sum(a.target[:100]) < 100  # not grouped by class


def test_corrupt_archive_is_refused(data_home, tmp_path, monkeypatch):
    folder = tmp_path / "newsgroups"
    folder.mkdir()
    original = data_home / "newsgroups" / newsgroups.ARCHIVE.filename
    copy = folder / original.name
    shutil.copyfile(original, copy)
    with open(copy, "r+b") as fh:
        fh.truncate(original.stat().st_size // 2)
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
    with pytest.raises(DataError) as err:
        textcw.load_corpus("newsgroups:comp")
    message = str(err.value)
    assert str(copy) in message and hashlib.sha256(copy.read_bytes()).hexdigest() in message
    assert all(d in message for d in newsgroups.ARCHIVE.sha256)  # both digests shown


def test_missing_archive_names_file_and_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
    # Tests run offline (tests/conftest.py): the missing archive is an error, not a download.
    with pytest.raises(DataError) as err:
        textcw.load_corpus("newsgroups")
    message = str(err.value)
    assert message.startswith(f"corpus file 20news-bydate.tar.gz not found in {tmp_path / 'newsgroups'} "
                              "and TEXTCW_OFFLINE=1; put 20news-bydate.tar.gz")
    assert message.endswith("or set TEXTCW_DATA to the folder that holds newsgroups/20news-bydate.tar.gz")
    folder = tmp_path / "newsgroups"
    assert not folder.exists() or list(folder.iterdir()) == []  # nothing written
