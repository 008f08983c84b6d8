"""reuters:modapte, the multi-label ModApte task (90 topics), on the real archive."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import textcw
from textcw.corpus import reuters
from textcw.corpus.multilabel import MultiLabelDataset, make_multilabel_dataset
from textcw.errors import InputError


@pytest.fixture
def offline(monkeypatch):
    monkeypatch.setenv("TEXTCW_OFFLINE", "1")


@pytest.mark.corpus
@pytest.mark.usefixtures("offline")
def test_modapte_90_counts_and_topics(data_home):
    train = textcw.load_corpus("reuters:modapte", "train")
    test = textcw.load_corpus("reuters:modapte", "test")
    assert isinstance(train, MultiLabelDataset) and train.multilabel
    # 90 topics; 3,019 test documents as published. The archive gives 7,770 training documents
    # where 7,769 is usually quoted (one document more; the topics and test documents agree).
    assert len(train.target_names) == 90 and train.target_names == test.target_names
    assert (len(train), len(test)) == (7770, 3019)
    assert train.target.shape == (7770, 90) and test.target.shape == (3019, 90)
    assert train.target.sum(axis=1).min() == 1 and test.target.sum(axis=1).min() == 1
    counts = dict(zip(train.target_names, train.target.sum(axis=0).tolist()))
    # the ApteMod training counts of the largest topics
    assert [counts[t] for t in ("earn", "acq", "money-fx", "grain", "crude", "trade")] == \
        [2877, 1650, 538, 433, 389, 369]
    assert min(counts.values()) == 1 and min(test.target.sum(axis=0)) >= 1
    assert (train.target.sum() + test.target.sum()) == 13329  # 1.235 topics per document
    assert all(set(labels) <= set(train.target_names) for labels in train.labels[:50])


@pytest.mark.corpus
@pytest.mark.usefixtures("offline")
def test_modapte_order_is_seeded_and_labels_follow_documents(data_home):
    a = textcw.load_corpus("reuters:modapte", "test")
    b = reuters.load("modapte", "test", order_seed=1)
    assert a.data != b.data
    assert Counter(zip(a.data, a.labels)) == Counter(zip(b.data, b.labels))


def test_make_multilabel_dataset_checks_labels():
    data = make_multilabel_dataset(["a b", "c", "d"], [["x"], ["x", "y"], []], ["x", "y"], name="t",
                                   split="train", order_seed=None)
    assert data.target.tolist() == [[1, 0], [1, 1], [0, 0]]
    assert data.labels == [("x",), ("x", "y"), ()]
    assert "3 documents, 2 labels, 1.000 labels per document" in data.DESCR
    with pytest.raises(InputError, match="document 0 has the label 'z'"):
        make_multilabel_dataset(["a"], [["z"]], ["x"], name="t", split="train")
    assert np.array_equal(make_multilabel_dataset(["a", "b"], [["x"], []], ["x"], name="t", split="test",
                                                  order_seed=3).target.sum(axis=0), [1])
