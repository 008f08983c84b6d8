"""``partial_fit_each``: consecutive ``partial_fit`` calls in one call, bit for bit.

Each learner continues the same fitted model twice, once by one ``partial_fit`` call per block
and once by one ``partial_fit_each`` call over the stacked blocks; the state arrays must agree
in their bytes and the per-call counters entry for entry.
"""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import textcw
from textcw.errors import InputError

WORDS = [f"w{i}" for i in range(60)]


def corpus(n_classes: int, n_docs: int = 90, seed: int = 0):
    """Hashed documents whose words lean towards their class, so learners make mistakes and updates."""
    rng = np.random.RandomState(seed)
    labels = np.array([f"class{c}" for c in rng.randint(0, n_classes, n_docs)], dtype=object)
    docs = []
    for label in labels:
        c = int(label[5:])
        own = [WORDS[(c * 15 + k) % 60] for k in rng.randint(0, 15, 6)]
        noise = [WORDS[k] for k in rng.randint(0, 60, 4)]
        docs.append(" ".join(own + noise))
    flipped = rng.rand(n_docs) < 0.2  # label noise: mistakes in every pass
    labels[flipped] = [f"class{c}" for c in rng.randint(0, n_classes, int(flipped.sum()))]
    X = textcw.make_featurizer("hashing", n_features=2 ** 10).fit_transform(docs)
    return X, labels


def started(name: str, X, y, **params):
    """The learner after a first ``partial_fit`` over the first 30 documents."""
    learner = textcw.make_learner(name, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return learner.partial_fit(X[:30], y[:30], classes=np.unique(y))


def assert_bit_for_bit(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert sorted(sa["arrays"]) == sorted(sb["arrays"])
    for name in sa["arrays"]:
        x, z = np.asarray(sa["arrays"][name]), np.asarray(sb["arrays"][name])
        assert x.dtype == z.dtype and x.shape == z.shape and x.tobytes() == z.tobytes(), name
    assert sa["mistakes"] == sb["mistakes"] and sa["n_updates"] == sb["n_updates"]
    assert sa.get("counters") == sb.get("counters")


CASES = [("cw-stdev", {}), ("arow", {}), ("arow", {"fit_intercept": True}), ("scw1", {}), ("pa1", {}),
         ("averaged-perceptron", {})]


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("name, params", CASES)
def test_blocks_are_partial_fit_calls_bit_for_bit(name, params, n_classes):
    X, y = corpus(n_classes)
    by_calls = started(name, X, y, **params)
    at_once = copy.deepcopy(by_calls)
    sizes = [1, 3, 1, 7, 2, 1, 12, 4, 1, 1, 5, 22]  # 60 rows after the first 30
    bounds = np.concatenate(([30], 30 + np.cumsum(sizes)))
    for start, stop in zip(bounds[:-1], bounds[1:]):
        by_calls.partial_fit(X[start:stop], y[start:stop])
    at_once.partial_fit_each(X[30:], y[30:], sizes)
    assert len(at_once.mistakes_) == 1 + len(sizes)
    assert sum(at_once.n_updates_[1:]) > 0 and sum(at_once.mistakes_[1:]) > 0  # the blocks did learn
    assert_bit_for_bit(by_calls, at_once)
    np.testing.assert_array_equal(by_calls.decision_function(X), at_once.decision_function(X))


@pytest.mark.parametrize("n_classes", [2, 4])
@pytest.mark.parametrize("name", ["cw-stdev", "perceptron"])
def test_one_row_per_block_tells_each_rows_outcome(name, n_classes):
    X, y = corpus(n_classes)
    row_by_row = started(name, X, y)
    at_once = copy.deepcopy(row_by_row)
    for i in range(30, 90):
        row_by_row.partial_fit(X[i:i + 1], y[i:i + 1])
    at_once.partial_fit_each(X[30:], list(y[30:]))  # sizes=None: one block per row; a list of labels
    mistakes, updates = at_once.mistakes_[-60:], at_once.n_updates_[-60:]
    assert len(at_once.mistakes_) == 61 and set(mistakes) == {0, 1} and set(updates) <= {0, 1}
    if name == "perceptron":  # it updates exactly on its mistakes: each row's own pair tells
        assert updates == mistakes
    assert_bit_for_bit(row_by_row, at_once)


def test_sample_weights_per_block_and_a_block_of_zero_weights_is_refused():
    X, y = corpus(2)
    weights = np.linspace(0.5, 2.0, 60)
    weights[10] = 0.0
    by_calls = started("arow", X, y)
    at_once = copy.deepcopy(by_calls)
    sizes = [10, 5, 25, 20]
    bounds = np.concatenate(([0], np.cumsum(sizes)))
    for start, stop in zip(bounds[:-1], bounds[1:]):
        by_calls.partial_fit(X[30 + start:30 + stop], y[30 + start:30 + stop], sample_weight=weights[start:stop])
    at_once.partial_fit_each(X[30:], y[30:], sizes, sample_weight=weights)
    assert_bit_for_bit(by_calls, at_once)
    weights[10:15] = 0.0
    before = copy.deepcopy(at_once)
    with pytest.raises(InputError, match=r"every sample weight of block 1 \(rows 10 to 14\) is zero"):
        at_once.partial_fit_each(X[30:], y[30:], sizes, sample_weight=weights)
    assert_bit_for_bit(before, at_once)


@pytest.mark.parametrize("sizes, message", [
    ([30, 29], "sizes add up to 59 rows but X has 60"),
    ([30, 0, 30], "sizes must be a non-empty list of whole numbers >= 1"),
    ([30.0, 30.0], "sizes must be a non-empty list of whole numbers >= 1"),
    ([], "sizes must be a non-empty list of whole numbers >= 1"),
])
def test_bad_sizes_are_refused_and_nothing_is_learned(sizes, message):
    X, y = corpus(3)
    learner = started("scw1", X, y)
    before = copy.deepcopy(learner)
    with pytest.raises(InputError, match=message):
        learner.partial_fit_each(X[30:], y[30:], sizes)
    assert_bit_for_bit(before, learner)


def test_an_unknown_label_in_any_block_learns_nothing():
    X, y = corpus(3)
    learner = started("cw-stdev", X, y)
    before = copy.deepcopy(learner)
    labels = y[30:].copy()
    labels[-1] = "class9"
    with pytest.raises(InputError, match=r"labels \['class9'\] are not among the declared classes"):
        learner.partial_fit_each(X[30:], labels, [59, 1])
    assert_bit_for_bit(before, learner)  # not even the first block


def test_a_modified_state_is_refused_before_the_first_block():
    X, y = corpus(4)
    learner = started("arow", X, y)
    learner._state["mu"] = learner._state["mu"][:-1]
    with pytest.raises(InputError, match="state array 'mu' has shape"):
        learner.partial_fit_each(X[30:], y[30:], [30, 30])


def test_a_state_array_replaced_between_blocks_is_checked_again():
    # the state is checked once per call only while its arrays are the ones checked
    X, y = corpus(4)
    learner = started("arow", X, y)
    real = learner._run_epoch
    runs = []

    def replacing(*args, **kwargs):
        runs.append(1)
        if len(runs) == 2:
            learner._state["mu"] = learner._state["mu"][:-1]  # as a broken hook between blocks would
        return real(*args, **kwargs)

    learner._run_epoch = replacing
    with pytest.raises(InputError, match="state array 'mu' has shape"):
        learner.partial_fit_each(X[30:], y[30:], [20, 20, 20])
    assert len(runs) == 2 and len(learner.mistakes_) == 2  # the first block was learned, the second refused


def test_an_unfitted_learner_gets_one_partial_fit_call_per_block():
    X, y = corpus(2)
    with pytest.raises(InputError, match="the first partial_fit call needs classes"):
        textcw.make_learner("pa1").partial_fit_each(X, y, [45, 45])
