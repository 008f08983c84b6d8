"""Killing a worker in a known state: the gate of :class:`textcw.scale.shards.ShardGate` seen from
a test, and a job run on a thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

# Bounds on how long a test waits for something that happens at once when the code works; they
# only turn a defect into a failure instead of a hang, and are never asserted on.
WAIT = 120.0


class Gate:
    """The folder of :class:`textcw.scale.shards.ShardGate`, seen from the test."""

    def __init__(self, folder: Path):
        self.folder = folder

    def started(self) -> list[tuple[int, int]]:
        """``(shard index, worker pid)`` of every shard task that reached the gate, in name order."""
        out = []
        for path in sorted(self.folder.glob("started-*")):
            _, index, pid = path.name.split("-")
            out.append((int(index), int(pid)))
        return out

    def wait_for_arrivals(self, n: int, job: threading.Thread) -> list[tuple[int, int]]:
        """Block until ``n`` shard tasks wait at the gate (the job fails the test if it ends first)."""
        deadline = time.monotonic() + WAIT
        while len(self.started()) < n:
            assert job.is_alive(), "the job ended before its shard tasks reached the gate"
            assert time.monotonic() < deadline, f"{n} shard tasks did not reach the gate"
            time.sleep(0.01)
        return self.started()

    def open(self) -> None:
        (self.folder / "go").touch()


def run_in_thread(fn, **kwargs) -> tuple[threading.Thread, dict]:
    """Start ``fn(**kwargs)`` on a thread; the returned dict gets ``result`` or ``error``."""
    box: dict = {}

    def target():
        try:
            box["result"] = fn(**kwargs)
        except BaseException as exc:  # the test reports it
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, box


def kill_and_wait(pid: int) -> None:
    """SIGKILL ``pid`` and wait until it has stopped, so it cannot pass the gate afterwards.

    The process is left for its parent to reap. A forked worker is a child of this very process,
    and reaping it here (``psutil.Process.wait`` calls ``waitpid`` on a child) would take its exit
    status from the pool that started it: the pool's ``waitpid`` then fails with ``ECHILD``, which
    ``multiprocessing`` reads as "not started yet", so the worker looks alive forever and the
    broken pool's shutdown waits for it without end."""
    psutil = pytest.importorskip("psutil")
    process = psutil.Process(pid)
    process.kill()
    deadline = time.monotonic() + WAIT
    while True:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:  # already reaped by its parent
            return
        assert time.monotonic() < deadline, f"process {pid} still runs after SIGKILL"
        time.sleep(0.01)
