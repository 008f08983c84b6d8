"""Shard training on the local backend, and out-of-core streaming."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.errors import ClusterError, InputError, ParameterError
from textcw.hookspecs import hookimpl
from textcw.learners.cw_var import CWVar
from textcw.pipeline import make_featurizer
from textcw.pipeline import train as plain_train
from textcw.plugins import build_registries, get_plugin_manager, use_registries
from textcw.scale import train_sharded, train_stream
from textcw.scale.combine import combine
from textcw.scale.shards import ShardTask, fit_epochs, shard_seeds, train_shard
from textcw.scale.source import CorpusSource, shard_bounds

from gating import WAIT, kill_and_wait, run_in_thread

# Small hashed feature spaces keep shard models (and their trips between processes) small.
SMALL_HASH = {"n_features": 2**14}


def learner_of(result):
    return result.model.named_steps["learner"]


@pytest.mark.parametrize("n,k", [(10, 3), (10, 10), (1001, 7), (5, 1)])
def test_shards_are_contiguous_disjoint_and_even(n, k):
    bounds = [shard_bounds(n, i, k) for i in range(k)]
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    sizes = [b - a for a, b in bounds]
    assert max(sizes) - min(sizes) <= 1 and min(sizes) >= 1


def test_more_shards_than_documents_is_refused():
    with pytest.raises(InputError, match="use at most 5 shards"):
        shard_bounds(5, 0, 6)
    with pytest.raises(InputError, match="use at most 100 shards"):
        train_sharded("synthetic-text:100", "cw-var", shards=101, workers=1)


def test_shard_seeds_are_reproducible_and_distinct():
    # Pinned: a shard's seed fixes its model, so changing the derivation changes every sharded
    # result (a prefix property too: shard i's seed does not depend on the number of shards).
    assert shard_seeds(7, 5) == [1201125462, 3618983171, 3831650445, 3842200183, 1956387801]
    assert shard_seeds(7, 2) == shard_seeds(7, 5)[:2]
    assert len(set(shard_seeds(7, 5))) == 5 and shard_seeds(7, 5) != shard_seeds(8, 5)
    assert shard_seeds(7, 1) == [7] and shard_seeds(None, 3) == [None] * 3


@pytest.mark.parametrize("problem", ["binary_problem", "multiclass_problem"])
def test_epochs_through_partial_fit_are_exactly_fit(request, problem):
    X, y = request.getfixturevalue(problem)
    reference = CWVar(n_epochs=3, random_state=4).fit(X, y)
    model = CWVar(n_epochs=3, random_state=4)
    fit_epochs(model, X, y, np.unique(y))
    np.testing.assert_array_equal(model.coef_, reference.coef_)
    np.testing.assert_array_equal(model.sigma_, reference.sigma_)
    assert model.mistakes_ == reference.mistakes_


def test_one_shard_is_ordinary_training():
    # eta given: ordinary training self-tunes an unset eta, shard training keeps the class default
    kwargs = dict(epochs=2, seed=3, featurizer_params=SMALL_HASH, params={"eta": 0.95})
    plain = plain_train("synthetic-text:2000", "cw-var", **kwargs)
    sharded = train_sharded("synthetic-text:2000", "cw-var", shards=1, workers=1, **kwargs)
    np.testing.assert_array_equal(learner_of(sharded).coef_, learner_of(plain).coef_)
    assert sharded.accuracy == plain.accuracy and sharded.mistakes == plain.mistakes


def test_local_shards_combine_like_the_hand_computed_combination():
    kwargs = dict(shards=3, epochs=2, seed=11, featurizer_params=SMALL_HASH)
    two = train_sharded("synthetic-text:3000:3", "arow", workers=2, **kwargs)
    one = train_sharded("synthetic-text:3000:3", "arow", workers=1, **kwargs)
    np.testing.assert_array_equal(learner_of(two).coef_, learner_of(one).coef_)
    assert two.workers == 2 and two.shard_documents == [1000, 1000, 1000] and two.n_train == 3000

    source = CorpusSource.resolve("synthetic-text:3000:3")
    feat = make_featurizer("hashing", **SMALL_HASH)
    template = learner_of(one).__class__(n_epochs=2)
    models = [train_shard(source, feat, template, ShardTask(i, 3, s)).model
              for i, s in enumerate(shard_seeds(11, 3))]
    precision = sum(1.0 / m.sigma_ for m in models)
    mean = sum(m.coef_ / m.sigma_ for m in models) / precision
    np.testing.assert_allclose(learner_of(two).coef_, mean, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(learner_of(two).sigma_, 1.0 / precision, rtol=1e-12, atol=0)
    np.testing.assert_array_equal(learner_of(two).coef_, combine(models, "kl").coef_)


def test_impossible_combinations_fail_before_training():
    with pytest.raises(ParameterError, match="use method='uniform'"):
        train_sharded("synthetic-text:1000", "perceptron", shards=2, combine="kl", workers=1)
    with pytest.raises(InputError, match="keeps other state"):
        train_sharded("synthetic-text:1000", "sop", shards=2, combine="uniform", workers=1)
    with pytest.raises(ParameterError, match="not an online learner"):
        train_sharded("synthetic-text:1000", "nb", shards=2, combine="uniform", workers=1)
    for shards in (0, 10_001, 20_000_000, 2.0, True):
        # refused before a task or a seed is made: 20,000,000 of them would take gigabytes
        with pytest.raises(ParameterError, match=r"give an integer from 1 to 10,000"):
            train_sharded("synthetic-text:1000", "cw-var", shards=shards)


def test_uniform_combination_of_first_order_shards():
    result = train_sharded("synthetic-text:2000", "pa", shards=2, combine="uniform", workers=1,
                           epochs=1, featurizer_params=SMALL_HASH)
    single = plain_train("synthetic-text:2000", "pa", epochs=1, featurizer_params=SMALL_HASH)
    # Measured: the average of the two shard models scores 71.3%, one model on all the data 68.5%
    # (chance 50%): parameter averaging keeps the accuracy of training on everything.
    assert result.combine == "uniform" and result.accuracy > 0.66
    assert result.accuracy >= single.accuracy - 0.02


# ---------------------------------------------------------------------- streaming
def test_stream_is_partial_fit_over_chunks():
    # tune=False: the learner's own defaults (tuning on the first chunks: test_stream_tuning.py)
    result = train_stream("synthetic-text:3000", "cw-var", chunk_size=700, seed=2,
                          featurizer_params=SMALL_HASH, tune=False)
    feat = make_featurizer("hashing", **SMALL_HASH)
    model = CWVar(n_epochs=1, random_state=2)
    source = CorpusSource.resolve("synthetic-text:3000")
    for chunk in source.chunks("train", chunk_size=700):
        model.partial_fit(feat.transform(chunk.data), chunk.labels, classes=["neg", "pos"])
    np.testing.assert_array_equal(learner_of(result).coef_, model.coef_)
    assert result.passes == 1 and result.n_train == 3000 and result.n_test == 600
    assert result.mistakes == [sum(model.mistakes_)]
    assert result.featurizer == "hashing" and result.to_dict()["documents_per_second"] > 0


def test_stream_reports_progress_over_documents():
    seen = []
    train_stream("synthetic-text:2500", "pa", chunk_size=1000, epochs=2, featurizer_params=SMALL_HASH,
                 progress=lambda stage, done, total: seen.append((stage, done, total)))
    docs = [(done, total) for stage, done, total in seen if stage == "documents"]
    assert docs[0] == (0, 5000) and docs[-1] == (5000, 5000)
    assert [d for d, _ in docs] == sorted(d for d, _ in docs)
    assert ("evaluating", 500, 500) in seen


def test_stream_refuses_a_featurizer_that_learns_a_vocabulary():
    with pytest.raises(ParameterError, match="use --featurizer hashing"):
        train_stream("synthetic-text:1000", "cw-var", featurizer="binary-bow")


class _VectorCorpus:
    """A corpus of feature dicts (not text), registered in an isolated registry."""

    @staticmethod
    def load(task=None, split="train"):
        from textcw.corpus.base import Dataset

        n = 40
        return Dataset(data=[{"a": i % 2, "b": 1} for i in range(n)], target=np.arange(n) % 2,
                       target_names=["x", "y"], name="vectors", split=split)

    @hookimpl
    def register_corpora(self, register):
        register("vectors", self.load, summary="feature dicts", tasks={})


class _SortedCorpus:
    """Text documents sorted by label: with two shards each shard holds a single label."""

    @staticmethod
    def load(task=None, split="train"):
        from textcw.corpus.base import Dataset

        words = ["alpha beta", "gamma delta"]
        target = np.repeat([0, 1], 20)
        return Dataset(data=[f"{words[t]} w{i}" for i, t in enumerate(target)], target=target,
                       target_names=["x", "y"], name="sorted", split=split)

    @hookimpl
    def register_corpora(self, register):
        register("sorted", self.load, summary="sorted by label", tasks={})


def test_a_shard_with_one_label_still_knows_every_label():
    regs = build_registries(get_plugin_manager(entry_points=False, extra=[_SortedCorpus()]))
    with use_registries(regs):
        result = train_sharded("sorted", "cw-var", shards=2, workers=1, epochs=1)
    assert list(learner_of(result).classes_) == ["x", "y"] and result.accuracy == 1.0


def test_stream_refuses_documents_that_are_not_text():
    regs = build_registries(get_plugin_manager(entry_points=False, extra=[_VectorCorpus()]))
    with use_registries(regs), pytest.raises(InputError, match="not text"):
        train_stream("vectors", "cw-var")


def test_sharded_stream_on_the_local_backend():
    result = train_sharded("synthetic-text:4000", "cw-var", shards=2, workers=1, stream=True,
                           chunk_size=600, featurizer_params=SMALL_HASH)
    assert result.passes == 1 and result.chunk_size == 600 and result.shard_documents == [2000, 2000]
    assert result.to_dict()["mode"] == "shards"


def test_a_killed_local_worker_process_does_not_lose_the_job(shard_gate, local_start):
    kwargs = dict(corpus="synthetic-text:4000", learner="cw-var", shards=4, workers=2, epochs=2, seed=21,
                  featurizer_params=SMALL_HASH)
    thread, box = run_in_thread(train_sharded, **kwargs)
    # Both worker processes are inside a shard task, stopped at the gate: kill one of them.
    (index, pid), *_ = shard_gate.wait_for_arrivals(2, thread)
    kill_and_wait(pid)
    shard_gate.open()
    thread.join(WAIT)
    assert not thread.is_alive(), "the job did not finish after a worker process was killed"
    assert "error" not in box, box.get("error")
    # The killed worker's shard ran again, in another process ...
    reruns = [p for i, p in shard_gate.started() if i == index]
    assert len(reruns) >= 2 and reruns.count(pid) == 1
    # ... and the result is exactly the undisturbed one.
    undisturbed = train_sharded(**kwargs)
    np.testing.assert_array_equal(learner_of(box["result"]).coef_, learner_of(undisturbed).coef_)
    assert box["result"].accuracy == undisturbed.accuracy


def test_a_local_worker_that_keeps_dying_is_a_cluster_error(shard_gate, monkeypatch, local_start):
    from textcw.scale import backends

    monkeypatch.setattr(backends, "LOCAL_RETRIES", 1)
    thread, box = run_in_thread(train_sharded, corpus="synthetic-text:2000", learner="cw-var", shards=2,
                                workers=2, featurizer_params=SMALL_HASH)
    seen: set = set()
    for _ in range(2):  # the first run and its one retry: each time both shards wait at the gate
        arrived = shard_gate.wait_for_arrivals(len(seen) + 2, thread)
        new = [a for a in arrived if a not in seen]
        seen.update(arrived)
        kill_and_wait(new[0][1])
    thread.join(WAIT)
    assert not thread.is_alive()
    assert isinstance(box.get("error"), ClusterError), box
    assert str(box["error"]).startswith("a local worker process died 2 times while training shards (2 left)")
