"""The labels of a chunk: ``distinct_labels`` equals ``np.unique`` for labels of one type."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.errors import InputError
from textcw.learners.passive_aggressive import PassiveAggressiveI
from textcw.learners.inputs import distinct_labels, unknown_labels
from tests.sparse_data import random_sparse

CASES = [
    np.array(["b", "a", "c", "a"], dtype=object),
    np.array(["sci.med", "comp.graphics"] * 50, dtype=object),
    np.array([3, 1, 2, 3], dtype=object),
    np.array([1.5, -2.0, 1.5], dtype=object),
    np.array([True, False, True], dtype=object),
    np.array(["x", "y"]),  # not object: np.unique itself
    np.array([2, 0, 2]),
    np.array(["only"], dtype=object),
]


@pytest.mark.parametrize("y", CASES, ids=lambda y: f"{y.dtype}-{y.tolist()[:2]}")
def test_distinct_labels_equal_numpy_unique(y):
    got, want = distinct_labels(y), np.unique(y)
    assert got.dtype == want.dtype
    assert got.tolist() == want.tolist()


def test_mixed_label_types_raise_as_numpy_does():
    y = np.array(["a", 1], dtype=object)
    with pytest.raises(TypeError):
        np.unique(y)
    with pytest.raises(TypeError):
        distinct_labels(y)


def test_a_later_chunk_with_mixed_labels_is_refused_with_the_message():
    X = random_sparse(40, 30, 0.2, seed=0)
    labels = np.array(["a", "b"] * 20, dtype=object)
    model = PassiveAggressiveI().partial_fit(X[:20], labels[:20], classes=np.array(["a", "b"], dtype=object))
    mixed = labels[20:].copy()
    mixed[0] = 7
    with pytest.raises(InputError, match="mixes label types"):
        model.partial_fit(X[20:], mixed)


@pytest.mark.parametrize("labels, classes", [
    (np.array(["b"], dtype=object), np.array(["a", "b", "c"], dtype=object)),
    (np.array(["a", "z"], dtype=object), np.array(["a", "b", "c"], dtype=object)),
    (np.array(["0"], dtype=object), np.array(["a", "b"], dtype=object)),  # before every class
    (np.array(["zz", "zz"], dtype=object), np.array(["a", "b"], dtype=object)),  # after every class
    (np.array([3, 9, -1]), np.arange(5)),
    (np.array([1.5]), np.array([0.0, 1.0])),
    (np.array([True]), np.array([False])),
    (np.array([1]), np.array(["1", "2"], dtype=object)),  # another type: never a class
    (np.array(["a"], dtype=object), np.array([], dtype=object)),
    (np.array(["b", "c"]), np.array(["a", "b", "c"], dtype=object)),  # text labels, a model's object classes
    (np.array(["b", "zz"]), np.array(["a", "b"], dtype=object)),
    (np.array(["1"]), np.array([1, 2], dtype=object)),  # text labels, integer classes kept as objects
    (np.array(["b"]), np.array(["a", "bbb"])),  # <U1 labels, <U3 classes
    (np.array(["bbb", "a"]), np.array(["a", "bbb"])),
    (np.array([3, 9], dtype=np.int32), np.arange(5)),  # int32 labels, int64 classes
])
def test_unknown_labels_are_numpy_setdiff1d(labels, classes):
    got, want = unknown_labels(labels, classes), np.setdiff1d(labels, classes)
    assert got.tolist() == want.tolist()


def test_unknown_labels_match_setdiff1d_on_random_label_sets():
    rng = np.random.default_rng(7)
    for _ in range(300):
        classes = np.unique(rng.integers(0, 30, size=rng.integers(1, 12)))
        labels = rng.integers(0, 30, size=rng.integers(1, 6))
        as_text = np.array([f"c{v:02d}" for v in labels], dtype=object)
        text_classes = np.array([f"c{v:02d}" for v in classes], dtype=object)
        assert unknown_labels(labels, classes).tolist() == np.setdiff1d(labels, classes).tolist()
        assert unknown_labels(as_text, text_classes).tolist() == np.setdiff1d(as_text, text_classes).tolist()
