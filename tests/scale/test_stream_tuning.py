"""A stream tunes its hyperparameters on its first chunks, then keeps the winner alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import textcw
from textcw.features.hashing import hashing
from textcw.scale import tuning
from textcw.scale.training import train_stream


@pytest.fixture()
def noisy_file(tmp_path) -> Path:
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(60)]
    lines = []
    for i in range(1000):
        label = int(rng.integers(2))
        picked = rng.choice(words[:35] if label else words[25:], 10)
        shown = label if rng.random() > 0.1 else 1 - label  # 10% label noise
        lines.append(f"{'1' if shown else '-1'} | {' '.join(picked)}")
    path = tmp_path / "noisy.vw"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_auto_params_are_the_tunable_ones_not_given():
    arow = textcw.make_learner("arow")
    assert tuning.auto_params(arow, None) == {"r": "auto"}
    assert tuning.auto_params(arow, {"r": 2.0}) == {}
    assert tuning.auto_params(arow, {"r": "auto"}) == {"r": "auto"}
    assert tuning.auto_params(textcw.make_learner("scw1"), {"C": 1.0}) == {"eta": "auto"}
    assert tuning.auto_params(textcw.make_learner("perceptron"), None) == {}


def test_the_stream_tunes_on_its_first_chunks_then_continues_the_winner(noisy_file, monkeypatch):
    monkeypatch.setattr("textcw.scale.training.TUNE_DOCUMENTS", 250)
    result = train_stream(f"vw:{noisy_file}", "arow", chunk_size=100, workers=1)
    learner = result.model[-1]
    assert set(result.tuned_params) == {"r"} and learner.r == "auto"
    assert learner.tuning_["n_online"] == 300  # three chunks of 100 compared, then the winner alone
    assert "_tuner" not in learner.__dict__

    # The same by hand: the candidates over chunks 1-3, then the best alone over the rest.
    from textcw.corpus import vw

    data = vw.load(str(noisy_file), "train")
    X, y = hashing().transform(data.data), data.labels
    by_hand = textcw.make_learner("arow", r="auto", random_state=0)
    for lo in range(0, 800, 100):
        by_hand.partial_fit(X[lo:lo + 100], y[lo:lo + 100], classes=np.unique(data.target_names))
        if lo + 100 >= 250:
            tuning.settle(by_hand)
    assert by_hand.tuned_params_ == result.tuned_params
    np.testing.assert_array_equal(by_hand.coef_, learner.coef_)
    assert sum(learner.mistakes_) == sum(by_hand.mistakes_)


def test_tune_false_and_given_values_keep_the_learner_defaults(noisy_file):
    fixed = train_stream(f"vw:{noisy_file}", "arow", chunk_size=100, workers=1, tune=False)
    assert fixed.tuned_params == {} and fixed.model[-1].r == 1.0
    given = train_stream(f"vw:{noisy_file}", "arow", params={"r": 5.0}, chunk_size=100, workers=1)
    assert given.tuned_params == {} and given.model[-1].r == 5.0


def test_settle_is_a_no_op_on_a_learner_that_is_not_tuning():
    assert tuning.settle(textcw.make_learner("arow")) is False


def test_streamed_shards_train_with_the_values_a_stream_would_choose(noisy_file, monkeypatch):
    """--shards N --stream: the values are chosen once, over the split's first chunks as a stream
    chooses them, and every shard trains with them (so the shard models combine)."""
    from textcw.scale.training import train_sharded

    monkeypatch.setattr("textcw.scale.tuning.TUNE_DOCUMENTS", 250)
    monkeypatch.setattr("textcw.scale.training.TUNE_DOCUMENTS", 250)
    alone = train_stream(f"vw:{noisy_file}", "arow", chunk_size=100, workers=1)
    chosen = {"r": float(alone.model[-1].tuned_params_["r"])}
    assert chosen["r"] != 1.0  # the tuned value is not the default: the case is not trivial
    for shards in (1, 2):
        result = train_sharded(f"vw:{noisy_file}", "arow", shards=shards, stream=True, chunk_size=100)
        facts = result.model.textcw_components_["training"]
        assert facts["tuned"] == ["r"] and facts["tuned_on"] == 300 and facts["tuned_params"] == chosen
        assert result.model[-1].r == chosen["r"]
        by_hand = train_sharded(f"vw:{noisy_file}", "arow", shards=shards, stream=True, chunk_size=100,
                                params=chosen)
        np.testing.assert_array_equal(result.model[-1].coef_, by_hand.model[-1].coef_)
        assert "tuned" not in by_hand.model.textcw_components_["training"]

    fixed = train_sharded(f"vw:{noisy_file}", "arow", shards=2, stream=True, chunk_size=100, tune=False)
    assert "tuned" not in fixed.model.textcw_components_["training"] and fixed.model[-1].r == 1.0
    whole = train_sharded(f"vw:{noisy_file}", "arow", shards=2, chunk_size=100)  # not streamed: no tuning
    assert "tuned" not in whole.model.textcw_components_["training"] and whole.model[-1].r == 1.0
