"""Running shard tasks: joblib processes on this machine, or a Dask cluster.

Both backends take the same calls: :meth:`submit` runs one task whose result other tasks use
(the fitted featurizer) and :meth:`run` runs one task per shard and yields the results in shard
order while reporting each completion, so a caller can fold results in as they arrive with a
deterministic order of summation.

- ``local``: joblib's ``loky`` process pool (``n_workers=1`` runs in this process). If a worker
  process dies, joblib fails the whole batch; the shards that had not returned are run again in
  a fresh pool (up to :data:`LOCAL_RETRIES` times).
- ``dask``: the Dask API directly (``dask.distributed``), because it gives what shard training
  needs beyond joblib's Dask backend: a task graph in which the featurizer is fitted *on a worker*
  and handed to the shard tasks worker-to-worker, shard tasks whose arguments are a few bytes
  (each worker reads its own shard), and lineage, so that when a worker dies the scheduler
  reruns exactly the lost tasks (``distributed.scheduler.allowed-failures`` times) instead of
  losing data scattered from the client. Without an address a :class:`LocalCluster` of processes
  is started on 127.0.0.1 and closed afterwards.
"""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from textcw.errors import ClusterError, ParameterError, UnknownNameError

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


@contextmanager
def open_backend(backend: str = "local", *, scheduler: str | None = None, n_workers: int | None = None,
                 n_tasks: int = 1, connect_timeout: float = CONNECT_TIMEOUT):
    """A :class:`LocalBackend` or :class:`DaskBackend`, closed (with any cluster it started) on exit."""
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
    dask = DaskBackend.start(scheduler, n_workers or default_workers(n_tasks), connect_timeout)
    try:
        yield dask
    finally:
        dask.close()


class LocalBackend:
    """Shard tasks in joblib's process pool on this machine."""

    name = "local"

    def __init__(self, n_workers: int):
        self.n_workers = n_workers

    def submit(self, fn: Callable, *args) -> Ready:
        return Ready(fn(*args))

    def run(self, fn: Callable, shared: Sequence, tasks: Sequence, on_done: Callable[[int], None] | None = None,
            ) -> Iterator:
        """``fn(*shared, task)`` for every task (each with an ``index``), yielded in task order."""
        from joblib import Parallel, delayed
        from joblib.externals.loky.process_executor import TerminatedWorkerError

        args = _values(shared)
        pending = {task.index: task for task in tasks}
        held: dict[int, object] = {}
        order = [task.index for task in tasks]
        position = done = 0
        attempts = 0
        while pending:
            batch = [pending[i] for i in order if i in pending]
            parallel = Parallel(n_jobs=self.n_workers, return_as="generator_unordered",
                                batch_size=1, prefer="processes")
            try:
                for index, result in parallel(delayed(_indexed)(fn, args, task) for task in batch):
                    pending.pop(index)
                    held[index] = result
                    done += 1
                    if on_done is not None:
                        on_done(done)
                    while position < len(order) and order[position] in held:
                        yield held.pop(order[position])
                        position += 1
            except TerminatedWorkerError as exc:
                attempts += 1
                if attempts > LOCAL_RETRIES:
                    raise ClusterError(
                        f"a local worker process died {attempts} times while training shards "
                        f"({len(pending)} left); last error: {exc}"
                    ) from None
                # The pool is broken; the shards that had not returned run again in a new one.
                continue

    def close(self) -> None:
        pass


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
    def start(cls, scheduler: str | None, n_workers: int, connect_timeout: float) -> DaskBackend:
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
        address = _check_reachable(scheduler, connect_timeout)
        try:
            client = Client(address, timeout=connect_timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ClusterError(_unreachable(scheduler, exc)) from None
        try:
            client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
        except (OSError, TimeoutError):
            client.close()
            raise ClusterError(
                f"the Dask scheduler at {scheduler} has no workers (waited {WORKERS_TIMEOUT:.0f} s); "
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


def _check_reachable(scheduler: str, timeout: float) -> str:
    """``tcp://host:port`` for ``scheduler``, after checking that something listens there.

    Dask's own connect retries until its timeout; a plain TCP connect fails at once when the
    port is closed, so a wrong address is reported immediately.
    """
    from distributed.comm.addressing import parse_address, parse_host_port

    address = scheduler if "://" in scheduler else f"tcp://{scheduler}"
    try:
        scheme, location = parse_address(address)
        if scheme not in ("tcp", "tls"):
            return address
        host, port = parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise ParameterError(
            f"scheduler address {scheduler!r} is not HOST:PORT or tcp://HOST:PORT ({exc})"
        ) from None
    if port is None:
        raise ParameterError(f"scheduler address {scheduler!r} has no port; write HOST:PORT, e.g. 127.0.0.1:8786")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout):
            pass
    except OSError as exc:
        raise ClusterError(_unreachable(scheduler, exc)) from None
    return address


def _unreachable(scheduler: str, exc: Exception) -> str:
    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return (
        f"cannot reach the Dask scheduler at {scheduler} ({reason}); check the address and that "
        "`dask scheduler` runs there, or drop --scheduler to start a local cluster"
    )
