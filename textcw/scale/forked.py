"""Shard tasks in processes forked from this one: workers that start in milliseconds.

A worker of joblib's ``loky`` pool is a fresh interpreter: before its first shard it imports
numpy, scipy, scikit-learn, numba and textcw, about a second of one core, and all shards wait
for it at once, so the start-up lies on the critical path of every sharded job. A process forked
from this one starts with all of that in memory. The arguments every shard shares (the corpus
source, the featurizer, the learner template and, when this process featurized the split, its
matrix) reach the forked workers by inheritance instead of being pickled or memory-mapped per
task: only the few bytes of each :class:`~textcw.scale.shards.ShardTask` and the trained models
cross processes.

Forking is used where it is safe (:func:`fork_available`): on Linux, and on Python 3.12 or later
only while this process runs a single thread (those versions deprecate forking a multi-threaded
process, since a lock held by another thread at the fork stays held in the child forever).
Elsewhere the local backend keeps ``loky``.
"""

from __future__ import annotations

import gc
import multiprocessing
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

__all__ = ["BrokenProcessPool", "close_forked", "fork_available", "forked_executor", "forked_unordered", "forking",
           "run_installed"]

# What the workers of the current pool run: set in each worker by ``_install`` from the arguments
# it inherited at the fork (never in the process that starts the pool).
_installed: tuple[Callable, list] | None = None
WORKER_SIGNALS = {signal.SIGINT, signal.SIGTERM}
STOP_SECONDS = 10.0  # how long a stopped worker may take to end before it is killed


def fork_available() -> bool:
    """Whether shard workers may be forked from this process (see the module docstring)."""
    if not sys.platform.startswith("linux") or "fork" not in multiprocessing.get_all_start_methods():
        return False
    return sys.version_info < (3, 12) or threading.active_count() == 1


def forked_unordered(fn: Callable, args: Sequence, tasks: Sequence, n_workers: int) -> Iterator[tuple[int, object]]:
    """``(task.index, fn(*args, task))`` for every task, computed in up to ``n_workers`` forked
    processes, in the order they finish.

    A worker that dies (killed, out of memory) fails the whole batch with
    :class:`~concurrent.futures.process.BrokenProcessPool`, as joblib does with its
    ``TerminatedWorkerError``; an exception raised by ``fn`` reaches the caller as it is.
    Leaving early (an exception, or the generator closed) stops the workers at once instead of
    letting them finish shards that nobody will collect.
    """
    # Process arguments are inherited, not pickled, with the fork start method: `args` may hold
    # the whole featurized split at no cost.
    executor = forked_executor(fn, args, max(1, min(n_workers, len(tasks))))
    finished = False
    try:
        with forking():  # a fork-context pool forks all its workers at the first submission
            running = {executor.submit(run_installed, task): task.index for task in tasks}
        while running:
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                index = running.pop(future)
                yield index, future.result()
        finished = True
    finally:
        close_forked(executor, finished)


def forked_executor(fn: Callable, args: Sequence, n_workers: int) -> ProcessPoolExecutor:
    """A pool of ``n_workers`` processes that will be forked from this one, each running
    ``fn(*args, task)`` for the tasks given to ``executor.submit(run_installed, task)``.

    The workers are forked at the first submission, which must be made inside :func:`forking`.
    """
    context = multiprocessing.get_context("fork")
    return ProcessPoolExecutor(max_workers=n_workers, mp_context=context, initializer=_install,
                               initargs=(fn, list(args)))


@contextmanager
def forking():
    """Around the submission that forks a pool's workers (:func:`forked_executor`)."""
    # The workers' cyclic garbage collector leaves alone the objects inherited at the fork: a full
    # collection would walk every one of them (numpy, scikit-learn, numba...) and, by writing
    # their headers, copy each page they share with this process.
    gc.freeze()
    # A worker inherits the command line's handlers, under which SIGINT and SIGTERM raise
    # KeyboardInterrupt, and keeps them until `_install` runs: a signal in between (Ctrl-C to the
    # process group, or the SIGTERM that stops a worker) would print a traceback from the
    # worker's start. The signals are blocked across the forks, so a worker receives them only
    # once `_install` has set its own handlers; this process gets any that came meanwhile when
    # its mask is restored.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, WORKER_SIGNALS)
    try:
        yield
    finally:
        gc.unfreeze()
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def close_forked(executor: ProcessPoolExecutor, finished: bool) -> None:
    """Shut a pool of :func:`forked_executor` down: its workers idle (``finished``) end at once;
    otherwise they are stopped, not left to finish tasks that nobody will collect.

    Either way the shutdown waits for the pool's own thread: once the stopped workers are gone
    it only notes the broken pool and ends. Not waiting left that thread running while the
    shutdown reset the pool's state, and on Python before 3.12 it could then write to a closed
    pipe at exit (``OSError: Bad file descriptor`` printed after ``interrupted``; CPython
    gh-132969)."""
    if not finished:
        _stop_workers(executor)
    executor.shutdown(wait=True, cancel_futures=not finished)


def _install(fn: Callable, args: list) -> None:
    """Runs first in every worker. The signal handlers inherited from the command line (SIGINT
    and SIGTERM raise KeyboardInterrupt there) are dropped: Ctrl-C reaches the whole process
    group, and the process that started the pool decides what happens to its workers; SIGTERM,
    which the pool sends to end a worker, then ends it."""
    global _installed
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, WORKER_SIGNALS)  # blocked across the fork
    _installed = (fn, args)


def run_installed(task):
    """What every task of a :func:`forked_executor` pool runs: ``fn(*args, task)``."""
    fn, args = _installed
    return fn(*args, task)


def _stop_workers(executor: ProcessPoolExecutor) -> None:
    # The executor has no public way to end running tasks: shutdown(cancel_futures=True) only
    # drops queued ones and waits for the running shards, which can take minutes.
    processes = list((getattr(executor, "_processes", None) or {}).values())
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:  # SIGTERM ends a worker (its handler is the default), promptly
        process.join(STOP_SECONDS)
        if process.is_alive():
            process.kill()
            process.join(STOP_SECONDS)
