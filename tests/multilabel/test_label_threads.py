"""The labels' models trained on several threads (``MultiLabel(n_jobs=...)``,
``textcw.learners.label_threads``): the same models bit for bit, errors from a thread raised,
bad values refused in one line."""

from __future__ import annotations

import os

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_multilabel_classification

import textcw
from textcw.errors import ParameterError
from textcw.learners.label_threads import LabelGroups, thread_count
from textcw.learners.multilabel import MultiLabel


def data(n=400, k=7, seed=3):
    X, Y = make_multilabel_classification(n_samples=n, n_features=60, n_classes=k, random_state=seed)
    return sp.csr_matrix(X.astype(float)), Y


def state_of(model):
    return [(est.coef_.copy(), est.intercept_.copy(), list(est.mistakes_), list(est.n_updates_))
            for est in model.estimators_]


def same_models(a, b):
    for (ca, ia, ma, ua), (cb, ib, mb, ub) in zip(state_of(a), state_of(b)):
        assert np.array_equal(ca, cb) and np.array_equal(ia, ib)
        assert ma == mb and ua == ub


@pytest.mark.parametrize("name, record", [("arow", "best"), ("scw1", "cross-fit"), ("pa1", "first"),
                                          ("perceptron", "auto")])
def test_every_thread_count_gives_the_same_models_bit_for_bit(name, record):
    X, Y = data()
    learner = textcw.make_learner(name, n_epochs=3, random_state=0)
    one = MultiLabel(learner, record=record, chunk_size=50).fit(X, Y)
    for n_jobs in (2, 3, -1):
        many = MultiLabel(learner, record=record, chunk_size=50, n_jobs=n_jobs).fit(X, Y)
        same_models(one, many)
        assert np.array_equal(one.thresholds_, many.thresholds_)
        assert np.array_equal(one.predict_proba(X), many.predict_proba(X))
        assert one.record_ == many.record_ and one.record_f1_ == many.record_f1_
        assert one.recorded_.keys() == many.recorded_.keys()  # the honest scores, scored by groups
        for key, kept in one.recorded_.items():
            assert np.array_equal(kept, many.recorded_[key])


def test_partial_fit_on_threads_equals_one_thread():
    X, Y = data()
    learner = textcw.make_learner("arow", n_epochs=1, shuffle=False)
    one, many = MultiLabel(learner), MultiLabel(learner, n_jobs=2)
    for start in range(0, X.shape[0], 90):
        for model in (one, many):
            model.partial_fit(X[start:start + 90], Y[start:start + 90])
    same_models(one, many)


def test_thread_count_is_bounded_by_the_labels_and_the_cores():
    cores = os.cpu_count() or 1
    assert thread_count(None, 50) == 1
    assert thread_count(1, 50) == 1
    assert thread_count(-1, 50) == min(cores, 50)
    assert thread_count(1024, 50) == min(cores, 50)
    assert thread_count(-1, 1) == 1
    assert thread_count(2, 3) == min(2, cores)


class Failing:
    """A stand-in model whose epoch fails on its label, or records the rows it learned."""

    def __init__(self, fail: bool):
        self.fail, self.learned = fail, []

    def _run_epoch(self, X, y, rows):
        if self.fail:
            raise ValueError("this label's update failed")
        self.learned.append(rows.tolist())


def test_an_error_in_one_thread_is_raised_after_every_group_finished_its_chunk():
    models = [Failing(fail=(label == 1)) for label in range(6)]
    with pytest.raises(ValueError, match="this label's update failed"):
        with LabelGroups(models, 2) as groups:
            assert [g.tolist() for g in groups.groups] == [[0, 2, 4], [1, 3, 5]]
            groups.learn(None, np.zeros((6, 3)), np.arange(3))
    # the group of the failing label stopped at it; the other group learned the chunk
    assert [m.learned for m in models] == [[[0, 1, 2]], [], [[0, 1, 2]], [], [[0, 1, 2]], []]


@pytest.mark.parametrize("n_jobs", [0, -2, 1025, 2.5, "all"])
def test_bad_n_jobs_is_refused_in_one_line(n_jobs):
    X, Y = data(n=60)
    with pytest.raises(ParameterError, match="n_jobs"):
        MultiLabel(textcw.make_learner("arow"), n_jobs=n_jobs).fit(X, Y)
