"""Task pools and folds: disjoint, covering, stratified, seeded; the official split kept."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.errors import InputError, ParameterError
from textcw.evaluation.data import concat, dev_split, featurize, fold_indices, load_task
from textcw.evaluation.specs import LearnerSpec, TaskSpec


def test_pool_concatenates_train_and_test(regs):
    task = load_task(TaskSpec("toy:binary"))
    assert len(task) == 240 + 120 and task.data.shape == (360, 30)


def test_folds_disjoint_covering_and_stratified(regs):
    task = load_task(TaskSpec("toy:multi"))
    folds = fold_indices(task, 5, seed=3)
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests) == list(range(len(task)))                       # every document tested once
    for tr, te in folds:
        assert not set(tr) & set(te) and len(tr) + len(te) == len(task)   # disjoint, complementary
        share = np.bincount(task.target[te], minlength=3)
        expected = np.bincount(task.target, minlength=3) / 5
        assert np.all(np.abs(share - expected) <= 1)                      # stratified to within one
    again = fold_indices(task, 5, seed=3)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))  # seeded
    other = fold_indices(task, 5, seed=4)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))


def test_balanced_sample(regs):
    task = load_task(TaskSpec("toy:binary", sample=100))
    assert len(task) == 100 and list(np.bincount(task.target)) == [50, 50]


def test_split_protocol_keeps_the_official_split(regs):
    task = load_task(TaskSpec("toy:binary", protocol="split"))
    [(tr, te)] = fold_indices(task, 10, 0)
    assert list(tr) == list(range(240)) and list(te) == list(range(240, 360))
    tr2, dev = dev_split(task, 0.1, 0)
    assert set(tr2) | set(dev) == set(range(240))                         # tuning never sees the test split


def test_too_few_documents_for_the_folds(regs):
    task = load_task(TaskSpec("toy:tiny"))
    with pytest.raises(InputError, match="fewer than the 5 folds"):
        fold_indices(task, 5, 0)
    with pytest.raises(InputError, match="at least 2 folds"):
        fold_indices(task, 1, 0)


def test_featurizer_fitted_on_training_rows_only(regs):
    task = load_task(TaskSpec("toy:binary"))
    X_train, X_test = featurize(task, np.arange(10), np.arange(10, 20))
    assert X_train.shape == (10, 30) and X_test.shape == (10, 30)


def test_concat_kinds():
    import scipy.sparse as sp

    assert concat([1, 2], [3]) == [1, 2, 3]
    assert concat(np.ones((2, 3)), np.zeros((1, 3))).shape == (3, 3)
    wide = concat(sp.csr_matrix(np.ones((1, 2))), sp.csr_matrix(np.ones((1, 4))))
    assert wide.shape == (2, 4) and wide.nnz == 6


def test_specs_parse_and_validate():
    spec = LearnerSpec.parse("cw-var:covariance=diag-l2:eta=0.9")
    assert spec.name == "cw-var" and spec.params == {"covariance": "diag-l2", "eta": 0.9}
    assert spec.label == "cw-var:covariance=diag-l2:eta=0.9"
    assert LearnerSpec("cw-var", {"eta": 0.9}).label == "cw-var:eta=0.9"
    with pytest.raises(ParameterError, match="KEY=VALUE"):
        LearnerSpec.parse("cw-var:eta")
    with pytest.raises(ParameterError, match="protocol"):
        TaskSpec("toy", protocol="bootstrap")
    with pytest.raises(ParameterError, match="sample"):
        TaskSpec("toy", sample=1)
