"""Running shard tasks: joblib processes on this machine, or a Dask cluster.

Both backends take the same calls: :meth:`submit` runs one task whose result other tasks use
(the fitted featurizer) and :meth:`run` runs one task per shard and yields the results in shard
order while reporting each completion, so a caller can fold results in as they arrive with a
deterministic order of summation.

- ``local``: processes forked from this one where that is safe (:mod:`textcw.scale.forked`:
  they start in milliseconds with everything imported and inherit the shards' shared
  arguments), else joblib's ``loky`` process pool; ``n_workers=1`` runs in this process. If a
  worker process dies, the pool fails the whole batch; the shards that had not returned are run
  again in a fresh pool (up to :data:`LOCAL_RETRIES` times).
- ``dask``: the Dask API directly (``dask.distributed``), because it gives what shard training
  needs beyond joblib's Dask backend: a task graph in which the featurizer is fitted *on a worker*
  and handed to the shard tasks worker-to-worker, shard tasks whose arguments are a few bytes
  (each worker reads its own shard), and lineage, so that when a worker dies the scheduler
  reruns exactly the lost tasks (``distributed.scheduler.allowed-failures`` times) instead of
  losing data scattered from the client. Without an address a :class:`LocalCluster` of processes
  is started on 127.0.0.1 and closed afterwards; an address is checked and connected to within
  deadlines and in bounded memory (:mod:`textcw.scale.dask_connect`).
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from textcw.errors import ClusterError, ParameterError, UnknownNameError
from textcw.scale import forked  # names looked up at each call: a fork_available replaced in a test is seen
from textcw.scale.dask_connect import check_first_message, check_handshake, check_scheduler, connect_client

BACKENDS = ("local", "dask")
LOCAL_RETRIES = 2
CONNECT_TIMEOUT = 5.0
WORKERS_TIMEOUT = 30.0


class Ready:
    """A result computed in this process, passed around like a future."""

    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


def default_workers(n_tasks: int) -> int:
    return max(1, min(n_tasks, os.cpu_count() or 1))


# A loky worker process costs 1-2 s before its first shard (starting Python, importing numpy,
# scikit-learn and the kernels): about what one core needs to read, hash and learn 50,000
# synthetic-text documents (docs/scale.md). A forked worker starts in milliseconds but still
# loads the kernels and touches its own pages (0.1-0.3 s), and shards that take rows of a split
# featurized by the driver only learn, at over a million documents per second: below this many
# documents per worker the processes save less than half a second, or cost more than they save.
DOCUMENTS_PER_WORKER = 50_000


def local_workers(n_tasks: int, n_documents: int | None) -> int:
    """Default processes of the local backend: one per core and shard, and none beyond the first
    (this process) unless each gets :data:`DOCUMENTS_PER_WORKER` documents (when the count is
    known without reading the corpus)."""
    workers = default_workers(n_tasks)
    if n_documents is not None:
        workers = max(1, min(workers, n_documents // DOCUMENTS_PER_WORKER))
    return workers


@contextmanager
def open_backend(backend: str = "local", *, scheduler: str | None = None, n_workers: int | None = None,
                 n_tasks: int = 1, connect_timeout: float = CONNECT_TIMEOUT,
                 workers_timeout: float = WORKERS_TIMEOUT):
    """A :class:`LocalBackend` or :class:`DaskBackend`, closed (with any cluster it started) on exit.

    ``connect_timeout`` bounds reaching a scheduler and its handshake, ``workers_timeout`` the
    wait for its first worker; every failure is a :class:`~textcw.errors.ClusterError` (or a
    :class:`~textcw.errors.ParameterError` for an address textcw cannot use).
    """
    if backend not in BACKENDS:
        raise UnknownNameError("backend", backend, BACKENDS)
    if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1):
        raise ParameterError(f"workers={n_workers!r} is invalid; workers must be an integer >= 1")
    if scheduler is not None and backend != "dask":
        raise ParameterError("a scheduler address needs the dask backend (--backend dask)")
    if backend == "local":
        yield LocalBackend(n_workers or default_workers(n_tasks))
        return
    if scheduler is not None and n_workers is not None:
        raise ParameterError(
            "workers sets the size of the local Dask cluster; with a scheduler address the "
            "cluster's own workers are used: drop one of the two"
        )
    dask = DaskBackend.start(scheduler, n_workers or default_workers(n_tasks), connect_timeout,
                             workers_timeout)
    try:
        yield dask
    finally:
        dask.close()


class LocalBackend:
    """Shard tasks in processes on this machine: forked from this one where that is safe
    (:mod:`textcw.scale.forked`), else in joblib's ``loky`` pool; ``n_workers=1`` runs them here.

    ``start`` chooses explicitly: ``"fork"``, ``"loky"``, or ``None`` (fork when available).
    """

    name = "local"

    def __init__(self, n_workers: int, start: str | None = None):
        if start not in (None, "fork", "loky"):
            raise ParameterError(f"start={start!r} is invalid; give 'fork', 'loky' or None")
        self.n_workers = n_workers
        self.start = start

    def submit(self, fn: Callable, *args) -> Ready:
        return Ready(fn(*args))

    def run(self, fn: Callable, shared: Sequence, tasks: Sequence, on_done: Callable[[int], None] | None = None,
            ) -> Iterator:
        """``fn(*shared, task)`` for every task (each with an ``index``), yielded in task order."""
        from joblib.externals.loky.process_executor import TerminatedWorkerError

        args = _values(shared)
        pending = {task.index: task for task in tasks}
        held: dict[int, object] = {}
        order = [task.index for task in tasks]
        position = done = 0
        attempts = 0
        while pending:
            batch = [pending[i] for i in order if i in pending]
            try:
                for index, result in self._unordered(fn, args, batch):
                    pending.pop(index)
                    held[index] = result
                    done += 1
                    if on_done is not None:
                        on_done(done)
                    while position < len(order) and order[position] in held:
                        yield held.pop(order[position])
                        position += 1
            except (TerminatedWorkerError, forked.BrokenProcessPool) as exc:
                attempts += 1
                if attempts > LOCAL_RETRIES:
                    raise ClusterError(
                        f"a local worker process died {attempts} times while training shards "
                        f"({len(pending)} left); last error: {exc}"
                    ) from None
                # The pool is broken; the shards that had not returned run again in a new one.
                continue

    def _unordered(self, fn: Callable, args: list, batch: list) -> Iterator[tuple[int, object]]:
        """``(task.index, result)`` of every task of ``batch``, in the order they finish."""
        if self.n_workers == 1:
            return (_indexed(fn, args, task) for task in batch)
        if self.start == "fork" or (self.start is None and forked.fork_available()):
            return forked.forked_unordered(fn, args, batch, self.n_workers)
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=self.n_workers, return_as="generator_unordered", batch_size=1,
                            prefer="processes")
        return parallel(delayed(_indexed)(fn, args, task) for task in batch)

    def close(self) -> None:
        pass


def kernel_cache_counts() -> tuple[int, int]:
    """``(hits, misses)`` of numba's on-disk cache for the textcw kernels loaded in this process.

    A worker process that finds every kernel it uses in the cache (``misses == 0``) skips
    compiling, which costs 1-4 s a process otherwise; the sharding benchmark reports it.
    """
    import sys

    from textcw._jit import dispatchers_in

    hits = misses = 0
    for name, module in list(sys.modules.items()):
        if name.startswith("textcw") and module is not None:
            for dispatcher in dispatchers_in(list(vars(module).values())):
                hits += sum(dispatcher.stats.cache_hits.values())
                misses += sum(dispatcher.stats.cache_misses.values())
    return hits, misses


def _values(args: Sequence) -> list:
    return [a.result() if isinstance(a, Ready) else a for a in args]


def _indexed(fn, args, task):
    return task.index, fn(*args, task)


class DaskBackend:
    """Shard tasks on a Dask cluster through ``dask.distributed``."""

    name = "dask"

    def __init__(self, client, cluster=None):
        self.client = client
        self.cluster = cluster
        self.n_workers = len(client.scheduler_info().get("workers", {}))
        self._token = uuid.uuid4().hex[:8]

    @classmethod
    def start(cls, scheduler: str | None, n_workers: int, connect_timeout: float = CONNECT_TIMEOUT,
              workers_timeout: float = WORKERS_TIMEOUT) -> DaskBackend:
        """A backend on the scheduler at ``scheduler`` or, without one, on a new local cluster.

        Every wait is bounded: reaching the scheduler and its answer to the handshake
        (``connect_timeout`` seconds in all), then its first worker (``workers_timeout``).
        """
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - dask is an optional dependency
            raise ParameterError(
                "the dask backend needs dask.distributed: pip install 'textcw[dask]'"
            ) from None
        if scheduler is None:
            # Loopback only: a local cluster serves this process and nobody else.
            # Its workers' log lines (restarts, shutdown chatter) are not shown: failures reach the
            # caller as exceptions.
            cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                                   host="127.0.0.1", dashboard_address=None,
                                   silence_logs=logging.CRITICAL)
            return cls(Client(cluster, set_as_default=False), cluster)
        address = check_scheduler(scheduler, connect_timeout)
        check_handshake(scheduler, address, connect_timeout)
        client = connect_client(scheduler, address, connect_timeout)
        try:
            client.wait_for_workers(1, timeout=workers_timeout)
        except (OSError, TimeoutError):
            client.close()
            raise ClusterError(
                f"the Dask scheduler at {scheduler} has no workers (waited {workers_timeout:g} s); "
                "start some with `dask worker ADDRESS`"
            ) from None
        return cls(client)

    def submit(self, fn: Callable, *args):
        return self.client.submit(fn, *args, pure=False, key=f"textcw-{fn.__name__}-{self._token}")

    def run(self, fn: Callable, shared: Sequence, tasks: Sequence, on_done: Callable[[int], None] | None = None,
            ) -> Iterator:
        from dask.distributed import as_completed
        from distributed import KilledWorker

        n = len(tasks)
        shared = _values(shared)  # futures stay futures: Dask hands their results to the tasks
        futures = {
            task.index: self.client.submit(fn, *shared, task, pure=False,
                                           key=f"textcw-shard-{task.index}-of-{n}-{self._token}")
            for task in tasks
        }
        order = [task.index for task in tasks]
        index_of = {f.key: i for i, f in futures.items()}
        finished: set[int] = set()
        position = 0
        try:
            for done, future in enumerate(as_completed(list(futures.values()), loop=self.client.loop), start=1):
                finished.add(index_of[future.key])
                if on_done is not None:
                    on_done(done)
                # Results stay on the workers until their turn, so the client holds at most
                # the shard results that arrived out of order.
                while position < n and order[position] in finished:
                    result = futures.pop(order[position]).result()
                    position += 1
                    yield result
        except KilledWorker as exc:
            raise ClusterError(
                f"shard task {getattr(exc, 'task', '')} was running on workers that died "
                f"{getattr(exc, 'allowed_failures', 'too many')} times (Dask's "
                "'distributed.scheduler.allowed-failures' limit); the shard itself may be "
                "exhausting worker memory: use more shards or workers with more memory"
            ) from None
        finally:
            if futures:
                self.client.cancel(list(futures.values()))

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


# Also importable from here, under the name the scheduler-address tests use.
_check_first_message = check_first_message
