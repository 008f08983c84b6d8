"""Label noise: the rate actually applied, other labels only, test labels clean."""

from __future__ import annotations

import numpy as np
import pytest
from textcw.plugins import use_registries
from toy_corpus import registries

import textcw

from textcw.errors import ParameterError
from textcw.evaluation.cv import cross_validate
from textcw.evaluation.data import fold_indices, load_task
from textcw.evaluation.noise import corrupt_labels
from textcw.evaluation.specs import LearnerSpec, TaskSpec


def test_binary_flip_rate_and_direction():
    classes = np.array(["neg", "pos"], dtype=object)
    y = np.where(np.random.default_rng(0).random(20000) < 0.5, "neg", "pos").astype(object)
    noisy, flipped = corrupt_labels(y, 0.3, classes, np.random.RandomState(1))
    # 20,000 Bernoulli(0.3) draws: standard deviation of the rate is 0.0032
    assert abs(flipped.mean() - 0.3) < 0.01
    assert np.all(noisy[flipped] != y[flipped]) and np.all(noisy[~flipped] == y[~flipped])
    assert np.array_equal(noisy != y, flipped)


def test_multiclass_replaced_by_a_uniform_other_label():
    classes = np.array([0, 1, 2, 3])
    y = np.zeros(40000, dtype=int)
    noisy, flipped = corrupt_labels(y, 0.5, classes, np.random.RandomState(2))
    assert abs(flipped.mean() - 0.5) < 0.01
    assert np.all(noisy[flipped] != 0)
    shares = np.bincount(noisy[flipped], minlength=4)[1:] / flipped.sum()
    assert np.allclose(shares, 1 / 3, atol=0.015)


def test_zero_noise_and_bad_rates():
    y = np.array([0, 1, 1, 0])
    noisy, flipped = corrupt_labels(y, 0.0, np.array([0, 1]), np.random.RandomState(0))
    assert not flipped.any() and np.array_equal(noisy, y)
    for p in (-0.1, 1.0, "x", True):
        with pytest.raises(ParameterError, match="noise"):
            corrupt_labels(y, p, np.array([0, 1]), np.random.RandomState(0))


class Recorder:
    """A perceptron that records the labels each fit sees."""

    seen: list = []

    def __init__(self, **params):
        from textcw.learners.perceptron import Perceptron

        self.inner = Perceptron(**params)

    def get_params(self, deep=False):
        return self.inner.get_params(deep)

    def set_params(self, **params):
        self.inner.set_params(**params)
        return self

    def fit(self, X, y):
        Recorder.seen.append(np.asarray(y).copy())
        self.inner.fit(X, y)
        return self

    def predict(self, X):
        return self.inner.predict(X)


class RecorderPlugin:
    @textcw.hookimpl
    def register_learners(self, register):
        register("recorder", Recorder, summary="records the labels it is trained on")


def test_cv_flips_training_labels_only():
    with use_registries(registries(RecorderPlugin())):
        task = load_task(TaskSpec("toy:binary"))
        Recorder.seen = []
        report = cross_validate(task, [LearnerSpec("recorder")], folds=4, noise=[0.25])
    folds = fold_indices(task, 4, 0)
    rates = [np.mean(seen != task.labels[tr]) for seen, (tr, _) in zip(Recorder.seen, folds)]
    # 4 x 270 training labels, each flipped with probability 0.25 (sd of the mean rate ~0.013)
    assert len(rates) == 4 and abs(np.mean(rates) - 0.25) < 0.05
    # outcomes are scored against the clean labels: recompute the first fold's error by hand
    cell = report.cells[0]
    assert cell.noise == 0.25 and len(cell.outcomes) == len(task)
    tr, te = folds[0]
    wrong = sum(cell.outcomes[i] == "0" for i in te)
    assert cell.fold_errors[0] == pytest.approx(100 * wrong / len(te))
    assert all(o in "01" for o in cell.outcomes)
