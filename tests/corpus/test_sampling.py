"""Seeded balanced samples and stratified splits."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from textcw.corpus.sampling import balanced_sample, make_dataset, random_sample, seeded_split, take
from textcw.errors import DataError, InputError, UnknownNameError

TARGET = np.array([0] * 30 + [1] * 70)


def test_balanced_sample_draws_equal_shares_reproducibly():
    idx = balanced_sample(TARGET, 40, seed=3, names=["a", "b"])
    assert len(idx) == 40 and len(set(idx)) == 40
    assert np.bincount(TARGET[idx]).tolist() == [20, 20]
    assert np.array_equal(idx, balanced_sample(TARGET, 40, seed=3, names=["a", "b"]))
    assert not np.array_equal(idx, balanced_sample(TARGET, 40, seed=4, names=["a", "b"]))


def test_balanced_sample_refuses_a_class_too_small():
    with pytest.raises(DataError, match="class 'a' has 30 documents, fewer than the 35"):
        balanced_sample(TARGET, 70, seed=0, names=["a", "b"])


def test_random_sample():
    assert random_sample(10, None, 0).tolist() == list(range(10))
    assert random_sample(10, 50, 0).tolist() == list(range(10))
    idx = random_sample(100, 7, 1)
    assert len(idx) == 7 and np.all(np.diff(idx) > 0)


def test_split_is_disjoint_covering_and_stratified():
    train = seeded_split(TARGET, "train", seed=5)
    test = seeded_split(TARGET, "test", seed=5)
    assert (len(train), len(test)) == (80, 20)
    assert set(train).isdisjoint(test) and set(train) | set(test) == set(range(100))
    assert np.bincount(TARGET[test]).tolist() == [6, 14]
    assert not np.array_equal(test, seeded_split(TARGET, "test", seed=6))


def test_split_errors_are_clear():
    with pytest.raises(InputError, match="class 'b' has only 1 document"):
        seeded_split(np.array([0, 0, 0, 1]), "train", 0, names=["a", "b"])
    with pytest.raises(InputError, match="test_size must be between 0 and 1"):
        seeded_split(TARGET, "train", 0, test_size=1.5)
    with pytest.raises(UnknownNameError, match="^unknown split 'dev'; valid split names: test, train$"):
        seeded_split(TARGET, "dev", 0)


def _row(data, i):
    if sp.issparse(data):
        return data[i].toarray().ravel().tolist()
    return np.asarray(data[i]).tolist()


@pytest.mark.parametrize("data", [list("abcde"), np.arange(10).reshape(5, 2),
                                  sp.csr_matrix(np.arange(1, 26).reshape(5, 5))])
def test_make_dataset_orders_rows_with_their_labels(data):
    target = np.array([0, 1, 0, 1, 1])
    ds = make_dataset(data, target, ["x", "y"], name="toy:t", split="test", order_seed=2)
    order = np.random.RandomState(2).permutation(5)
    assert len(ds) == 5 and ds.name == "toy:t" and ds.split == "test"
    assert ds.target.tolist() == target[order].tolist()
    assert [_row(ds.data, i) for i in range(5)] == [_row(data, j) for j in order]
    assert [_row(take(data, [4, 0]), i) for i in range(2)] == [_row(data, 4), _row(data, 0)]
