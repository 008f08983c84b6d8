"""Local shard workers forked from the driver, and whole shards featurized chunk by chunk."""

from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest
import scipy.sparse as sp

from textcw.errors import InputError, ParameterError
from textcw.learners.cw_var import CWVar
from textcw.pipeline import make_featurizer
from textcw.scale.backends import LocalBackend
from textcw.scale.forked import fork_available, forked_unordered
from textcw.scale.shards import ShardTask, featurize_rows, fit_epochs, stack_rows, train_shard
from textcw.scale.source import CorpusSource

from gating import WAIT

needs_fork = pytest.mark.skipif(not fork_available(), reason="workers are forked only on Linux")
SMALL_HASH = {"n_features": 2**14}


def _tasks(n):
    return [ShardTask(i, n, 100 + i) for i in range(n)]


@needs_fork
def test_forked_loky_and_in_process_workers_train_the_same_shard_models():
    source = CorpusSource.resolve("synthetic-text:3000")
    args = (source, make_featurizer("hashing", **SMALL_HASH), CWVar(n_epochs=2))
    runs = {name: list(backend.run(train_shard, args, _tasks(3)))
            for name, backend in [("here", LocalBackend(1)), ("fork", LocalBackend(2, start="fork")),
                                  ("loky", LocalBackend(2, start="loky"))]}
    for name in ("fork", "loky"):
        assert [r.index for r in runs[name]] == [0, 1, 2]
        for ours, theirs in zip(runs["here"], runs[name], strict=True):
            assert (ours.start, ours.stop) == (theirs.start, theirs.stop)
            np.testing.assert_array_equal(ours.model.coef_, theirs.model.coef_)
            np.testing.assert_array_equal(ours.model.sigma_, theirs.model.sigma_)
            assert ours.mistakes_per_pass == theirs.mistakes_per_pass


def _pid_and_shared(shared, task):
    return os.getpid(), shared(task.index), signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)


@needs_fork
def test_forked_workers_inherit_unpicklable_shared_arguments_and_default_signals():
    offset = 7
    shared = lambda i: i + offset  # noqa: E731 - a lambda cannot be pickled: only a fork can pass it
    results = list(LocalBackend(2, start="fork").run(_pid_and_shared, (shared,), _tasks(4)))
    assert [value for _, value, _, _ in results] == [7, 8, 9, 10]
    assert all(pid != os.getpid() for pid, *_ in results)
    # Ctrl-C is the driver's business; SIGTERM, with which the pool ends a worker, ends it.
    assert all(sigint == signal.SIG_IGN and sigterm == signal.SIG_DFL for *_, sigint, sigterm in results)


def _blocked_signals(task):
    return signal.pthread_sigmask(signal.SIG_BLOCK, set())  # the mask, unchanged


@needs_fork
def test_signals_are_blocked_across_the_fork_only():
    # blocked while the workers start (so none runs the command line's handlers), unblocked in
    # every worker once it has its own handlers, and the driver's mask restored after the forks
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    masks = list(forked_unordered(_blocked_signals, (), _tasks(3), 2))
    assert len(masks) == 3
    for _, mask in masks:
        assert signal.SIGINT not in mask and signal.SIGTERM not in mask
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before


def _sleep_or_return(folder, task):
    (folder / f"pid-{task.index}").write_text(str(os.getpid()))
    if task.index == 1:
        time.sleep(WAIT)
    return task.index


@needs_fork
def test_leaving_a_forked_batch_early_stops_the_workers_still_training(tmp_path):
    psutil = pytest.importorskip("psutil")
    results = forked_unordered(_sleep_or_return, [tmp_path], _tasks(2), 2)
    assert next(results) == (0, 0)
    deadline = time.monotonic() + WAIT
    pid_file = tmp_path / "pid-1"
    while not (pid_file.exists() and pid_file.read_text()):  # created, then written: wait for both
        assert time.monotonic() < deadline
        time.sleep(0.01)
    sleeper = psutil.Process(int(pid_file.read_text()))
    results.close()  # the caller gives up on the batch: the sleeping shard is not waited for
    try:
        sleeper.wait(timeout=10)  # TimeoutExpired if it sleeps on
    except psutil.NoSuchProcess:  # already reaped by the pool
        pass
    assert not sleeper.is_running()


def _fail_on_one(task):
    if task.index == 1:
        raise InputError("shard 1 has no documents")
    return task.index


@needs_fork
def test_an_error_in_a_forked_shard_reaches_the_caller_as_it_is():
    with pytest.raises(InputError, match="shard 1 has no documents"):
        list(LocalBackend(2, start="fork").run(_fail_on_one, (), _tasks(3)))


def test_an_unknown_start_method_is_refused():
    with pytest.raises(ParameterError, match="start='spawn' is invalid"):
        LocalBackend(2, start="spawn")


def test_a_shard_featurized_chunk_by_chunk_has_the_rows_of_featurizing_it_at_once():
    source = CorpusSource.resolve("synthetic-text:2500")
    feat = make_featurizer("hashing", **SMALL_HASH)
    parts, labels, classes, seconds = featurize_rows(source, feat, 300, 2100, chunk_size=256)
    assert [p.shape[0] for p in parts] == [256] * 7 + [8]
    X = stack_rows(parts)
    whole = source.read("train", 300, 2100)
    expected = feat.transform(whole.data)
    assert X.format == "csr" and X.shape == expected.shape and seconds > 0
    assert (X != expected).nnz == 0
    np.testing.assert_array_equal(X.indptr, expected.indptr)
    np.testing.assert_array_equal(X.indices, expected.indices)
    np.testing.assert_array_equal(labels, whole.labels)
    assert list(classes) == sorted(whole.target_names)


def test_stacking_rows_empties_the_list_and_matches_vstack():
    rng = np.random.default_rng(3)
    parts = [sp.random(n, 40, density=0.2, format="csr", random_state=rng) for n in (5, 0, 9, 3)]
    expected = sp.vstack(parts, format="csr")
    stacked = stack_rows(parts)
    assert parts == []  # each part is released once copied
    np.testing.assert_array_equal(stacked.toarray(), expected.toarray())
    np.testing.assert_array_equal(stacked.indptr, expected.indptr)
    assert stacked.indices.dtype == np.int32

    parts = [sp.random(n, 40, density=0.2, format="csr", random_state=rng) for n in (5, 0, 9, 3)]
    expected = sp.vstack(parts, format="csr")
    order = rng.permutation(17)
    shuffled = stack_rows(parts, order)
    assert parts == []
    np.testing.assert_array_equal(shuffled.toarray(), expected.toarray()[order])
    np.testing.assert_array_equal(shuffled.indptr, expected[order].indptr)
    np.testing.assert_array_equal(shuffled.indices, expected[order].indices)

    dense = [np.arange(6.0).reshape(2, 3), np.ones((1, 3))]
    np.testing.assert_array_equal(stack_rows(list(dense), np.array([2, 0, 1])), np.vstack(dense)[[2, 0, 1]])
    np.testing.assert_array_equal(stack_rows(list(dense)), np.vstack(dense))
    mixed = stack_rows([sp.csr_matrix(np.eye(3)), np.ones((1, 3))])
    assert sp.issparse(mixed) and mixed.shape == (4, 3) and mixed.nnz == 6

    with pytest.raises(InputError, match=r"chunks of different widths \[3, 4\]"):
        stack_rows([sp.csr_matrix(np.eye(3)), sp.csr_matrix(np.eye(4))])


@pytest.mark.parametrize("shuffle", [True, False])
def test_epochs_over_row_blocks_are_the_epochs_over_the_stacked_matrix(shuffle):
    source = CorpusSource.resolve("synthetic-text:1500")
    feat = make_featurizer("hashing", **SMALL_HASH)
    parts, labels, classes, _ = featurize_rows(source, feat, 0, 1500, chunk_size=200)
    matrix = sp.vstack(parts, format="csr")
    from_blocks, from_matrix = (CWVar(n_epochs=3, shuffle=shuffle, random_state=4) for _ in range(2))
    fit_epochs(from_blocks, parts, labels, classes)
    fit_epochs(from_matrix, matrix, labels, classes)
    assert parts == []  # consumed: the blocks are released as the first pass's matrix is built
    np.testing.assert_array_equal(from_blocks.coef_, from_matrix.coef_)
    np.testing.assert_array_equal(from_blocks.sigma_, from_matrix.sigma_)
    assert from_blocks.mistakes_ == from_matrix.mistakes_ and len(from_blocks.mistakes_) == 3
