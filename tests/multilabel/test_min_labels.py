"""A least number of labels per document (``MultiLabel(min_labels=...)``): the thresholds' label
sets completed by each document's most probable labels, and the ``"auto"`` rule read from the
training label sets."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.errors import ParameterError
from textcw.learners.multilabel import MultiLabel
from textcw.learners.multilabel_targets import at_least, resolve_min_labels
from textcw.pipeline import make_learner


def test_at_least_adds_the_most_probable_labels_not_yet_given():
    indicator = np.array([[0, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 1], [0, 0, 0, 0]])
    proba = np.array([[0.1, 0.4, 0.3, 0.2],
                      [0.5, 0.2, 0.6, 0.1],   # label 1 is given by its threshold, not by rank
                      [0.9, 0.8, 0.7, 0.6],
                      [0.3, 0.3, 0.1, 0.3]])  # a tie: the first label in order
    assert at_least(indicator, proba, 1).tolist() == [[0, 1, 0, 0], [0, 1, 0, 0], [1, 1, 0, 1], [1, 0, 0, 0]]
    assert at_least(indicator, proba, 2).tolist() == [[0, 1, 1, 0], [0, 1, 1, 0], [1, 1, 0, 1], [1, 1, 0, 0]]
    assert at_least(indicator, proba, 0) is indicator and at_least(indicator, proba, 4).sum(axis=1).tolist() == [4] * 4
    assert indicator.sum() == 4  # the input is not changed


@pytest.mark.parametrize("min_labels, unlabelled, n_labels, expected", [
    ("auto", 0, 5, 1), ("auto", 3, 5, 0), ("auto", None, 5, 0), (0, 0, 5, 0), (2, 7, 5, 2), (9, 0, 5, 5)])
def test_the_minimum_resolves_from_the_option_and_the_training_label_sets(min_labels, unlabelled, n_labels, expected):
    assert resolve_min_labels(min_labels, unlabelled, n_labels) == expected


def _data(n=200, seed=0):
    """Three labels, each present when its own feature is on; a fourth feature is noise."""
    rng = np.random.default_rng(seed)
    on = rng.random((n, 3)) < 0.4
    X = np.hstack([on.astype(float) + 0.1 * rng.random((n, 3)), rng.random((n, 1))])
    return X, on.astype(int)


def test_auto_gives_every_document_a_label_when_every_training_document_had_one():
    X, Y = _data()
    keep = Y.sum(axis=1) > 0
    model = MultiLabel(make_learner("arow")).fit(X[keep], Y[keep])
    assert model.unlabelled_documents_ == 0 and model.min_labels_ == 1
    probe = np.vstack([X, np.zeros((5, 4))])  # empty documents too
    got = model.predict_indicator(probe)
    assert got.sum(axis=1).min() >= 1
    plain = (model.predict_proba(probe) > model.thresholds_).astype(int)
    np.testing.assert_array_equal(got, at_least(plain, model.predict_proba(probe), 1))
    assert (plain.sum(axis=1) == 0).any()  # so the test shows the minimum at work


def test_auto_keeps_the_thresholds_alone_when_empty_label_sets_were_learned():
    X, Y = _data()
    model = MultiLabel(make_learner("arow")).fit(X, Y)
    assert model.unlabelled_documents_ == int((Y.sum(axis=1) == 0).sum()) > 0 and model.min_labels_ == 0
    probe = np.zeros((3, 4))
    np.testing.assert_array_equal(model.predict_indicator(probe),
                                  (model.predict_proba(probe) > model.thresholds_).astype(int))


def test_a_number_is_the_minimum_whatever_the_data_and_partial_fit_keeps_the_count():
    X, Y = _data()
    keep = Y.sum(axis=1) > 0
    model = MultiLabel(make_learner("pa1"), min_labels=2).fit(X[keep], Y[keep])
    assert model.predict_indicator(X).sum(axis=1).min() >= 2
    auto = MultiLabel(make_learner("pa1"))
    auto.partial_fit(X[keep][:50], Y[keep][:50])
    assert auto.unlabelled_documents_ == 0 and auto.min_labels_ == 1
    auto.partial_fit(X[:50], Y[:50])
    assert auto.unlabelled_documents_ == int((Y[:50].sum(axis=1) == 0).sum()) > 0 and auto.min_labels_ == 0


@pytest.mark.parametrize("bad", [-1, 101, 1.5, "all", True])
def test_a_bad_minimum_is_refused_in_one_line(bad):
    X, Y = _data(40)
    with pytest.raises(ParameterError, match="min_labels"):
        MultiLabel(make_learner("pa1"), min_labels=bad).fit(X, Y)
