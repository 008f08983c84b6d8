"""Amazon multi-domain sentiment, processed_acl: parsing, published counts, tasks, bad archives."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import shutil
import tarfile

import numpy as np
import pytest

import textcw
from textcw.corpus import amazon
from textcw.corpus.datahome import RemoteFile
from textcw.errors import DataError, UnknownNameError
from corpus_fixtures import offline  # noqa: F401 (a pytest fixture)


def test_parse_line_reads_counts_and_label():
    features, label = amazon.parse_line("great_book:2 a:1 <num>_stars:1 #label#:positive", "x")
    assert features == {"great_book": 2, "a": 1, "<num>_stars": 1} and label == "positive"


@pytest.mark.parametrize("line,problem", [
    ("good:1 bad #label#:negative", "token 'bad' is not feature:count"),
    ("good:x #label#:negative", "token 'good:x' is not feature:count"),
    ("good:1 bad:2", "no #label#:positive or #label#:negative"),
])
def test_parse_line_errors_say_where(line, problem):
    with pytest.raises(DataError, match=f"books/positive.review, line 7: {problem}"):
        amazon.parse_line(line, "books/positive.review, line 7")


def test_tasks_are_named_and_unknown_ones_refused():
    assert set(amazon.TASKS) == {"domains", "books", "dvd", "electronics", "kitchen",
                                 *(f"{a}-vs-{b}" for a, b in amazon.PAIRS.values())}
    assert len(amazon.PAIRS) == 6
    with pytest.raises(UnknownNameError, match="amazon:books-vs-dvd"):
        textcw.load_corpus("amazon:music")


@pytest.mark.corpus
@pytest.mark.usefixtures("offline")
class TestRealArchive:
    def test_published_counts(self, data_home):
        reviews = amazon.read_archive(str(data_home / "amazon" / amazon.ARCHIVE.filename))
        assert sorted(reviews) == [(d, s) for d in amazon.DOMAINS for s in amazon.SENTIMENTS]
        assert all(len(docs) == 1000 for docs in reviews.values())  # 4 x (1,000 + 1,000)
        first = reviews[("books", "positive")][0]  # the file's first line
        assert len(first) == 270 and sum(first.values()) == 307
        assert first["holes"] == 1 and first["top_secret"] == 1 and first["<num>_feet"] == 2
        kitchen = reviews[("kitchen", "negative")][0]
        assert len(kitchen) == 133 and kitchen["well"] == 2 and kitchen["i_guess"] == 1

    @pytest.mark.parametrize("task,names,sizes", [
        ("books", ["negative", "positive"], (1600, 400)),
        ("kitchen", ["negative", "positive"], (1600, 400)),
        ("domains", list(amazon.DOMAINS), (6400, 1600)),
        ("dvd-vs-kitchen", ["dvd", "kitchen"], (3200, 800)),
    ])
    def test_tasks(self, data_home, task, names, sizes):
        train = textcw.load_corpus(f"amazon:{task}", "train")
        test = textcw.load_corpus(f"amazon:{task}", "test")
        assert (len(train), len(test)) == sizes
        assert train.target_names == names == test.target_names
        share = sizes[1] // len(names)  # stratified: every class has its share of the test split
        assert np.bincount(test.target).tolist() == [share] * len(names)
        assert all(isinstance(d, dict) for d in train.data[:10])

    def test_split_is_seeded_and_disjoint(self, data_home):
        # The archive has a few duplicate reviews, so compare the review objects, not contents.
        train = {id(d) for d in textcw.load_corpus("amazon:books", "train").data}
        test = {id(d) for d in textcw.load_corpus("amazon:books", "test").data}
        other = {id(d) for d in textcw.load_corpus("amazon:books", "test", seed=1).data}
        assert len(train | test) == 2000 and not train & test and test != other
        assert textcw.load_corpus("amazon").name == "amazon:domains"

    def test_truncated_archive_is_a_clear_error(self, data_home, tmp_path, monkeypatch):
        copy = tmp_path / "amazon" / amazon.ARCHIVE.filename
        copy.parent.mkdir()
        shutil.copyfile(data_home / "amazon" / amazon.ARCHIVE.filename, copy)
        with open(copy, "r+b") as fh:
            fh.truncate(copy.stat().st_size // 3)
        monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
        with pytest.raises(DataError) as err:
            textcw.load_corpus("amazon:books")
        message = str(err.value)
        assert hashlib.sha256(copy.read_bytes()).hexdigest() in message
        assert amazon.ARCHIVE.sha256[0] in message and "not a readable archive" in message
        # Even when the digest is taken as known (a repack nobody pinned members for),
        # reading the truncated archive fails cleanly.
        digest = hashlib.sha256(copy.read_bytes()).hexdigest()
        monkeypatch.setattr(amazon, "ARCHIVE", dataclasses.replace(amazon.ARCHIVE, sha256=(digest,)))
        amazon.read_archive.cache_clear()
        with pytest.raises(DataError, match="cannot read .*delete it and download it again"):
            textcw.load_corpus("amazon:books")
        assert sorted(p.name for p in copy.parent.iterdir()) == [amazon.ARCHIVE.filename]

    def test_archive_with_the_same_reviews_and_more_is_accepted(self, data_home, tmp_path,
                                                                monkeypatch):
        # Like the canonical archive: the same labeled files plus unlabeled ones, other bytes.
        out = tmp_path / "amazon" / amazon.ARCHIVE.filename
        out.parent.mkdir()
        with tarfile.open(data_home / "amazon" / amazon.ARCHIVE.filename) as src, \
                tarfile.open(out, "w:gz") as dst:
            for member in src:
                dst.addfile(member, src.extractfile(member) if member.isfile() else None)
            extra = b"unlabeled_words:1 #label#:positive\n"
            info = tarfile.TarInfo("processed_acl/books/unlabeled.review")
            info.size = len(extra)
            dst.addfile(info, io.BytesIO(extra))
        monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
        assert hashlib.sha256(out.read_bytes()).hexdigest() not in amazon.ARCHIVE.sha256
        assert len(textcw.load_corpus("amazon:books", "test")) == 400

    def test_missing_archive_names_the_file(self, tmp_path, monkeypatch):
        monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
        with pytest.raises(DataError, match="processed_acl.tar.gz not found in .*TEXTCW_OFFLINE=1"):
            textcw.load_corpus("amazon:books")
        assert isinstance(amazon.ARCHIVE, RemoteFile) and not (tmp_path / "amazon").exists()
