"""Streams read and featurized ahead by worker processes: the same model, in bounded memory,
and the progress contract (documents, throughput, running online error)."""

from __future__ import annotations

import io

import numpy as np
import pytest
from rich.console import Console

from textcw.errors import ParameterError
from textcw.pipeline import make_featurizer
from textcw.scale import train_stream
from textcw.scale.pipelined import (
    AHEAD_PER_WORKER, StreamStatus, chunk_ranges, default_stream_workers, featurized_chunks,
)
from textcw.scale.source import CorpusSource

SMALL_HASH = {"n_features": 2**14}


def state_of(result) -> dict:
    learner = result.model.named_steps["learner"]
    return {name: np.asarray(value) for name, value in learner.fitted_state().items()}


@pytest.mark.parametrize("learner,epochs", [("cw-var", 2), ("arow", 1)])
def test_workers_give_the_sequential_stream_model_bit_for_bit(learner, epochs):
    # 2,300 documents in chunks of 400: a short last chunk, and two passes for cw-var.
    kwargs = dict(chunk_size=400, seed=3, epochs=epochs, featurizer_params=SMALL_HASH)
    sequential = train_stream("synthetic-text:2300", learner, workers=1, **kwargs)
    ahead = train_stream("synthetic-text:2300", learner, workers=2, **kwargs)
    assert (sequential.workers, ahead.workers) == (1, 2)
    one, two = state_of(sequential), state_of(ahead)
    assert one.keys() == two.keys() and one
    for name in one:
        assert np.array_equal(one[name], two[name]), name
    assert ahead.mistakes == sequential.mistakes and len(ahead.mistakes) == epochs
    assert ahead.accuracy == sequential.accuracy and ahead.n_train == 2300


def test_chunks_read_ahead_are_the_sequential_chunks_in_order():
    source = CorpusSource.resolve("synthetic-text:2500")
    feat = make_featurizer("hashing", **SMALL_HASH)
    here = list(featurized_chunks(source, feat, "train", 300, 2500, 700, epochs=2, workers=1))
    there = list(featurized_chunks(source, feat, "train", 300, 2500, 700, epochs=2, workers=2))
    expected = [(e, lo, hi) for e in (0, 1) for lo, hi in [(300, 1000), (1000, 1700), (1700, 2400), (2400, 2500)]]
    assert [(c.epoch, c.start, c.stop) for c in here] == expected
    assert [(c.epoch, c.start, c.stop) for c in there] == expected
    for a, b in zip(here, there):
        assert (a.X != b.X).nnz == 0 and np.array_equal(a.labels, b.labels)
        assert list(a.classes) == list(b.classes) == ["neg", "pos"]


def test_chunk_ranges_cover_the_range_once():
    assert chunk_ranges(0, 10, 4) == [(0, 4), (4, 8), (8, 10)]
    assert chunk_ranges(5, 5, 4) == []


def test_default_workers_stay_in_process_when_there_is_nothing_to_overlap():
    streaming = CorpusSource.resolve("synthetic-text:1000")
    assert default_stream_workers(streaming, 1) == 1  # one chunk: nothing to read ahead
    assert 1 <= default_stream_workers(streaming, 50) <= 50
    # a corpus without the streaming protocol would be loaded whole by every worker
    loaded = CorpusSource.resolve("synthetic")
    assert not loaded.streams and default_stream_workers(loaded, 50) == 1


def test_default_workers_count_what_a_worker_costs_to_start(monkeypatch):
    from textcw.scale import pipelined

    streaming = CorpusSource.resolve("synthetic-text:1000")
    monkeypatch.setattr(pipelined, "available_cores", lambda: 4)
    monkeypatch.setattr(pipelined, "fork_available", lambda: True)  # workers start in milliseconds
    assert default_stream_workers(streaming, 3, 30_000) == 3
    assert default_stream_workers(streaming, 100, 10**6) == 4
    monkeypatch.setattr(pipelined, "fork_available", lambda: False)  # fresh interpreters: seconds each
    per_worker = pipelined.FRESH_WORKER_DOCUMENTS
    assert default_stream_workers(streaming, 10, 100_000) == 1
    assert default_stream_workers(streaming, 100, 2 * per_worker - 1) == 1
    assert default_stream_workers(streaming, 100, 2 * per_worker) == 2
    assert default_stream_workers(streaming, 100, 10 * per_worker) == 4
    assert default_stream_workers(streaming, 1, 10 * per_worker) == 1


def test_the_read_ahead_is_bounded(monkeypatch):
    # Flat memory: when the learner takes chunk i, at most AHEAD_PER_WORKER * workers chunks
    # beyond it have been started (by the pool or by this process), however long the stream.
    # The pool is swapped for threads (the worker processes are tested above), and every chunk
    # started anywhere is counted.
    from concurrent.futures import ThreadPoolExecutor

    from textcw.scale import pipelined

    started = []
    featurize = pipelined._featurized

    def counting(source, featurizer, data, start, epoch):
        started.append(start)
        return featurize(source, featurizer, data, start, epoch)

    class ThreadPool:
        submitted = 0

        def __init__(self, source, featurizer, split, first, size, threads=False):
            self.executor = ThreadPoolExecutor(size)
            self.args = (source, featurizer, split)

        def ready(self):
            return True

        def submit(self, epoch, lo, hi):
            type(self).submitted += 1
            return self.executor.submit(pipelined.featurize_range, *self.args, lo, hi, epoch)

        def close(self, finished):
            self.executor.shutdown(wait=True)

    monkeypatch.setattr(pipelined, "_featurized", counting)
    monkeypatch.setattr(pipelined, "FeaturizingPool", ThreadPool)
    source = CorpusSource.resolve("synthetic-text:6000")
    feat = make_featurizer("hashing", **SMALL_HASH)
    taken = []
    for i, chunk in enumerate(featurized_chunks(source, feat, "train", 0, 6000, 500, workers=2)):
        assert len(started) <= i + 1 + AHEAD_PER_WORKER * 2
        taken.append((chunk.start, chunk.stop))
    assert taken == chunk_ranges(0, 6000, 500)
    assert sorted(started) == [lo for lo, _ in taken]  # each chunk made once
    assert ThreadPool.submitted > 0


def opened_pools(monkeypatch) -> list:
    """The featurizing pools the streams open from now on, in order."""
    from textcw.scale import pipelined

    pools = []
    opened = pipelined.FeaturizingPool

    def recording(*args, **kwargs):
        pools.append(opened(*args, **kwargs))
        return pools[-1]

    monkeypatch.setattr(pipelined, "FeaturizingPool", recording)
    return pools


@pytest.mark.parametrize("forked", [True, False])
def test_forked_and_fresh_worker_pools_make_the_same_chunks(monkeypatch, forked):
    # Forked workers (Linux) and loky's fresh interpreters (elsewhere, or on Python 3.12+ with
    # threads running) featurize the same chunks; the pool's workers really take part.
    from textcw.scale import forked as forked_module
    from textcw.scale import pipelined

    if forked and not forked_module.fork_available():
        pytest.skip("this platform cannot fork workers")
    monkeypatch.setattr(pipelined, "fork_available", lambda: forked)
    pools = opened_pools(monkeypatch)
    source = CorpusSource.resolve("synthetic-text:4000")
    feat = make_featurizer("hashing", **SMALL_HASH)
    here = list(featurized_chunks(source, feat, "train", 0, 4000, 250, workers=1))
    there = list(featurized_chunks(source, feat, "train", 0, 4000, 250, workers=2))
    assert [(c.start, c.stop) for c in there] == [(c.start, c.stop) for c in here] == chunk_ranges(0, 4000, 250)
    for a, b in zip(here, there):
        assert (a.X != b.X).nnz == 0 and np.array_equal(a.labels, b.labels)
    assert len(pools) == 1 and pools[0].kind == ("forked" if forked else "fresh")  # synthetic text: str documents


def write_vw(path, n, word="orbit", from_line=0):
    """``n`` lines of a two-label ``label | text`` file (ASCII, unless ``word`` is not: it stands
    in the positive lines from line ``from_line`` on, ``orbit`` before)."""
    rng = np.random.default_rng(0)
    vocabulary = [f"w{i}" for i in range(300)]
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            label = 1 if i % 3 else -1
            words = " ".join(rng.choice(vocabulary, size=12))
            fh.write(f"{label} | {words} {(word if i >= from_line else 'orbit') if label == 1 else 'dose'} {i % 7}\n")
    return path


# "órbita@1000": ASCII lines first, so threads, which later featurize lines scikit-learn's code reads
@pytest.mark.parametrize("word,kind", [("orbit", "threads"), ("órbita", "forked"), ("órbita@1000", "threads")])
def test_a_stream_featurized_in_the_kernels_reads_ahead_on_threads_with_the_same_model(tmp_path, monkeypatch,
                                                                                      word, kind):
    # ASCII lines of a file, hashed by the kernels, which release the GIL: threads of this
    # process; text scikit-learn's code featurizes: processes, as before. The model is the
    # sequential stream's, bit for bit, either way.
    from textcw.scale import forked as forked_module

    if kind == "forked" and not forked_module.fork_available():
        pytest.skip("this platform cannot fork workers")
    pools = opened_pools(monkeypatch)
    word, _, from_line = word.partition("@")
    train = write_vw(tmp_path / "train.vw", 2300, word, int(from_line or 0))
    test = write_vw(tmp_path / "test.vw", 300, word)
    kwargs = dict(chunk_size=400, seed=3, epochs=2, featurizer_params=SMALL_HASH)
    sequential = train_stream(f"vw:{train},{test}", "arow", workers=1, **kwargs)
    assert pools == []
    ahead = train_stream(f"vw:{train},{test}", "arow", workers=2, **kwargs)
    assert [pool.kind for pool in pools] == [kind] and ahead.workers == 2
    one, two = state_of(sequential), state_of(ahead)
    assert one.keys() == two.keys() and one
    for name in one:
        assert np.array_equal(one[name], two[name]), name
    assert ahead.mistakes == sequential.mistakes and ahead.accuracy == sequential.accuracy > 0.9


def test_where_workers_cannot_be_forked_threads_need_no_share_of_documents(tmp_path, monkeypatch):
    # Fresh interpreters cost seconds each, so without fork a worker needs its share of
    # FRESH_WORKER_DOCUMENTS; threads start at once, so a stream the kernels featurize gets a
    # worker per core (judged on its first chunk, as the pool itself is chosen).
    from textcw.scale import pipelined

    monkeypatch.setattr(pipelined, "available_cores", lambda: 4)
    monkeypatch.setattr(pipelined, "fork_available", lambda: False)
    feat = make_featurizer("hashing", **SMALL_HASH)
    for word, workers in (("orbit", 4), ("órbita", 1)):
        folder = tmp_path / word
        folder.mkdir()
        source = CorpusSource.resolve(f"vw:{write_vw(folder / 'train.vw', 3000, word)},{write_vw(folder / 'test.vw', 10)}")
        assert default_stream_workers(source, 6, 3000, feat, 500) == workers
        assert default_stream_workers(source, 6, 3000) == 1  # no featurizer given: no judging


def test_only_blocks_of_ascii_text_for_a_kernel_featurizer_are_featurized_in_the_kernels():
    from sklearn.feature_extraction.text import HashingVectorizer

    from textcw.corpus.base import Dataset
    from textcw.features.native import TextBlock
    from textcw.scale.pipelined import in_kernels

    def block(*docs):
        raw = [d.encode() for d in docs]
        offsets = np.cumsum([0] + [len(r) for r in raw])
        return Dataset(data=TextBlock(np.frombuffer(b"".join(raw), dtype=np.uint8), offsets),
                       target=np.zeros(len(docs), dtype=np.int64), target_names=["a"])

    hashing = make_featurizer("hashing", **SMALL_HASH)
    assert in_kernels(hashing, block("moon rocket", "dose pill"))
    assert in_kernels(make_featurizer("tfidf"), block("moon rocket"))
    assert not in_kernels(hashing, block("moon rocket", "dosis píldora"))  # scikit-learn's code reads it
    assert not in_kernels(hashing, Dataset(data=["moon rocket"], target=np.zeros(1, dtype=np.int64),
                                           target_names=["a"]))  # strings, not a block
    assert not in_kernels(make_featurizer("hashing").set_params(tokenizer=str.split), block("moon rocket"))
    assert not in_kernels(HashingVectorizer(), block("moon rocket"))  # not a textcw featurizer


class _DiesInAWorker:
    """A featurizer that kills the process featurizing it unless that is the test's own."""

    def __init__(self, featurizer, pid):
        self.featurizer, self.pid = featurizer, pid

    def transform(self, docs):
        import os
        import signal

        if os.getpid() != self.pid:
            os.kill(os.getpid(), signal.SIGKILL)
        return self.featurizer.transform(docs)


def test_a_featurizing_worker_that_dies_fails_the_stream_with_one_clear_error():
    import os

    from textcw.errors import ClusterError
    from textcw.scale.forked import fork_available

    if not fork_available():
        pytest.skip("the dying featurizer is inherited by forked workers only")
    source = CorpusSource.resolve("synthetic-text:3000")
    feat = _DiesInAWorker(make_featurizer("hashing", **SMALL_HASH), os.getpid())
    with pytest.raises(ClusterError, match="a featurizing worker process died while streaming synthetic-text:3000"):
        list(featurized_chunks(source, feat, "train", 0, 3000, 100, workers=2))


def test_monitor_sees_documents_throughput_and_running_online_error():
    seen: list[StreamStatus] = []
    progress = []
    result = train_stream("synthetic-text:2500", "pa", chunk_size=1000, epochs=2, workers=2,
                          featurizer_params=SMALL_HASH, monitor=seen.append,
                          progress=lambda stage, done, total: progress.append((stage, done, total)))
    assert [s.documents for s in seen] == [1000, 2000, 2500, 3500, 4500, 5000]
    assert all(s.total == 5000 for s in seen)
    # mistakes add up to the learner's own count, and never go down
    assert [b.mistakes - a.mistakes >= 0 for a, b in zip(seen, seen[1:])] == [True] * 5
    assert seen[-1].mistakes == sum(result.mistakes) > 0
    assert seen[-1].online_error == pytest.approx(sum(result.mistakes) / 5000)
    assert all(s.seconds > 0 and s.documents_per_second == pytest.approx(s.documents / s.seconds) for s in seen)
    # the plain progress contract is kept: ("documents", done, total) after every chunk
    docs = [(d, t) for stage, d, t in progress if stage == "documents"]
    assert docs == [(0, 5000)] + [(s.documents, 5000) for s in seen]


def test_stream_status_before_any_document():
    status = StreamStatus(documents=0, total=10, mistakes=0, seconds=0.0)
    assert status.online_error == 0.0 and status.documents_per_second == 0.0


@pytest.mark.parametrize("workers", [0, -1, True, 1.5])
def test_invalid_workers_are_refused(workers):
    with pytest.raises(ParameterError, match="workers must be an integer >= 1"):
        train_stream("synthetic-text:1000", "pa", workers=workers)


def test_stream_progress_is_silent_off_a_terminal_and_shows_rate_and_error_on_one():
    from textcw.cli.train import stream_progress, stream_status_text

    with stream_progress(Console(file=io.StringIO())) as (report, monitor):
        assert monitor is None
        report("documents", 0, 10)  # a no-op, callable all the same
    status = StreamStatus(documents=120_000, total=1_000_000, mistakes=30_000, seconds=3.0)
    assert stream_status_text(status) == "40,000 docs/s  online error 25.00%"
    screen = io.StringIO()
    with stream_progress(Console(file=screen, force_terminal=True, width=120)) as (report, monitor):
        report("documents", 0, 1_000_000)
        monitor(status)
    shown = screen.getvalue()
    assert "40,000 docs/s" in shown and "online error 25.00%" in shown and "120000/1000000" in shown


def test_cli_stream_workers_and_their_errors(capsys):
    import json

    from cli_run import one_line_error, run

    base = ["train", "--corpus", "synthetic-text:2000", "--learner", "cw-var", "--featurizer-param",
            "n_features=16384", "--chunk-size", "500"]
    code, out, _ = run(capsys, *base, "--stream", "--workers", "2", "--json")
    ahead = json.loads(out)
    code1, out1, _ = run(capsys, *base, "--stream", "--workers", "1", "--json")
    assert code == code1 == 0 and (ahead["workers"], json.loads(out1)["workers"]) == (2, 1)
    assert ahead["accuracy"] == json.loads(out1)["accuracy"] and ahead["mistakes"] == json.loads(out1)["mistakes"]
    code, _, err = run(capsys, *base, "--workers", "2")
    assert code == 2 and "--workers applies to shard training or streaming; add --shards N or --stream" in one_line_error(err)
    code, _, err = run(capsys, *base, "--stream", "--workers", "0")
    assert code == 2 and "--workers 0 is invalid; give at least 1 process" in one_line_error(err)
