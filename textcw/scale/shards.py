"""Training one model per disjoint shard of a corpus (JMLR 2012 section 7.10; ICML 2008 section 5.3).

The training split is cut into ``n`` contiguous parts (:func:`~textcw.scale.source.shard_bounds`);
shard ``i`` is trained by :func:`train_shard` on whichever process or machine runs it, which reads
documents ``[start_i, stop_i)`` itself. Everything a shard depends on is fixed before it starts:
its range, the featurizer (fitted once on the whole training split, or one that learns nothing,
like ``hashing``) and its seed, drawn from ``numpy.random.SeedSequence(seed).spawn(n)``. So a
shard that is run again after its worker died returns exactly the model it would have returned.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.utils import get_tags

from textcw.errors import InputError, ParameterError
from textcw.scale.pipelined import featurized_chunks
from textcw.scale.source import CHUNK_SIZE, CorpusSource, class_labels, shard_bounds
from textcw.scale.tuning import settle


@dataclass(frozen=True)
class ShardTask:
    """Shard ``index`` of ``n_shards``, trained with ``random_state=seed``."""

    index: int
    n_shards: int
    seed: int | None


@dataclass
class ShardResult:
    """A trained shard model and what it cost."""

    index: int
    model: object
    start: int
    stop: int
    seconds: float
    featurize_seconds: float
    mistakes_per_pass: list = field(default_factory=list)
    cpu_seconds: float = 0.0  # CPU time of the process that trained it: wall time minus waiting

    @property
    def n_documents(self) -> int:
        return self.stop - self.start


def shard_seeds(seed: int | None, n_shards: int) -> list[int | None]:
    """Independent, reproducible learner seeds for ``n_shards`` shards (``None``: unseeded).

    One shard keeps ``seed`` itself, so one shard is exactly ordinary training.
    """
    if seed is None or n_shards == 1:
        return [seed] * n_shards
    return [int(child.generate_state(1)[0]) for child in np.random.SeedSequence(seed).spawn(n_shards)]


def needs_fit(featurizer) -> bool:
    """Whether ``featurizer`` learns from the data (a vocabulary) or, like hashing, does not."""
    return bool(get_tags(featurizer).requires_fit)


def fit_featurizer(source: CorpusSource, featurizer):
    """Fit ``featurizer`` on the whole training split (run on a worker, or in this process)."""
    data = source.read("train")
    return clone(featurizer).fit(data.data, data.labels)


@dataclass
class FeaturizedSplit:
    """The whole training split as a matrix, from which shard tasks take their rows."""

    X: Any
    labels: np.ndarray
    classes: np.ndarray

    @property
    def n_documents(self) -> int:
        return self.X.shape[0]


def fit_and_featurize(source: CorpusSource, featurizer):
    """``(fitted featurizer, FeaturizedSplit)``: the vocabulary learned and every document featurized
    in one pass (``fit_transform``), for local shard tasks that then need only their rows.

    Each row of a fitted featurizer's matrix depends on its document alone, so rows
    ``[start, stop)`` are what the shard would get by featurizing its own documents.
    """
    data = source.read("train")
    fitted = clone(featurizer)
    X = fitted.fit_transform(data.data, data.labels)
    return fitted, FeaturizedSplit(X=X, labels=np.asarray(data.labels), classes=class_labels(data))


def train_rows(split: FeaturizedSplit, template, task: ShardTask) -> ShardResult:
    """:func:`train_shard` (``stream=False``) on rows of a split featurized in advance."""
    t0, cpu0 = time.perf_counter(), time.process_time()
    start, stop = shard_bounds(split.n_documents, task.index, task.n_shards)
    model = clone(template)
    model.set_params(random_state=task.seed)
    fit_epochs(model, split.X[start:stop], split.labels[start:stop], split.classes)
    return ShardResult(index=task.index, model=model, start=start, stop=stop,
                       seconds=time.perf_counter() - t0, featurize_seconds=0.0,
                       mistakes_per_pass=list(model.mistakes_), cpu_seconds=time.process_time() - cpu0)


def train_shard(source: CorpusSource, featurizer, template, task: ShardTask, *, stream: bool = False,
                chunk_size: int = CHUNK_SIZE, progress: Callable[[int], None] | None = None,
                workers: int = 1, on_chunk: Callable[[int, int], None] | None = None,
                tune_documents: int | None = None, honest=None) -> ShardResult:
    """Train a copy of ``template`` on shard ``task.index`` of ``source``'s training split.

    ``stream=False``: the shard is featurized whole (:func:`featurize_rows`, chunk by chunk) and
    trained for ``n_epochs`` passes,
    shuffled with the shard's seed; the result is exactly ``fit`` on the shard's documents, except
    that every model knows every label of the task, so shard models always share one label set.
    ``stream=True``: chunks of ``chunk_size`` documents go through ``featurizer.transform`` into
    ``partial_fit`` in corpus order, ``n_epochs`` times; memory is one chunk and the model (plus
    the chunks read ahead by ``workers`` featurizing processes, see
    :func:`textcw.scale.pipelined.featurized_chunks`; the model is the same for any ``workers``).
    ``progress(documents_done)`` and ``on_chunk(documents_done, mistakes_so_far)`` are called
    after every chunk (``stream=True``). ``tune_documents``: an ``"auto"`` learner compares its
    candidates over that many documents, then keeps the best alone (:mod:`textcw.scale.tuning`).
    ``honest`` (a :class:`textcw.scale.calibration.HonestScores`, ``stream=True``) records the
    first pass's chunks as the model scores them before learning them.
    """
    t0, cpu0 = time.perf_counter(), time.process_time()
    start, stop = shard_bounds(source.n_documents("train"), task.index, task.n_shards)
    model = clone(template)
    model.set_params(random_state=task.seed)
    if stream:
        passes, featurize = _learn_stream(model, source, featurizer, start, stop, chunk_size=chunk_size,
                                          workers=workers, progress=progress, on_chunk=on_chunk,
                                          tune_documents=tune_documents, honest=honest)
    else:
        parts, labels, classes, featurize = featurize_rows(source, featurizer, start, stop, chunk_size)
        fit_epochs(model, parts, labels, classes)
        passes = list(model.mistakes_)
    return ShardResult(index=task.index, model=model, start=start, stop=stop,
                       seconds=time.perf_counter() - t0, featurize_seconds=featurize,
                       mistakes_per_pass=passes, cpu_seconds=time.process_time() - cpu0)


def _learn_stream(model, source: CorpusSource, featurizer, start: int, stop: int, *, chunk_size: int,
                  workers: int, progress, on_chunk, tune_documents: int | None, honest) -> tuple[list[int], float]:
    """``partial_fit`` of ``model`` on training documents ``[start, stop)``, chunk by chunk,
    ``n_epochs`` passes (:func:`train_shard` with ``stream=True``); ``(mistakes per pass,
    seconds spent featurizing)``."""
    passes: list[int] = [0] * int(model.n_epochs)
    done = mistakes = 0
    featurize = 0.0
    for chunk in featurized_chunks(source, featurizer, "train", start, stop, chunk_size,
                                   epochs=int(model.n_epochs), workers=workers):
        featurize += chunk.featurize_seconds
        calls = len(getattr(model, "mistakes_", []))
        if honest is not None and chunk.epoch == 0:
            honest.add(model, chunk.X, chunk.labels, stop=done + len(chunk),
                       tuning=tune_documents is not None and done < tune_documents)
        model.partial_fit(chunk.X, chunk.labels, classes=chunk.classes)
        made = int(sum(model.mistakes_[calls:]))
        passes[chunk.epoch] += made
        mistakes += made
        done += len(chunk)
        if tune_documents is not None and done >= tune_documents:
            settle(model)
        if progress is not None:
            progress(done)
        if on_chunk is not None:
            on_chunk(done, mistakes)
    return passes, featurize


def featurize_rows(source: CorpusSource, featurizer, start: int, stop: int, chunk_size: int = CHUNK_SIZE):
    """``(parts, labels, classes, featurize_seconds)`` of training documents ``[start, stop)``.

    Read and featurized ``chunk_size`` documents at a time: ``parts`` are the chunks' matrices,
    whose rows are those of featurizing the range at once (a featurizer that learns nothing, or
    was fitted beforehand, maps each document alone), without holding every document's text and
    the featurizer's intermediate arrays for all of them at the same time (for ``hashing`` about
    2.5 times the final matrix). :func:`fit_epochs` takes the parts as they are.
    """
    parts, labels, classes, seconds = [], [], None, 0.0
    for chunk in featurized_chunks(source, featurizer, "train", start, stop, chunk_size):
        parts.append(chunk.X)
        labels.append(chunk.labels)
        classes, seconds = chunk.classes, seconds + chunk.featurize_seconds
    return parts, np.concatenate(labels), classes, seconds


def stack_rows(parts: list, order: np.ndarray | None = None):
    """The matrices of ``parts`` one below the other, rows taken in ``order`` if given (row ``i``
    of the result is row ``order[i]`` of the stack); ``parts`` is emptied.

    CSR parts are copied into arrays allocated once and released part by part as they are
    copied, so the peak memory is about the result plus one part, and a shuffled pass needs no
    second, shuffled copy of the stack. Dense parts give a dense array; a mix of the two a CSR
    matrix.
    """
    if len(parts) == 1 and order is None:
        return parts.pop()
    if not all(sp.issparse(p) for p in parts):
        stacked = sp.vstack(parts, format="csr") if any(sp.issparse(p) for p in parts) else np.vstack(parts)
        parts.clear()
        return stacked if order is None else stacked[order]
    widths = {p.shape[1] for p in parts}
    if len(widths) != 1:
        raise InputError(f"the featurizer gave chunks of different widths {sorted(widths)}; it must map "
                         "every document to the same columns")
    parts[:] = [p.tocsr() for p in parts]
    lengths = np.concatenate([np.diff(p.indptr) for p in parts]).astype(np.int64)
    n_rows, nnz = len(lengths), int(lengths.sum())
    index = np.int32 if max(nnz, *widths) < np.iinfo(np.int32).max else np.int64
    position = np.arange(n_rows)  # row of the stack -> row of the result
    if order is not None:
        position[order] = np.arange(n_rows)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(lengths[order] if order is not None else lengths, out=indptr[1:])
    data = np.empty(nnz, dtype=np.result_type(*(p.dtype for p in parts)))
    indices = np.empty(nnz, dtype=index)
    parts.reverse()
    row = 0
    while parts:
        part = parts.pop()  # the list holds no reference any more: freed once copied
        n = part.shape[0]
        counts = lengths[row:row + n]
        # Where each stored value of the part goes: its row's start in the result plus its
        # offset within the row.
        target = np.repeat(indptr[position[row:row + n]] - part.indptr[:-1], counts) + np.arange(part.nnz)
        data[target] = part.data
        indices[target] = part.indices
        row += n
        del part, target
    return sp.csr_matrix((data, indices, indptr.astype(index)), shape=(n_rows, widths.pop()), copy=False)


def fit_epochs(model, X, y, classes) -> None:
    """``model.fit(X, y)`` with the label set fixed to ``classes``.

    The same passes as :meth:`OnlineLinearClassifier.fit` (a ``RandomState(random_state)``
    permutation per epoch when ``shuffle``), run through ``partial_fit`` so that a shard that
    lacks a label still gets it in ``classes_``. ``X`` may be a list of row blocks
    (:func:`featurize_rows`), consumed: the first pass's matrix is stacked from them directly in
    its order, and each later pass's is taken from the previous one, so the stack is never held
    twice.
    """
    rng = np.random.RandomState(model.random_state)
    y = np.asarray(y)
    n = len(y)
    parts = X if isinstance(X, list) else None
    arranged = current = None  # with parts: the matrix of the last pass, and the order of its rows
    for _ in range(model.n_epochs):
        order = rng.permutation(n) if model.shuffle else np.arange(n)
        if parts is None:
            rows = X[order]
        elif arranged is None:
            rows = arranged = stack_rows(parts, order if model.shuffle else None)
        elif not model.shuffle:
            rows = arranged
        else:  # row i must be row order[i] of the stack, which is row inverse[order[i]] of `arranged`
            inverse = np.empty(n, dtype=np.int64)
            inverse[current] = np.arange(n)
            rows = arranged = arranged[inverse[order]]
        current = order
        model.partial_fit(rows, y[order], classes=classes)
        del rows


# More shards than this is a mistake, not a plan: each shard is a task with its own model and
# seed, and the combination's gain has long flattened out (JMLR 2012 Figure 6 uses 10). The
# bound keeps a typo such as --shards 20000000 from allocating gigabytes of tasks and seeds.
MAX_SHARDS = 10_000


def check_shard_count(n_shards) -> None:
    if isinstance(n_shards, bool) or not isinstance(n_shards, int) or not 1 <= n_shards <= MAX_SHARDS:
        raise ParameterError(f"shards={n_shards!r} is invalid; give an integer from 1 to {MAX_SHARDS:,}")


def iter_shards(backend, source: CorpusSource, featurizer, template, n_shards: int, *, seed: int | None,
                stream: bool = False, chunk_size: int = CHUNK_SIZE,
                on_done: Callable[[int], None] | None = None,
                rows: FeaturizedSplit | None = None) -> Iterator[ShardResult]:
    """Train the ``n_shards`` shard models on ``backend``; yield them in shard order.

    ``featurizer`` is a fitted featurizer, a featurizer that needs no fitting, or a handle from
    ``backend.submit(fit_featurizer, ...)`` (on Dask: a future, so the shards receive it from the
    worker that fitted it). With ``rows`` (the split featurized by :func:`fit_and_featurize`),
    each task takes its rows of that matrix instead of reading and featurizing its documents;
    the local backend hands the matrix's arrays to its processes memory-mapped, not pickled
    per task.
    """
    check_shard_count(n_shards)
    if source.streams:
        # Counting is free here, so a shard count larger than the corpus fails before any worker
        # starts; other corpora are counted by the workers, which load them anyway.
        shard_bounds(source.n_documents("train"), n_shards - 1, n_shards)
    tasks = [ShardTask(i, n_shards, s) for i, s in enumerate(shard_seeds(seed, n_shards))]
    fn: Callable
    shared: tuple
    if rows is not None:
        shard_bounds(rows.n_documents, n_shards - 1, n_shards)
        fn, shared = train_rows, (rows, template)
    else:
        fn, shared = _train_shard_task(stream, chunk_size), (source, featurizer, template)
    if SHARD_GATE is not None:
        fn = ShardGate(fn, str(SHARD_GATE))
    yield from backend.run(fn, shared, tasks, on_done)


# Test hook: a folder (set by a test in the process that submits the shards) at which every shard
# task stops before training; see :class:`ShardGate`. ``None`` (always, outside tests): no gate.
SHARD_GATE: str | os.PathLike | None = None
GATE_TIMEOUT = 120.0


@dataclass(frozen=True)
class ShardGate:
    """A shard function that announces itself and waits for permission before running ``fn``.

    The worker process running shard ``i`` creates ``started-<i>-<pid>`` in ``folder``, then
    waits until ``folder/go`` exists (at most ``timeout`` seconds, then it fails with
    ``TimeoutError``). A test can so stop a worker in a known state - inside a shard, before
    training - kill it, and then let the job go on, without depending on timing.
    """

    fn: Callable
    folder: str
    timeout: float = GATE_TIMEOUT

    @property
    def __name__(self) -> str:
        return self.fn.__name__

    def __call__(self, *args):
        task = args[-1]
        folder = Path(self.folder)
        (folder / f"started-{task.index}-{os.getpid()}").touch()
        deadline = time.monotonic() + self.timeout
        while not (folder / "go").exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"shard {task.index} waited {self.timeout:g} s at the gate {folder}")
            time.sleep(0.01)
        return self.fn(*args)


@dataclass(frozen=True)
class _train_shard_task:  # noqa: N801 - a picklable stand-in for a lambda, named for Dask's task keys
    stream: bool
    chunk_size: int

    @property
    def __name__(self) -> str:
        return "train_shard"

    def __call__(self, source, featurizer, template, task):
        return train_shard(source, featurizer, template, task, stream=self.stream,
                           chunk_size=self.chunk_size)
