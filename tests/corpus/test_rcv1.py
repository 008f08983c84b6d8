"""RCV1-v2 (LYRL2004) loader on the synthetic fixtures in the published formats."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import textcw
from textcw.corpus import rcv1
from textcw.errors import DataError
from corpus_fixtures import fixture_home  # noqa: F401 (a pytest fixture)


@pytest.fixture
def home(fixture_home):
    return fixture_home("rcv1") / "rcv1"


def test_token_file_is_read_exactly(home):
    texts = rcv1.read_tokens(str(home / "lyrl2004_tokens_train.dat.gz"), {2286, 2313, 99})
    assert texts == {
        2286: "life polici annuiti insur premium compani profit doc2286",
        2313: "broker fund asset invest advis market price doc2313",
    }


def test_qrels_are_read_exactly(home):
    topics = rcv1.read_qrels(str(home / "rcv1-v2.topics.qrels.gz"), rcv1.TOPICS)
    assert topics[2286] == {"CCAT"}  # C15 is not asked for
    assert topics[2291] == {"ECAT", "MCAT"}
    industries = rcv1.read_qrels(str(home / "rcv1-v2.industries.qrels.gz"), ("I82002", "I82003"))
    assert industries[2289] == {"I82002", "I82003"} and len(industries) == 16


def test_topics_task(home):
    train = textcw.load_corpus("rcv1", "train")
    test = textcw.load_corpus("rcv1:topics", "test")
    assert train.name == "rcv1:topics" and train.target_names == list(rcv1.TOPICS)
    # 52 documents, 6 of them with two top-level topics: 46 = 36 + 10
    assert (len(train), len(test)) == (36, 10)
    assert not {d for d in train.data + test.data if "economi inflat market price" in d}


def test_pair_task_is_a_balanced_sample_without_double_labelled_documents(home):
    train = textcw.load_corpus("rcv1:insurance", "train", sample_size=14)
    test = textcw.load_corpus("rcv1:insurance", "test", sample_size=14)
    assert train.target_names == ["I82002", "I82003"]
    assert np.bincount(np.concatenate([train.target, test.target])).tolist() == [7, 7]
    assert (len(train), len(test)) == (11, 3)
    assert "doc2289" not in " ".join(train.data + test.data)  # carries both codes
    for doc, label in zip(train.data, train.labels):
        assert ("life polici" in doc) == (label == "I82002")
    # I82002 has only 7 single-code documents: 16 cannot be balanced
    with pytest.raises(DataError, match="class 'I82002' has 7 documents, fewer than the 8"):
        textcw.load_corpus("rcv1:insurance", sample_size=16)


def test_documents_come_from_every_token_file(home):
    docs = textcw.load_corpus("rcv1", "train").data + textcw.load_corpus("rcv1", "test").data
    ids = {int(doc.rsplit("doc", 1)[1]) for doc in docs}
    for low, high in [(2286, 26150), (30000, 30006), (300000, 300006), (500000, 500006),
                      (700000, 700006)]:
        assert any(low <= i < high for i in ids)


def test_missing_files_are_named_together(home):
    (home / "lyrl2004_tokens_test_pt1.dat.gz").unlink()
    (home / "lyrl2004_tokens_test_pt3.dat.gz").unlink()
    with pytest.raises(DataError) as err:
        textcw.load_corpus("rcv1:business")
    message = str(err.value)
    assert "lyrl2004_tokens_test_pt1.dat.gz, lyrl2004_tokens_test_pt3.dat.gz not found in" in message
    assert "does not download them" in message and rcv1.HOMEPAGE in message


def test_malformed_token_file_names_the_line(home):
    with gzip.open(home / "lyrl2004_tokens_test_pt2.dat.gz", "wt") as fh:
        fh.write(".I 500000\n.W\nsome token\n\n.I five\n.W\nmore\n")
    with pytest.raises(DataError, match=r"lyrl2004_tokens_test_pt2.dat.gz, line 5: expected '.I <docid>'"):
        textcw.load_corpus("rcv1:retail", sample_size=10)


def test_corrupt_qrels_are_a_clear_error(home):
    (home / "rcv1-v2.topics.qrels.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(DataError, match="cannot read .*rcv1-v2.topics.qrels.gz"):
        textcw.load_corpus("rcv1:topics")
