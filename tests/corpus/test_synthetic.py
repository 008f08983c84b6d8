"""The ``synthetic`` corpus: the 20-d data of NIPS 2008 section 5 and MLJ 2013 section 5.2."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.corpus.synthetic import load, make_synthetic
from textcw.errors import UnknownNameError
from textcw.pipeline import default_featurizer, load_corpus, train


def test_geometry_matches_the_papers():
    X, y = make_synthetic(200_000, random_state=0)
    assert X.shape == (200_000, 20) and set(np.unique(y)) == {-1, 1}
    # the first two coordinates: a Gaussian rotated by 45 degrees, sd 1 along the long axis
    # (1, 1)/sqrt(2) and 0.5 across it; the label is the side of the long axis
    along = (X[:, 0] + X[:, 1]) / np.sqrt(2)
    across = (X[:, 1] - X[:, 0]) / np.sqrt(2)
    assert np.std(along) == pytest.approx(1.0, rel=0.01)
    assert np.std(across) == pytest.approx(0.5, rel=0.01)
    np.testing.assert_array_equal(y, np.where(across > 0, 1, -1))  # linearly separable
    # 18 independent N(0, 2) noise coordinates (variance 2)
    np.testing.assert_allclose(np.var(X[:, 2:], axis=0), 2.0, rtol=0.02)
    assert np.abs(np.corrcoef(X.T)[2:, :][:, 2:] - np.eye(18)).max() < 0.02
    assert np.mean(y == 1) == pytest.approx(0.5, abs=0.01)


def test_seeded_and_noise_flips_only_labels():
    X1, y1 = make_synthetic(5000, random_state=3)
    X2, y2 = make_synthetic(5000, random_state=3)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    Xn, yn = make_synthetic(5000, noise=0.1, random_state=3)
    np.testing.assert_array_equal(Xn, X1)  # the same points with and without noise
    assert np.mean(yn != y1) == pytest.approx(0.1, abs=0.015)
    assert not np.array_equal(make_synthetic(10, random_state=4)[0], X1[:10])
    with pytest.raises(ValueError, match="noise must be in"):
        make_synthetic(10, noise=1.0)


def test_tasks_and_splits():
    train_clean = load(split="train", n_train=2000)
    train_noisy = load("noise10", split="train", n_train=2000)
    test_noisy = load("noise10", split="test", n_test=3000)
    test_clean = load("synthetic", split="test", n_test=3000)
    assert train_clean.name == "synthetic" and train_noisy.name == "synthetic:noise10"
    assert len(train_clean) == 2000 and len(test_noisy) == 3000
    assert train_clean.target_names == ["negative", "positive"]
    np.testing.assert_array_equal(np.vstack(train_clean.data), np.vstack(train_noisy.data))
    flipped = np.mean(train_clean.target != train_noisy.target)
    assert 0.08 < flipped < 0.12
    # test labels stay clean, and the test split is a different draw from the training split
    np.testing.assert_array_equal(test_noisy.target, test_clean.target)
    assert not np.array_equal(np.vstack(test_clean.data)[:10], np.vstack(train_clean.data)[:10])
    assert set(train_clean.labels) == {"negative", "positive"}


def test_registered_with_its_tasks_and_featurizer():
    assert default_featurizer("synthetic") == "precomputed"
    data = load_corpus("synthetic:noise10", "train")
    assert len(data) == 5000 and data.info["noise"] == 0.1
    assert len(load_corpus("synthetic", "test")) == 10_000
    with pytest.raises(UnknownNameError, match="synthetic:noise10"):
        load_corpus("synthetic:noise20")


def test_trains_through_the_pipeline():
    result = train("synthetic", "arow", params={"covariance": "full"}, epochs=1)
    assert result.n_features == 20 and result.accuracy > 0.95
