"""A readers-writer lock: predictions share the model, an update has it alone.

The learners update their arrays in place (the numba kernels write ``mu`` and the variances
document by document), so a prediction running beside an update could read a half-applied
one. Predictions take the lock shared, the update writer takes it exclusively. Writers have
priority: once an update waits, new predictions wait behind it, so a steady stream of
predictions cannot starve learning (each update holds the lock for microseconds per document).
"""

from __future__ import annotations

import contextlib
import threading


class ReadWriteLock:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextlib.contextmanager
    def shared(self):
        with self._cond:
            while self._writing or self._writers_waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self):
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()
