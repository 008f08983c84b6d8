"""Featurized chunks of a document range, read and featurized ahead of the learner.

A stream's time goes to producing its feature matrices, not to learning from them: on
``synthetic-text`` with ``hashing``, generating the text and hashing it take about 97% of a
single-core stream and ``partial_fit`` the rest (the kernels process a 10,000-document chunk in
about 10 ms). :func:`featurized_chunks` therefore reads and featurizes chunks in a pool and in
the calling process whenever the chunk it needs is not ready, at most ``2 * workers`` chunks
ahead of the learner, and the calling process trains on the chunks in corpus order. The pool is
threads where the compiled kernels read and featurize a chunk alone (:func:`in_kernels`: they
release the GIL), else worker processes, whose Python code holding the GIL threads would not
overlap. Each worker reads its own range through the corpus's streaming protocol
(:mod:`textcw.scale.source`), so only the sparse matrices cross processes, and memory is
bounded by the chunks in flight whatever the length of the stream.

The chunks are those of the sequential stream, in the same order: ``[start, start + c)``,
``[start + c, start + 2c)``, ... with ``c = chunk_size``, each featurized alone. So a learner
fed from :func:`featurized_chunks` makes exactly the updates, in exactly the order, that it makes
when this process reads and featurizes every chunk itself (``workers=1``), and ends bit for bit
with the same model (tested).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from textcw.errors import ClusterError, InputError
from textcw.scale.forked import BrokenProcessPool, close_forked, fork_available, forked_executor, forking, run_installed
from textcw.scale.source import CorpusSource, class_labels

def _worker_died() -> tuple:
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    return (TerminatedWorkerError, BrokenProcessPool)


# Chunks in flight per worker: one being featurized, one finished and waiting for the learner.
AHEAD_PER_WORKER = 2


@dataclass
class FeaturizedChunk:
    """Documents ``[start, stop)`` of a pass, as the learner takes them."""

    start: int
    stop: int
    X: object
    labels: np.ndarray
    classes: np.ndarray
    featurize_seconds: float
    epoch: int = 0

    def __len__(self) -> int:
        return self.stop - self.start


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - macOS and Windows have no affinity call
        return os.cpu_count() or 1


# A worker that is a fresh interpreter (where workers cannot be forked) spends about two seconds
# of a core importing numpy, scikit-learn and the kernels before its first chunk: about what one
# core reads and hashes of 200,000 documents of synthetic-text (docs/scale.md). Below that many
# documents per such worker the stream ends before it helps, and it takes a core from the learner.
FRESH_WORKER_DOCUMENTS = 200_000


def default_stream_workers(source: CorpusSource, n_chunks: int, n_documents: int | None = None,
                           featurizer=None, chunk_size: int | None = None) -> int:
    """Featurizing workers for a stream of ``n_chunks`` chunks (``n_documents`` documents in all,
    passes included): one per core, or none.

    Workers pay off only when there are chunks to overlap and each worker can read its own
    range: a corpus without the streaming protocol would be loaded whole in every worker.
    Threads (:func:`in_kernels`, judged on the first chunk of ``chunk_size`` documents when
    ``featurizer`` is given) and forked processes start in milliseconds, so two chunks are
    enough; where workers are fresh interpreters each process needs a share of
    :data:`FRESH_WORKER_DOCUMENTS` documents to pay for a worker's start.
    """
    if not source.streams or n_chunks < 2:
        return 1
    workers = min(available_cores(), n_chunks)
    if n_documents is not None and not fork_available() and not (
            featurizer is not None and chunk_size and in_kernels(featurizer, read_range(source, "train", 0, chunk_size))):
        workers = max(1, min(workers, n_documents // FRESH_WORKER_DOCUMENTS))
    return workers


def chunk_ranges(start: int, stop: int, chunk_size: int) -> list[tuple[int, int]]:
    """The sequential stream's chunks of ``[start, stop)``."""
    return [(lo, min(stop, lo + chunk_size)) for lo in range(start, stop, chunk_size)]


def featurize_range(source: CorpusSource, featurizer, split: str, start: int, stop: int,
                    epoch: int = 0) -> FeaturizedChunk:
    """Read documents ``[start, stop)`` of ``split`` as one chunk and featurize them."""
    return _featurized(source, featurizer, read_range(source, split, start, stop), start, epoch)


def read_range(source: CorpusSource, split: str, start: int, stop: int):
    """Documents ``[start, stop)`` of ``split``, read as one chunk."""
    (data,) = source.chunks(split, start, stop, chunk_size=max(1, stop - start))
    return data


def featurized_chunks(source: CorpusSource, featurizer, split: str, start: int, stop: int,
                      chunk_size: int, *, epochs: int = 1, workers: int = 1) -> Iterator[FeaturizedChunk]:
    """The chunks of ``[start, stop)``, ``epochs`` times over, featurized, in stream order.

    ``workers=1``: each chunk is read and featurized in this process when the learner asks for
    it. ``workers > 1``: ``workers - 1`` pool workers (threads or processes: module docstring)
    and this one read and featurize chunks, at most ``AHEAD_PER_WORKER * workers`` chunks ahead
    of the learner; a worker process that dies fails the stream with a
    :class:`~textcw.errors.ClusterError`.
    """
    if workers <= 1:
        for epoch in range(epochs):
            lo = start
            for data in source.chunks(split, start, stop, chunk_size):
                yield _featurized(source, featurizer, data, lo, epoch)
                lo += len(data)
        return
    ranges = [(epoch, lo, hi) for epoch in range(epochs) for lo, hi in chunk_ranges(start, stop, chunk_size)]
    yield from _ahead(source, featurizer, split, ranges, workers)


def _featurized(source: CorpusSource, featurizer, data, start: int, epoch: int) -> FeaturizedChunk:
    t0 = time.perf_counter()
    X = transform(featurizer, data, source)
    return FeaturizedChunk(start=start, stop=start + len(data), X=X, labels=chunk_labels(data),
                           classes=class_labels(data), featurize_seconds=time.perf_counter() - t0,
                           epoch=epoch)


def chunk_labels(data) -> np.ndarray:
    """The labels of a chunk as one array: a label per document, or for a multi-label data set a
    tuple of labels per document (an object array, since the tuples differ in length)."""
    if not getattr(data, "multilabel", False):
        return np.asarray(data.labels)
    sets = np.empty(len(data), dtype=object)
    for row, labels in enumerate(data.labels):  # one by one: tuples of one length would broadcast
        sets[row] = labels
    return sets


def _ahead(source: CorpusSource, featurizer, split: str, ranges: list, workers: int):
    """Chunks in order, featurized by ``workers - 1`` pool threads or processes and by this one.

    This process featurizes too, whenever the chunk it needs next is not ready: so it is never
    idle while a worker starts and never slower than featurizing alone, and ``workers``
    featurize in all. Where the first chunk was read and featurized in compiled code alone
    (:func:`in_kernels`), the pool is threads of this process: the kernels release the GIL, and
    threads start at once and hand their matrices over without copying them between processes.
    Otherwise processes (:class:`FeaturizingPool`), the stream's own, shut down with it: joblib's
    reusable pool is configured by joblib for its Parallel calls (shard training).
    """
    pool_size = workers - 1
    limit = AHEAD_PER_WORKER * workers  # chunks held or queued at any time, in all
    # Forked workers start in milliseconds, from this process as it is when they are forked, and
    # threads share it: so the first chunk is made here before either starts, and they find the
    # kernels that read and featurize it (and the corpus's file index) loaded. A fresh
    # interpreter takes seconds to start: it is started at once.
    first = read_range(source, split, *ranges[0][1:])
    threaded = in_kernels(featurizer, first)
    pool = None if threaded or fork_available() else FeaturizingPool(source, featurizer, split, ranges[0], pool_size)
    ready: dict[int, Any] = {0: _featurized(source, featurizer, first, ranges[0][1], ranges[0][0])}
    submitted = 1  # chunks [0, submitted) are in `ready` or were already taken
    finished = False
    if pool is None and len(ranges) > 1:
        pool = FeaturizingPool(source, featurizer, split, ranges[0], pool_size, threads=threaded)

    def assign_to_pool(taken: int) -> None:
        nonlocal submitted
        if pool is None or not pool.ready():
            return
        in_pool = sum(1 for item in ready.values() if not isinstance(item, FeaturizedChunk))
        while submitted < len(ranges) and in_pool < AHEAD_PER_WORKER * pool_size and submitted - taken < limit:
            ready[submitted] = pool.submit(*ranges[submitted])
            submitted += 1
            in_pool += 1

    try:
        for position in range(len(ranges)):
            assign_to_pool(position)
            item = ready.pop(position, None)
            if item is None:  # not handed out: this process makes it
                epoch, lo, hi = ranges[position]
                item = featurize_range(source, featurizer, split, lo, hi, epoch)
                submitted = max(submitted, position + 1)
            while not isinstance(item, FeaturizedChunk) and not item.done() and submitted < len(ranges) \
                    and submitted - position < limit:
                epoch, lo, hi = ranges[submitted]  # while the pool works: the next chunk, here
                ready[submitted] = featurize_range(source, featurizer, split, lo, hi, epoch)
                submitted += 1
            yield item if isinstance(item, FeaturizedChunk) else item.result()
        finished = True
    except _worker_died() as exc:
        raise ClusterError(
            f"a featurizing worker process died while streaming {source.spec} ({exc}); run again, "
            "or with --workers 1 to featurize in this process"
        ) from None
    finally:
        for item in ready.values():  # a stream stopped early leaves no work queued behind it
            if not isinstance(item, FeaturizedChunk):
                item.cancel()
        if pool is not None:
            pool.close(finished)


def in_kernels(featurizer, data) -> bool:
    """Whether featurizing the chunk ``data`` runs in compiled code alone, which releases the GIL:
    a block of ASCII documents as a line-oriented corpus reads them (:class:`TextBlock`), for a
    featurizer of :mod:`textcw.features.native` whose settings the kernels compute. Documents
    scikit-learn's code featurizes (other text, other featurizers) hold the GIL, and threads
    would take turns on one core."""
    from textcw.features import native
    from textcw.features.hashing import Hashing
    from textcw.features.text import WordCounts

    docs = data.data
    return isinstance(docs, native.TextBlock) and docs.ascii and isinstance(featurizer, (Hashing, WordCounts)) \
        and native.supports(featurizer)


class FeaturizingPool:
    """``size`` threads or processes featurizing chunks of one split for :func:`featurized_chunks`.

    ``threads``: threads of this process, for chunks the kernels featurize (:func:`in_kernels`).
    Otherwise processes forked from this one where that is safe
    (:func:`textcw.scale.forked.fork_available`): they start in milliseconds with everything
    imported, and the source and featurizer are inherited, not pickled per chunk. Elsewhere a
    ``loky`` pool of fresh interpreters, which take seconds to import numpy, scikit-learn and the
    kernels: its first task reads and featurizes one document of ``first`` (``(epoch, start,
    stop)``), so that :meth:`ready` says when a worker is really ready to featurize, with the
    corpus indexed and the kernels loaded.
    """

    def __init__(self, source: CorpusSource, featurizer, split: str, first: tuple, size: int, *,
                 threads: bool = False):
        self.args = (source, featurizer, split)
        self.warm = None
        if threads:
            from concurrent.futures import ThreadPoolExecutor

            self.kind = "threads"
            self.executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="textcw-featurize")
        elif fork_available():
            self.kind = "forked"
            self.executor = forked_executor(_featurize_task, self.args, size)
            with forking():  # the pool forks its workers at its first submission
                self.warm = self.executor.submit(run_installed, None)
        else:
            from joblib.externals.loky import ProcessPoolExecutor

            self.kind = "fresh"
            self.executor = ProcessPoolExecutor(max_workers=size)
            _, lo, _ = first
            self.warm = self.executor.submit(featurize_range, source, featurizer, split, lo, lo + 1)

    def ready(self) -> bool:
        """Whether chunks may be handed out: threads and a forked pool at once (forked workers
        start in milliseconds); a fresh one once a worker has featurized its first document (a
        worker that could not start fails here)."""
        if self.kind != "fresh":
            return True
        if not self.warm.done():
            return False
        self.warm.result()
        return True

    def submit(self, epoch: int, lo: int, hi: int):
        if self.kind == "forked":
            return self.executor.submit(run_installed, (epoch, lo, hi))
        return self.executor.submit(featurize_range, *self.args, lo, hi, epoch)

    def close(self, finished: bool) -> None:
        """Shut the pool down without waiting for work nobody will collect: after a whole stream
        every chunk was taken, so a worker still starting (a fresh interpreter importing its
        modules) is stopped rather than waited for; a thread ends with the chunk it is on."""
        if self.kind == "threads":
            self.executor.shutdown(wait=True, cancel_futures=True)
        elif self.kind == "forked":
            close_forked(self.executor, finished)
        else:
            self.executor.shutdown(wait=True, kill_workers=True)


def _featurize_task(source: CorpusSource, featurizer, split: str, task: tuple | None):
    """A forked worker's task: chunk ``(epoch, start, stop)``, or ``None``, a first task that only
    starts the workers."""
    if task is None:
        return None
    epoch, lo, hi = task
    return featurize_range(source, featurizer, split, lo, hi, epoch)


def transform(featurizer, data, source: CorpusSource):
    """``featurizer.transform`` of a chunk, refusing non-text documents for a text featurizer."""
    analyzer = getattr(featurizer, "build_analyzer", None)
    if analyzer is not None and len(data) and not isinstance(data.data[0], (str, bytes)):
        raise InputError(
            f"{source.spec} holds {type(data.data[0]).__name__} documents, not text, and "
            f"{type(featurizer).__name__} reads text: use the corpus's own featurizer "
            "(--stream needs a text corpus)"
        )
    return featurizer.transform(data.data)


@dataclass(frozen=True)
class StreamStatus:
    """Where a stream is, after a chunk: what a progress display shows."""

    documents: int  # training documents learned from so far (over all passes)
    total: int  # documents the stream will have learned from at the end
    mistakes: int  # online mistakes so far: predictions made before each update that were wrong
    seconds: float  # since the stream started

    @property
    def documents_per_second(self) -> float:
        return self.documents / self.seconds if self.seconds > 0 else 0.0

    @property
    def online_error(self) -> float:
        """The running online error rate (mistakes / documents), the papers' cumulative error."""
        return self.mistakes / self.documents if self.documents else 0.0
