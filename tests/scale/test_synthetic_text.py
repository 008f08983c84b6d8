"""The seeded synthetic text corpus: tasks, determinism, ranges, streaming."""

from __future__ import annotations

import numpy as np
import pytest

import textcw
from textcw.corpus import synthetic_text as st
from textcw.errors import InputError


@pytest.mark.parametrize("task,expected", [
    (None, (10_000, 2)), ("5000", (5000, 2)), ("100_000", (100_000, 2)), ("1e6", (1_000_000, 2)),
    ("10^6", (1_000_000, 2)), ("2000:4", (2000, 4)), ("1.5e3:3", (1500, 3)),
])
def test_task_names(task, expected):
    assert st.parse_task(task) == expected


@pytest.mark.parametrize("task", ["abc", "0", "-5", "1.5e0", "100:1", "100:x", "1:2:3", "100:"])
def test_bad_task_names_say_what_a_task_is(task):
    with pytest.raises(InputError, match="synthetic-text:N"):
        st.parse_task(task)
    with pytest.raises(InputError):
        textcw.load_corpus(f"synthetic-text:{task}")


def test_loaded_through_the_registry_with_both_splits():
    train = textcw.load_corpus("synthetic-text:3000")
    test = textcw.load_corpus("synthetic-text:3000", split="test")
    assert (len(train), len(test)) == (3000, 600)
    assert train.target_names == ["neg", "pos"] and train.name == "synthetic-text:3000"
    assert all(isinstance(doc, str) and len(doc.split()) >= st.MIN_LENGTH for doc in train.data)
    assert train.data[:50] != test.data[:50]
    # Balanced classes and a learnable, not trivial, labelling.
    assert 0.4 < train.target.mean() < 0.6
    assert len(textcw.load_corpus("synthetic-text:10^6", split="test")) == 10_000


def test_multiclass_task():
    data = textcw.load_corpus("synthetic-text:4000:4")
    assert data.target_names == ["c0", "c1", "c2", "c3"]
    assert np.bincount(data.target, minlength=4).min() > 600


def test_same_seed_same_documents_other_seed_other_documents():
    a = st.load("1500")
    b = st.load("1500")
    c = st.load("1500", seed=1)
    assert a.data == b.data and np.array_equal(a.target, b.target)
    assert a.data != c.data


def test_any_range_in_any_chunking_is_the_same_documents():
    whole = st.load("5000")
    for start, stop, chunk in [(0, 5000, 777), (1234, 3456, 1000), (999, 1001, 1), (4999, 5000, 10)]:
        parts = list(st.stream("5000", start=start, stop=stop, chunk_size=chunk))
        assert all(len(p) <= chunk for p in parts)
        assert [d for p in parts for d in p.data] == whole.data[start:stop]
        assert np.array_equal(np.concatenate([p.target for p in parts]), whole.target[start:stop])


def test_a_million_documents_need_no_materialising():
    # Reading the last documents of a 10**6 stream touches only their block.
    tail = list(st.stream("1e6", start=999_990, stop=1_000_000))
    assert sum(len(p) for p in tail) == 10 and st.size("1e6") == 1_000_000
    with pytest.raises(InputError, match="--stream"):
        st.load("1e7")


def test_noise_flips_the_stated_share_of_labels():
    clean = st.load("20000", noise=0.0)
    noisy = st.load("20000", noise=0.2)
    assert clean.data == noisy.data
    assert abs(np.mean(clean.target != noisy.target) - 0.2) < 0.02
    with pytest.raises(InputError, match="noise"):
        st.load("100", noise=1.5)


def test_bad_ranges_are_refused():
    with pytest.raises(InputError, match="cannot read documents"):
        list(st.stream("100", start=50, stop=200))
    with pytest.raises(InputError, match="chunk_size"):
        list(st.stream("100", chunk_size=0))
