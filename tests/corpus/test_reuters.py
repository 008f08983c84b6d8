"""Reuters-21578 ModApte: SGML parsing, published counts, the R8/R52 and pair tasks."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import textcw
from textcw.corpus import reuters
from corpus_fixtures import offline  # noqa: F401 (a pytest fixture)

SGML = """<!DOCTYPE lewis SYSTEM "lewis.dtd">
<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="5544" NEWID="1">
<DATE>26-FEB-1987 15:01:01.79</DATE>
<TOPICS><D>cocoa</D></TOPICS>
<PLACES><D>el-salvador</D></PLACES>
<TEXT>&#2;
<TITLE>BAHIA COCOA REVIEW</TITLE>
<DATELINE>    SALVADOR, Feb 26 - </DATELINE><BODY>Showers continued &lt;weekly&gt; &amp; more.
&#3;</BODY></TEXT>
</REUTERS>
<REUTERS TOPICS="NO" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="5545" NEWID="2">
<TOPICS></TOPICS><TEXT><TITLE>NO TOPICS</TITLE><BODY>skip</BODY></TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="NOT-USED" CGISPLIT="TRAINING-SET" OLDID="5546" NEWID="3">
<TOPICS><D>earn</D></TOPICS><TEXT><TITLE>NOT USED</TITLE></TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TEST" CGISPLIT="PUBLISHED-TESTSET" OLDID="5547" NEWID="4">
<TOPICS><D>grain</D><D>wheat</D></TOPICS>
<TEXT TYPE="BRIEF">&#2;
<TITLE>WHEAT BRIEF</TITLE>
&#3;</TEXT>
</REUTERS>
<REUTERS TOPICS="YES" LEWISSPLIT="TRAIN" CGISPLIT="TRAINING-SET" OLDID="5642" NEWID="99">
<TOPICS><D>money-supply</D></TOPICS>
<TEXT TYPE="UNPROC">&#2;
FEDERAL RESERVE WEEKLY REPORT
 Net free reserves.....644 vs.....1,337
&#3;</TEXT>
</REUTERS>
"""


def test_parse_sgml_keeps_modapte_documents_title_and_body():
    docs = reuters.parse_sgml(SGML)
    assert docs == [
        ("train", ["cocoa"], "BAHIA COCOA REVIEW\nShowers continued <weekly> & more."),
        ("test", ["grain", "wheat"], "WHEAT BRIEF"),
        ("train", ["money-supply"],
         "FEDERAL RESERVE WEEKLY REPORT\n Net free reserves.....644 vs.....1,337"),
    ]


@pytest.mark.corpus
@pytest.mark.usefixtures("offline")
class TestRealArchive:
    def test_modapte_counts_before_the_filter(self, data_home):
        docs = reuters.read_archive(str(data_home / "reuters" / reuters.ARCHIVE.filename))
        assert (len(docs["train"]), len(docs["test"])) == (9603, 3299)
        with_topics = [sum(1 for t, _ in docs[s] if t) for s in ("train", "test")]
        assert with_topics == [7775, 3019]
        info = textcw.load_corpus("reuters", "test").info
        assert info["modapte_documents"] == 3299

    def test_r8_is_the_published_single_label_set(self, data_home):
        train = textcw.load_corpus("reuters", "train")
        test = textcw.load_corpus("reuters:r8", "test")
        assert train.name == "reuters:r8"
        assert (len(train), len(test)) == (5485, 2189)
        assert train.target_names == ["acq", "crude", "earn", "grain", "interest", "money-fx",
                                      "ship", "trade"]
        counts = Counter(train.labels)
        assert counts["earn"] == 2840 and counts["acq"] == 1596 and counts["grain"] == 41

    def test_r52(self, data_home):
        train = textcw.load_corpus("reuters:r52", "train")
        test = textcw.load_corpus("reuters:r52", "test")
        assert (len(train), len(test), len(train.target_names)) == (6532, 2568, 52)
        assert set(np.unique(test.target)) == set(range(52))

    @pytest.mark.parametrize("task,counts", [
        ("corporate", {"train": [2861, 1634], "test": [1084, 716]}),
        ("money", {"train": [397, 206], "test": [136, 88]}),
        ("grain", {"train": [153, 122], "test": [49, 34]}),
        ("softs", {"train": [104, 119], "test": [28, 36]}),
    ])
    def test_pairs_of_neighbouring_topics(self, data_home, task, counts):
        for split, expected in counts.items():
            ds = textcw.load_corpus(f"reuters:{task}", split)
            assert ds.target_names == list(reuters.PAIRS[task])
            assert np.bincount(ds.target).tolist() == expected

    def test_documents_are_clean_text(self, data_home):
        docs = textcw.load_corpus("reuters:softs", "train").data
        assert all(isinstance(d, str) and d for d in docs)
        assert not any("&#" in d or "\x03" in d or "<BODY>" in d for d in docs)
