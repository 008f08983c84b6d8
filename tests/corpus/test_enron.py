"""Enron foldering loader on the synthetic CMU-maildir fixture."""

from __future__ import annotations

import tarfile

import numpy as np
import pytest

import textcw
from textcw.corpus import enron
from textcw.errors import DataError, InputError
from corpus_fixtures import fixture_home  # noqa: F401 (a pytest fixture)

FARMER = ["logistics", "wellhead", "tufco", "personal", "entex", "industrials", "aep", "ces",
          "bammel", "kinder"]


@pytest.fixture
def home(fixture_home):
    return fixture_home("enron") / "enron"


def test_ten_largest_archival_folders(home):
    train = textcw.load_corpus("enron:farmer-d", "train")
    test = textcw.load_corpus("enron:farmer-d", "test")
    assert train.target_names == FARMER  # inbox, sent, ... dropped; dominion, calpine too small
    assert train.info["folder_sizes"]["logistics"] == 9  # 2 of them in logistics/tenaska
    assert (len(train), len(test)) == (43, 11)  # 54 messages
    assert np.bincount(np.concatenate([train.target, test.target])).tolist() == \
        [9, 8, 7, 6, 5, 5, 4, 4, 3, 3]


def test_second_user_and_sampling(home):
    train = textcw.load_corpus("enron:kaminski-v", "train")
    assert train.target_names[:2] == ["resumes", "projects"] and "trips" not in train.target_names
    assert "inbox" not in train.target_names and len(train.target_names) == 10
    small = textcw.load_corpus("enron:kaminski-v", "test", sample_size=50)
    assert len(small) == 10 and len(textcw.load_corpus("enron:kaminski-v", sample_size=50)) == 40


def test_documents_keep_subject_and_body_but_not_the_folder_headers(home):
    docs = textcw.load_corpus("enron:farmer-d", "train").data + \
        textcw.load_corpus("enron:farmer-d", "test").data
    personal1 = [d for d in docs if d.startswith("Subject: personal update 1\n")]
    assert personal1 == ["Subject: personal update 1\nFrom: farmer@enron.com\n"
                         "To: pat.clynes@enron.com\nNotes about personal item 1.\n"
                         "The personal numbers for week 1 are attached.\nCaf\xe9 at noon?\n"]
    assert not any("X-Folder" in d or "Notes Folders" in d or "Message-ID" in d for d in docs)


def test_folder_names_are_compared_loosely():
    assert enron.folder_key("_sent_mail") == "sent mail" in enron.NON_ARCHIVAL
    assert enron.folder_key("Deleted_Items") == "deleted items" in enron.NON_ARCHIVAL
    assert enron.largest_folders({"inbox": [1] * 9, "b": [1] * 2, "a": [1] * 2, "c": [1]}, 2) == ["a", "b"]


def test_user_is_required(home):
    with pytest.raises(InputError, match="enron:farmer-d or enron:kaminski-v"):
        textcw.load_corpus("enron")


def test_truncated_or_foreign_archive_is_a_clear_error(home):
    path = home / enron.ARCHIVE.filename
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match="cannot read .*enron_mail_20150507.tar.gz"):
        textcw.load_corpus("enron:farmer-d")
    with tarfile.open(path, "w:gz") as tar:  # a valid archive without a maildir
        tar.add(__file__, arcname="notes/readme.txt")
    with pytest.raises(DataError, match="no maildir/farmer-d/<folder>/<message> files"):
        textcw.load_corpus("enron:kaminski-v")


def test_missing_archive_is_not_downloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
    with pytest.raises(DataError, match="no pinned digest .*https://www.cs.cmu.edu/~enron/"):
        textcw.load_corpus("enron:farmer-d")
