"""Where a worker reads its documents: a corpus by name, resolved to picklable loader functions.

A :class:`CorpusSource` is a few names and module-level functions, so sending one to a worker
costs bytes, and the worker reads its own range of documents from its own data home (a local
disk, a shared file system, or, for ``synthetic-text``, nothing at all) instead of receiving
documents through the scheduler.

Two optional entries in a corpus's registration make reading a range cheap (the *streaming
protocol*; ``synthetic-text`` implements both):

- ``stream(task=, split=, *, start=0, stop=None, chunk_size=...)``: yields the documents
  ``[start, stop)`` of the split as consecutive :class:`~textcw.corpus.base.Dataset` chunks;
- ``size(task=, split=)``: the number of documents of the split.

Without them the split is loaded whole (corpus loaders cache their parsed archive per process)
and sliced, which is correct but holds the split in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from textcw.corpus.base import Dataset
from textcw.corpus.sampling import take
from textcw.errors import InputError
from textcw.plugins import resolve_corpus

CHUNK_SIZE = 10_000


@dataclass(frozen=True)
class CorpusSource:
    """A corpus and task, with the functions that read it (all picklable by reference)."""

    spec: str
    task: str | None
    loader: Callable
    stream: Callable | None = None
    size: Callable | None = None
    options: dict = field(default_factory=dict)

    @classmethod
    def resolve(cls, spec: str, **options) -> CorpusSource:
        """Look ``corpus[:task]`` up in the registries in use and check the task
        (:func:`textcw.plugins.resolve_corpus`)."""
        entry, task = resolve_corpus(spec)
        return cls(spec=spec, task=task, loader=entry.factory, stream=entry.stream,
                   size=entry.size, options=dict(options))

    @property
    def streams(self) -> bool:
        """Whether any range can be read without loading the split."""
        return self.stream is not None and self.size is not None

    def n_documents(self, split: str) -> int:
        if self.size is not None:
            return int(self.size(task=self.task, split=split, **self.options))
        return len(self.load(split))

    def load(self, split: str) -> Dataset:
        return self.loader(task=self.task, split=split, **self.options)

    def chunks(self, split: str, start: int = 0, stop: int | None = None,
               chunk_size: int = CHUNK_SIZE) -> Iterator[Dataset]:
        """Documents ``[start, stop)`` of ``split`` in chunks of at most ``chunk_size``."""
        if self.streams:
            yield from self.stream(task=self.task, split=split, start=start, stop=stop,
                                   chunk_size=chunk_size, **self.options)
            return
        data = self.load(split)
        stop = len(data) if stop is None else stop
        for lo in range(start, stop, chunk_size):
            yield slice_dataset(data, lo, min(stop, lo + chunk_size))

    def read(self, split: str, start: int = 0, stop: int | None = None) -> Dataset:
        """Documents ``[start, stop)`` of ``split`` as one :class:`Dataset`."""
        if not self.streams:
            data = self.load(split)
            return slice_dataset(data, start, len(data) if stop is None else stop)
        return concatenate(list(self.chunks(split, start, stop)))


def slice_dataset(data: Dataset, start: int, stop: int) -> Dataset:
    """Documents ``[start, stop)`` of ``data``, of its own type (a multi-label data set's slice
    keeps its indicator rows and every label of the task)."""
    idx = np.arange(start, stop)
    return type(data)(data=take(data.data, idx), target=np.asarray(data.target)[start:stop],
                      target_names=list(data.target_names), name=data.name, split=data.split,
                      info=dict(data.info))


def concatenate(parts: list[Dataset]) -> Dataset:
    """One dataset from consecutive chunks of the same split."""
    if not parts:
        raise InputError("no documents to read: the range is empty")
    first = parts[0]
    if len(parts) == 1:
        return first
    data = [doc for part in parts for doc in part.data]
    return type(first)(data=data, target=np.concatenate([p.target for p in parts]),
                       target_names=list(first.target_names), name=first.name, split=first.split,
                       info=dict(first.info))


def shard_bounds(n_documents: int, index: int, n_shards: int) -> tuple[int, int]:
    """Documents ``[start, stop)`` of shard ``index``: ``n_shards`` contiguous, disjoint parts.

    The papers divide "the example stream into n disjoint parts" (JMLR 2012 section 7.10);
    contiguous parts let a worker read its part alone. Sizes differ by at most one document.
    """
    if n_shards > n_documents:
        raise InputError(
            f"{n_shards} shards for {n_documents} training documents would leave shards empty; "
            f"use at most {n_documents} shards"
        )
    return (index * n_documents) // n_shards, ((index + 1) * n_documents) // n_shards


def class_labels(data: Dataset) -> np.ndarray:
    """Every label of the task (not only those present), as the learners' ``classes_`` sorts them."""
    return np.unique(np.asarray(data.target_names, dtype=object))
