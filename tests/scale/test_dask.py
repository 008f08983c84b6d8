"""Shard training on a local Dask cluster (2 worker processes on 127.0.0.1)."""

from __future__ import annotations

import socket

import numpy as np
import pytest

from textcw.pipeline import make_featurizer
from textcw.scale import train_sharded
from textcw.errors import ClusterError
from textcw.scale.shards import ShardTask, shard_seeds, train_shard
from textcw.scale.source import CorpusSource

from gating import WAIT, kill_and_wait, run_in_thread

pytest.importorskip("distributed")

SMALL_HASH = {"n_features": 2**14}


def learner_of(result):
    return result.model.named_steps["learner"]


def hand_shard_models(corpus, learner_cls, n, seed, **params):
    """The shard models, trained one by one in this process."""
    source = CorpusSource.resolve(corpus)
    feat = make_featurizer("hashing", **SMALL_HASH)
    return [train_shard(source, feat, learner_cls(**params), ShardTask(i, n, s)).model
            for i, s in enumerate(shard_seeds(seed, n))]


@pytest.mark.parametrize("corpus", ["synthetic-text:3000", "synthetic-text:3000:3"])
def test_dask_shards_equal_the_hand_computed_combination(dask_cluster, corpus):
    address, _ = dask_cluster
    kwargs = dict(shards=3, epochs=2, seed=5, featurizer_params=SMALL_HASH, backend="dask",
                  scheduler=address)
    kl = train_sharded(corpus, "cw-var", combine="kl", **kwargs)
    uniform = train_sharded(corpus, "cw-var", combine="uniform", **kwargs)
    assert kl.backend == "dask" and kl.workers == 2 and kl.n_train == 3000

    from textcw.learners.cw_var import CWVar

    models = hand_shard_models(corpus, CWVar, 3, 5, n_epochs=2)
    mus = [m.coef_ for m in models]
    sigmas = [m.sigma_ for m in models]
    precision = sum(1.0 / s for s in sigmas)  # Sigma^{-1} = sum_c Sigma_c^{-1}
    np.testing.assert_allclose(learner_of(kl).sigma_, 1.0 / precision, rtol=1e-12, atol=0)
    np.testing.assert_allclose(learner_of(kl).coef_, sum(m / s for m, s in zip(mus, sigmas)) / precision,
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(learner_of(uniform).coef_, sum(mus) / 3, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(learner_of(uniform).sigma_, sum(sigmas) / 3, rtol=1e-12, atol=0)

    local = train_sharded(corpus, "cw-var", combine="kl", shards=3, epochs=2, seed=5,
                          featurizer_params=SMALL_HASH, workers=1)
    np.testing.assert_array_equal(learner_of(local).coef_, learner_of(kl).coef_)
    assert local.accuracy == kl.accuracy


def test_a_vocabulary_is_fitted_on_a_worker_and_shared(dask_cluster, tmp_path):
    address, _ = dask_cluster
    docs = {"pos": ["good great fine film"] * 6 + ["lovely good"] * 6,
            "neg": ["bad awful poor film"] * 6 + ["dull bad"] * 6}
    for label, texts in docs.items():
        (tmp_path / label).mkdir()
        for i, text in enumerate(texts):
            (tmp_path / label / f"{i}.txt").write_text(f"{text} {i}")
    corpus = f"folder:{tmp_path}"
    on_dask = train_sharded(corpus, "cw-var", shards=2, featurizer="binary-bow", backend="dask",
                            scheduler=address)
    local = train_sharded(corpus, "cw-var", shards=2, featurizer="binary-bow", workers=1)
    vocab = on_dask.model.named_steps["featurizer"].vocabulary_
    assert vocab == local.model.named_steps["featurizer"].vocabulary_ and "lovely" in vocab
    np.testing.assert_array_equal(learner_of(on_dask).coef_, learner_of(local).coef_)


def test_killed_worker_shard_is_retried_and_the_result_is_unchanged(own_dask_cluster, shard_gate):
    address, client = own_dask_cluster
    kwargs = dict(corpus="synthetic-text:4000", learner="cw-var", shards=4, epochs=2, seed=9,
                  featurizer_params=SMALL_HASH, backend="dask", scheduler=address)
    thread, box = run_in_thread(train_sharded, **kwargs)
    # Both workers are inside a shard task, stopped at the gate: kill one of them.
    (index, pid), *_ = shard_gate.wait_for_arrivals(2, thread)
    kill_and_wait(pid)
    shard_gate.open()
    thread.join(WAIT)
    assert not thread.is_alive(), "the job did not finish after its worker was killed"
    assert "error" not in box, box.get("error")

    # The shard that was running went back to the scheduler and ran again in another process ...
    reruns = [p for i, p in shard_gate.started() if i == index]
    assert len(reruns) >= 2 and reruns.count(pid) == 1
    key = f"textcw-shard-{index}-of-4-"
    story = client.run_on_scheduler(
        lambda dask_scheduler: [list(s) for s in dask_scheduler.transition_log if str(s[0]).startswith(key)])
    assert sum(1 for entry in story if entry[2] == "processing") >= 2, story
    # ... and the job's result is exactly the undisturbed one.
    undisturbed = train_sharded(**kwargs)
    retried = box["result"]
    np.testing.assert_array_equal(learner_of(retried).coef_, learner_of(undisturbed).coef_)
    np.testing.assert_array_equal(learner_of(retried).sigma_, learner_of(undisturbed).sigma_)
    assert retried.accuracy == undisturbed.accuracy


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_an_unreachable_scheduler_fails_with_a_clear_message():
    address = f"127.0.0.1:{closed_port()}"
    with pytest.raises(ClusterError) as info:
        train_sharded("synthetic-text:1000", "cw-var", shards=2, backend="dask", scheduler=address)
    message = str(info.value)
    assert f"cannot reach the Dask scheduler at {address}" in message
    assert "drop --scheduler to start a local cluster" in message
