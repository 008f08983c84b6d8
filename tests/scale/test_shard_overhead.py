"""What a shard costs beyond its own learning: the split featurized once (rows to the shards),
small corpora kept in this process, kernels loaded from numba's cache in worker processes."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.pipeline import make_featurizer
from textcw.scale import train_stream
from textcw.scale.source import CorpusSource

SMALL_HASH = {"n_features": 2**14}


def test_shards_take_rows_of_one_featurized_split_with_the_models_of_reading_their_own():
    from textcw.learners.cw_var import CWVar
    from textcw.scale.shards import ShardTask, fit_and_featurize, fit_featurizer, train_rows, train_shard

    source = CorpusSource.resolve("synthetic-text:1500")
    feat = make_featurizer("binary-bow")
    fitted, split = fit_and_featurize(source, feat)
    alone = fit_featurizer(source, feat)
    assert fitted.vocabulary_ == alone.vocabulary_ and split.n_documents == 1500
    template = CWVar(n_epochs=2)
    for index in range(3):
        task = ShardTask(index, 3, 10 + index)
        own = train_shard(source, alone, template, task)
        rows = train_rows(split, template, task)
        assert (rows.start, rows.stop) == (own.start, own.stop)
        assert np.array_equal(rows.model.coef_, own.model.coef_)
        assert np.array_equal(rows.model.sigma_, own.model.sigma_)
        assert rows.mistakes_per_pass == own.mistakes_per_pass


def test_a_vocabulary_corpus_is_featurized_once_and_shards_get_the_same_result_in_processes():
    from textcw.scale import train_sharded

    kwargs = dict(corpus="synthetic-text:1200", learner="arow", shards=3, featurizer="binary-bow", seed=5)
    here = train_sharded(workers=1, **kwargs)
    there = train_sharded(workers=2, **kwargs)  # rows reach the worker processes memory-mapped
    assert (here.workers, there.workers) == (1, 2)
    one, two = here.model.named_steps["learner"], there.model.named_steps["learner"]
    assert np.array_equal(one.coef_, two.coef_) and np.array_equal(one.sigma_, two.sigma_)
    assert here.accuracy == there.accuracy and here.shard_documents == [400, 400, 400]


def test_small_corpora_are_sharded_in_this_process_by_default():
    from textcw.scale import train_sharded
    from textcw.scale.backends import DOCUMENTS_PER_WORKER, default_workers, local_workers

    assert local_workers(10, 1_600) == 1  # amazon:books: a worker would cost more than it saves
    assert local_workers(10, 10 * DOCUMENTS_PER_WORKER) == default_workers(10)
    assert local_workers(2, 2 * DOCUMENTS_PER_WORKER) == default_workers(2)
    assert local_workers(4, None) == default_workers(4)  # unknown size: one per core
    result = train_sharded("synthetic-text:2000", "cw-var", shards=4, featurizer_params=SMALL_HASH)
    assert result.workers == 1


@pytest.mark.parametrize("start", ["loky", "fork"])
def test_worker_processes_compile_no_kernel(start):
    """A loky worker (a fresh interpreter) loads every kernel from numba's on-disk cache; a forked
    worker has them in memory already. Neither compiles one."""
    from textcw.scale.backends import LocalBackend
    from textcw.scale.forked import fork_available
    from textcw.scale.shards import ShardTask

    if start == "fork" and not fork_available():
        pytest.skip("workers are forked only on Linux")
    train_stream("synthetic-text:1000", "cw-var", workers=1, featurizer_params=SMALL_HASH)  # fills the cache
    results = list(LocalBackend(2, start=start).run(_train_and_count, (), [ShardTask(i, 2, i) for i in range(2)]))
    for (hits_before, misses_before), (hits, misses) in results:
        assert misses == misses_before, (start, misses_before, misses)
        if start == "loky":  # a fresh worker loads the kernels; a reused one loaded them before
            assert hits > 0, (hits, misses)


def _train_and_count(task):
    from textcw.scale.backends import kernel_cache_counts

    before = kernel_cache_counts()  # a forked worker inherits the counts of the process it came from
    train_stream("synthetic-text:1000", "cw-var", workers=1, featurizer_params=SMALL_HASH)
    return before, kernel_cache_counts()
