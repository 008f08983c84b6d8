"""The labels' models of a multi-label fit learning each chunk on several threads.

One-vs-rest models are independent: each has its own state, and the chunk's rows and the labels'
signs are only read. The epoch kernels release the interpreter's lock (:mod:`textcw._jit`), so
the labels, split into one group per thread, learn the same chunk at once, and every model ends
bit for bit as with one thread (tested): each model still sees the chunks in the same order, and
every label finishes a chunk before any starts the next, as :class:`~textcw.learners.multilabel.MultiLabel`
promises. The honest scores of a chunk are computed group by group the same way (scipy's sparse
products release the lock too), each label's column as one thread computes it
(:class:`~textcw.learners.multilabel_scores.HonestScores`). What stays serial is the Python
around each call (a few tens of microseconds per label and chunk).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

__all__ = ["LabelGroups", "thread_count"]


def thread_count(n_jobs: int | None, n_labels: int) -> int:
    """The threads for ``n_jobs`` (``None``: 1; ``-1``: one per core; else that many), never more
    than there are labels or cores (the kernels compute; a thread without a core only waits)."""
    cores = os.cpu_count() or 1
    wanted = 1 if n_jobs is None else cores if n_jobs == -1 else int(n_jobs)
    return max(1, min(wanted, n_labels, cores))


class LabelGroups:
    """The labels split into one group per thread: every label's model learns a chunk
    (:meth:`learn`), or any per-label work runs group by group (:meth:`run`); a context manager
    that owns its threads."""

    def __init__(self, models: list, n_threads: int):
        self.models = models
        # labels dealt round-robin: neighbours in a label list are often alike in cost
        self.groups = [np.arange(k, len(models), n_threads) for k in range(min(n_threads, len(models)))]
        self.pool = (ThreadPoolExecutor(len(self.groups), thread_name_prefix="textcw-labels")
                     if len(self.groups) > 1 else None)

    def __enter__(self) -> LabelGroups:
        return self

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)  # a failed group's partners finish their chunk first

    def run(self, work, *args) -> None:
        """``work(labels, *args)`` for each group of labels (an array of their indices), on the
        threads; returns when every group is done, raising the first error."""
        if self.pool is None:
            work(np.arange(len(self.models)), *args)
            return
        running = [self.pool.submit(work, group, *args) for group in self.groups]
        for future in running:  # every group is waited for; the first error is raised
            future.exception()
        for future in running:
            future.result()

    def learn(self, X, signs, rows) -> None:
        """Each label ``l``'s model learns ``rows`` of ``X`` with the ``+-1`` labels ``signs[l]``."""
        self.run(self._learn_group, X, signs, rows)

    def _learn_group(self, group, X, signs, rows) -> None:
        for label in group:
            self.models[label]._run_epoch(X, signs[label], rows)
