"""Stream and shard training on a multi-label task (textcw.scale.multilabel): the same label models
as in-memory training where the passes are the same, the same model for 1 or 2 featurizing
workers, one shard equal to plain training, and one-line refusals."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from tests.cli_run import one_line_error, run
from textcw import persist
from textcw.corpus.multilabel import make_multilabel_dataset
from textcw.errors import TextcwError
from textcw.learners.multilabel import MultiLabel
from textcw.multilabel_run import train_multilabel
from textcw.scale import train_sharded, train_stream
from textcw.scale.combine import Combiner
from textcw.scale.multilabel import train_label_shard
from textcw.scale.shards import ShardTask, shard_seeds
from textcw.scale.source import CorpusSource, concatenate, slice_dataset

TOPICS = {"fruit": "apple banana cherry plum", "metal": "iron copper zinc tin", "sport": "tennis golf rugby polo"}
HASHED = {"n_features": 4096}  # a small hashed space keeps every label's model small


def rows(n, seed):
    """Documents with one or two topics and some noise words, so that the labels are learned
    with mistakes (thresholds and temperatures then have something to fit)."""
    rng = np.random.default_rng(seed)
    names = sorted(TOPICS)
    noise = " ".join(TOPICS.values()).split()
    out = []
    for i in range(n):
        chosen = sorted(set(rng.choice(names, size=1 + i % 2, replace=False)))
        words = [rng.choice(TOPICS[t].split()) for t in chosen for _ in range(2)] + list(rng.choice(noise, 2))
        out.append((" ".join(words) + f" filler{i % 7}", "|".join(chosen)))
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multilabel-scale")
    for name, n, seed in (("train", 240, 0), ("test", 80, 1)):
        with open(folder / f"{name}.csv", "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["text", "label"])
            writer.writerows(rows(n, seed))
    return f"csv:{folder / 'train.csv'},{folder / 'test.csv'}?label_sep=|"


def label_weights(result):
    est = result.model[-1]
    return [(m.coef_.copy(), m.intercept_.copy(), m.fitted_state()) for m in est.estimators_]


def assert_same_weights(a, b):
    assert len(a) == len(b) == len(TOPICS)
    for (coef_a, bias_a, state_a), (coef_b, bias_b, state_b) in zip(a, b):
        assert np.array_equal(coef_a, coef_b) and np.array_equal(bias_a, bias_b)
        assert state_a.keys() == state_b.keys()
        assert all(np.array_equal(state_a[k], state_b[k]) for k in state_a)


def in_memory_one_pass(corpus):
    """In-memory training with the stream's passes: hashing, one epoch, corpus order."""
    return train_multilabel(corpus, "arow", featurizer="hashing", featurizer_params=HASHED, epochs=1,
                            params={"shuffle": False})


def test_a_stream_of_one_chunk_is_in_memory_training_bit_for_bit(corpus):
    streamed = train_stream(corpus, "arow", featurizer_params=HASHED, chunk_size=1000, workers=1)
    plain = in_memory_one_pass(corpus)
    assert_same_weights(label_weights(streamed), label_weights(plain))
    s, p = streamed.model[-1], plain.model[-1]
    assert np.array_equal(s.thresholds_, p.thresholds_) and s.calibration_ == p.calibration_
    assert streamed.metrics == plain.metrics
    assert streamed.n_train == 240 and streamed.n_test == 80 and streamed.mode == "stream"
    assert s.classes_.tolist() == sorted(TOPICS) and s.record_ == "first"
    assert streamed.model.textcw_components_["training"]["calibrated_on"] == 240


def test_a_stream_in_chunks_learns_the_same_weights_and_refits_its_cuts_on_its_own_honest_scores(corpus):
    streamed = train_stream(corpus, "arow", featurizer_params=HASHED, chunk_size=40, workers=1)
    plain = in_memory_one_pass(corpus)
    # every update runs document by document in the same order, whatever the chunks
    assert_same_weights(label_weights(streamed), label_weights(plain))
    # the honest scores are recorded in sub-chunks restarting at each stream chunk, so the cuts
    # are fitted on other (equally honest) scores: close, not equal
    s = streamed.model[-1]
    assert s.n_honest_scores_ == 240 and np.all((s.thresholds_ > 0) & (s.thresholds_ < 1))
    assert not np.array_equal(s.thresholds_, plain.model[-1].thresholds_)
    assert abs(streamed.metrics["micro_f1"] - plain.metrics["micro_f1"]) < 0.05
    predicted = streamed.model.predict(["apple banana tennis golf", "iron zinc"])
    assert all(isinstance(tags, tuple) for tags in predicted) and "metal" in predicted[1]


def test_one_and_two_featurizing_workers_give_the_same_model(corpus):
    one = train_stream(corpus, "arow", featurizer_params=HASHED, chunk_size=40, workers=1)
    two = train_stream(corpus, "arow", featurizer_params=HASHED, chunk_size=40, workers=2)
    assert two.workers == 2
    assert_same_weights(label_weights(one), label_weights(two))
    assert np.array_equal(one.model[-1].thresholds_, two.model[-1].thresholds_)
    assert one.model[-1].calibration_ == two.model[-1].calibration_ and one.metrics == two.metrics


def test_one_shard_is_plain_training(corpus):
    sharded = train_sharded(corpus, "arow", shards=1, epochs=2)
    plain = train_multilabel(corpus, "arow", epochs=2)
    assert_same_weights(label_weights(sharded), label_weights(plain))
    assert np.array_equal(sharded.model[-1].thresholds_, plain.model[-1].thresholds_)
    assert sharded.model[-1].record_ == plain.model[-1].record_ == "cross-fit"
    assert sharded.metrics == plain.metrics and sharded.shards == 1


def test_shards_are_combined_label_by_label_and_recalibrated_on_their_honest_scores(corpus):
    sharded = train_sharded(corpus, "arow", shards=3, combine="kl", epochs=1)
    source = CorpusSource.resolve(corpus)
    feat = sharded.model[0]  # fitted once, on the whole training split, before the shards
    template = MultiLabel(sharded.model[-1].learner)
    classes = np.array(sorted(TOPICS), dtype=object)
    shards = [train_label_shard(source, feat, template, classes, ShardTask(i, 3, s))
              for i, s in enumerate(shard_seeds(0, 3))]
    est = sharded.model[-1]
    for label in range(len(TOPICS)):
        combiner = Combiner("kl")
        for shard in shards:
            combiner.add(shard.model.estimators_[label])
        expected = combiner.result()
        assert np.array_equal(expected.coef_, est.estimators_[label].coef_)
        assert all(np.array_equal(v, est.estimators_[label].fitted_state()[k])
                   for k, v in expected.fitted_state().items())
    # each shard gives the same share of its most recent honest scores (all of them here)
    assert est.n_honest_scores_ == 240 and sharded.shard_documents == [80, 80, 80]
    assert np.all((est.thresholds_ > 0) & (est.thresholds_ < 1))
    assert sharded.metrics["micro_f1"] > 0.7
    assert all(isinstance(tags, tuple) for tags in sharded.model.predict(["plum tennis", "tin"]))


def test_streamed_shards_combine_uniformly(corpus):
    result = train_sharded(corpus, "pa1", shards=2, combine="uniform", stream=True, chunk_size=50,
                           featurizer_params=HASHED)
    assert result.chunk_size == 50 and result.combine == "uniform" and result.shard_documents == [120, 120]
    assert result.model[-1].n_honest_scores_ == 240 and result.metrics["micro_f1"] > 0.6


def test_a_slice_of_a_multilabel_split_keeps_its_label_sets():
    data = make_multilabel_dataset(["a", "b", "c"], [["x"], ["x", "y"], ["y"]], ["x", "y"], name="t",
                                   split="train", order_seed=None)
    part = slice_dataset(data, 1, 3)
    assert part.labels == [("x", "y"), ("y",)] and part.multilabel
    assert concatenate([slice_dataset(data, 0, 1), part]).labels == data.labels


@pytest.mark.parametrize("call, message", [
    (lambda c: train_stream(c, "arow", epochs=2), "a multi-label stream is read once"),
    (lambda c: train_stream(c, "arow", probability="raw"), "its probabilities are always calibrated per label"),
    (lambda c: train_sharded(c, "arow", shards=2, stream=True, epochs=3), "a multi-label stream is read once"),
    (lambda c: train_sharded(c, "arow", shards=2, combine="median"), "median"),
    (lambda c: train_sharded(c, "pa1", shards=2, combine="kl"), "use method='uniform'"),
    (lambda c: train_sharded(c, "arow", shards=241), "use at most 240 shards"),
    (lambda c: train_stream(c, "arow", params={"r": "auto"}), "has 'auto' hyperparameters"),
])
def test_what_does_not_apply_is_refused_before_any_work(corpus, call, message):
    with pytest.raises(TextcwError) as caught:
        call(corpus)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_the_command_streams_a_multilabel_table_and_saves_a_tagger(corpus, tmp_path, capsys):
    model = tmp_path / "tags.textcw-model"
    code, out, err = run(capsys, "train", "--corpus", corpus, "--learner", "arow", "--stream", "--chunk-size", "60",
                         "--featurizer-param", "n_features=4096", "--out", str(model))
    assert code == 0, err
    assert "micro-F1 " in out and "3 labels" in out and "streamed in chunks of 60, 1 pass" in out
    loaded = persist.load(model)
    assert isinstance(loaded[-1], MultiLabel) and isinstance(loaded.predict(["iron golf"])[0], tuple)
    # the streamed model exports without pickle and imports to the same answers
    code, _, err = run(capsys, "export", str(model), str(tmp_path / "tags.export"))
    assert code == 0, err
    code, _, err = run(capsys, "import", str(tmp_path / "tags.export"), str(tmp_path / "back.textcw-model"))
    assert code == 0, err
    back = persist.load(tmp_path / "back.textcw-model")
    texts = ["iron golf", "apple plum tin", "rugby"]
    assert back.predict(texts) == loaded.predict(texts)
    assert np.array_equal(back.predict_proba(texts), loaded.predict_proba(texts))
    code, out, err = run(capsys, "train", "--corpus", corpus, "--learner", "arow", "--shards", "2", "--epochs", "1")
    assert code == 0, err
    assert "2 shards combined by kl (local, 1 worker)" in out
    code, _, err = run(capsys, "train", "--corpus", corpus, "--combine", "kl")
    assert code == 2 and "--combine applies to shard training; add --shards N" in one_line_error(err)
