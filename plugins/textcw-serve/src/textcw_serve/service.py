"""The running model: concurrent predictions, serialized durable updates, checkpoints, status.

One thread, the committer, owns every change. ``/learn`` requests are checked and featurized by
the request's own thread, then queued; the committer takes everything queued (up to a group's
bounds), appends it to the update log with one write and one ``fsync`` (group commit), applies
the updates in log order under the exclusive model lock, and only then completes each request's
future: an acknowledged update is on disk and visible to the next prediction. Checkpoints go
through the same queue, so they are taken between groups. Predictions hold the lock shared and
never see a half-applied update (:mod:`textcw_serve.rwlock`).

If the log cannot be written (a full disk), the group's requests fail, nothing of them is
applied, and the log is cut back to its last good record. If even that fails, or an ``fsync``
fails, what is on disk is no longer known (a failed fsync may have dropped pages), so the
service stops learning (``/learn`` answers 503) until it is restarted and has replayed the log.
"""

from __future__ import annotations

import concurrent.futures
import logging
import queue
import threading
import time
from dataclasses import dataclass, field

from textcw.errors import TextcwError

from textcw_serve.journal import MAX_GROUP_BYTES, MAX_GROUP_RECORDS, LogWriter, encode_record
from textcw_serve.model_ops import (LabelMap, Vocabulary, apply_update, calibration_of, featurize, model_digest,
                                   predictions)
from textcw_serve.rwlock import ReadWriteLock
from textcw_serve.state import Checkpoint, Counters, StateFolder

LOG = logging.getLogger("textcw.serve")
MAX_QUEUED = 4096


class NotLearningError(TextcwError):
    """``/learn`` or ``/checkpoint`` on a service that does not learn (or stopped learning)."""


class BusyError(TextcwError):
    """Too many updates are waiting; the client should retry later."""


class DurabilityError(TextcwError):
    """An update or a checkpoint could not be written; nothing of it was applied."""


@dataclass
class _Update:
    documents: list
    labels: list
    X: object
    logged_labels: list = field(default_factory=list)  # the labels' JSON forms, as the log records them
    unseen: int | None = None  # terms dropped by a fixed vocabulary
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)
    frame: bytes = b""


@dataclass
class _Control:
    action: str  # "checkpoint" or "stop"
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


class ModelService:
    """A loaded model and, when learning, its state folder and log writer."""

    def __init__(self, model, *, name: str, counters: Counters, state: StateFolder | None = None,
                 writer: LogWriter | None = None, checkpoint: Checkpoint | None = None,
                 checkpoint_every: int = 10_000, max_group_records: int = MAX_GROUP_RECORDS,
                 metrics=None, description: dict | None = None):
        self.model = model
        self.name = name
        self.counters = counters
        self.state = state
        self.writer = writer
        self.last_checkpoint = checkpoint
        self.checkpoint_every = checkpoint_every
        self.max_group_records = max_group_records
        self.metrics = metrics
        self.description = dict(description or {})
        self.labels = LabelMap(model.steps[-1][1].classes_)
        self.vocabulary = Vocabulary(model)
        self.calibration = calibration_of(model)
        self.lock = ReadWriteLock()
        self.started = time.monotonic()
        self.degraded: str | None = None
        self._digest: tuple[int, str] | None = None
        self._queue: queue.Queue = queue.Queue(MAX_QUEUED)
        self._carry = None
        self._thread: threading.Thread | None = None
        if writer is not None:
            self._thread = threading.Thread(target=self._run, name="textcw-serve-committer", daemon=True)
            self._thread.start()

    @property
    def learning(self) -> bool:
        return self.writer is not None

    # ------------------------------------------------------------------ predictions
    def predict(self, documents: list[str]) -> tuple[int, list[dict]]:
        """``(model version, one result per document)``, all from one model state."""
        X = featurize(self.model, documents)
        with self.lock.shared():
            return self.counters.seq, predictions(self.model, X, self.labels)

    # ------------------------------------------------------------------ updates
    def submit_update(self, documents: list[str], labels: list) -> concurrent.futures.Future:
        """Queue one ``/learn`` request; the future's result is its reply (after the fsync)."""
        self._check_learning()
        resolved = self.labels.resolve(labels)
        update = _Update(documents, resolved, featurize(self.model, documents), self.labels.canonical(labels),
                         self.vocabulary.unseen(documents))
        self._enqueue(update)
        return update.future

    def submit_checkpoint(self) -> concurrent.futures.Future:
        self._check_learning()
        control = _Control("checkpoint")
        self._enqueue(control)
        return control.future

    def stop(self, *, checkpoint: bool = True, timeout: float = 60.0) -> None:
        """Finish the queued updates, take a checkpoint if anything was learned since the last
        one, and stop the committer."""
        if self._thread is None:
            return
        if checkpoint and self.degraded is None:
            self._queue.put(_Control("checkpoint"))
        self._queue.put(_Control("stop"))
        self._thread.join(timeout)
        self.writer.close()
        self.state.unlock()

    def _check_learning(self) -> None:
        if self.writer is None:
            raise NotLearningError("this service does not learn; start it with --learn to accept updates")
        if self.degraded is not None:
            raise NotLearningError(f"learning is stopped: {self.degraded}; restart the service to "
                                   "replay the update log")

    def _enqueue(self, item) -> None:
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            raise BusyError(f"{MAX_QUEUED} updates are already waiting to be written; retry shortly") from None

    # ------------------------------------------------------------------ the committer thread
    def _run(self) -> None:
        while True:
            item = self._carry if self._carry is not None else self._queue.get()
            self._carry = None
            if isinstance(item, _Control):
                if item.action == "stop":
                    item.future.set_result(None)
                    return
                self._checkpoint(item)
                continue
            group = [item]
            size = len(self._frame(item, self.counters.seq + 1))
            while len(group) < self.max_group_records:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if isinstance(nxt, _Control):
                    self._carry = nxt
                    break
                frame = self._frame(nxt, self.counters.seq + len(group) + 1)
                if size + len(frame) > MAX_GROUP_BYTES:
                    nxt.frame = b""  # renumbered in the next group
                    self._carry = nxt
                    break
                size += len(frame)
                group.append(nxt)
            try:
                self._commit(group)
            except Exception as exc:  # a bug, not bad input: keep answering, stop learning
                LOG.exception("the committer failed")
                self.degraded = f"an internal error stopped learning ({type(exc).__name__}: {exc})"
                for update in group:
                    if not update.future.done():
                        update.future.set_exception(NotLearningError(f"learning is stopped: {self.degraded}"))

    @staticmethod
    def _frame(update: _Update, seq: int) -> bytes:
        update.frame = encode_record(seq, update.documents, update.logged_labels)
        return update.frame

    def _commit(self, group: list[_Update]) -> None:
        if self.degraded is not None:
            for update in group:
                update.future.set_exception(NotLearningError(f"learning is stopped: {self.degraded}"))
            return
        started = time.perf_counter()
        try:
            self.writer.append([u.frame for u in group])
        except OSError as exc:
            reason = f"the update log could not be written ({exc.strerror or exc})"
            if self.writer.broken:
                self.degraded = reason
            for update in group:
                update.future.set_exception(DurabilityError(f"{reason}; the update was not applied"))
            return
        synced = time.perf_counter()
        results = []
        try:
            with self.lock.exclusive():
                for update in group:
                    outcome = apply_update(self.model, update.X, update.labels)
                    self.counters.add(len(update.documents), outcome.mistakes, outcome.changes)
                    results.append(self._reply(update, outcome))
        except Exception as exc:
            # Checked and featurized beforehand, an update does not fail; if one does, it is in
            # the log but not in the model: stop learning rather than diverge from the log.
            LOG.exception("an update could not be applied")
            self.degraded = (f"update {self.counters.seq + 1} is in the log but could not be applied "
                             f"({type(exc).__name__}: {exc})")
        if self.metrics is not None:
            self.metrics.committed(len(results), synced - started, results)
        for update, reply in zip(group, results):
            update.future.set_result(reply)
        for update in group[len(results):]:
            update.future.set_exception(NotLearningError(f"learning is stopped: {self.degraded}"))
        if self.checkpoint_every and self.counters.seq - self._checkpointed_seq() >= self.checkpoint_every:
            self._checkpoint(None)

    def _reply(self, update: _Update, outcome) -> dict:
        c = self.counters
        reply = {"seq": c.seq, "documents": len(update.documents), "mistakes": outcome.mistakes,
                 "updates": outcome.changes, "changed": outcome.changes > 0, "update_count": c.seq,
                 "documents_seen": c.documents, "online_error": c.mistakes / c.documents if c.documents else None,
                 "unseen_tokens": update.unseen, "warning": None}
        if update.unseen:
            reply["warning"] = (f"{update.unseen} term{'s' if update.unseen > 1 else ''} of these documents "
                                f"{'are' if update.unseen > 1 else 'is'} not in the model's fixed vocabulary and "
                                f"{'were' if update.unseen > 1 else 'was'} dropped: the model cannot learn new "
                                "words; train it with --featurizer "
                                "hashing to learn them")
        return reply

    def _checkpointed_seq(self) -> int:
        return self.last_checkpoint.seq if self.last_checkpoint is not None else 0

    def _checkpoint(self, control: _Control | None) -> None:
        """Save the model (predictions go on meanwhile), then empty the log."""
        try:
            if self.last_checkpoint is None or self.last_checkpoint.seq != self.counters.seq:
                with self.state.snapshot(exclusive=True):  # replicas see both changes or neither
                    with self.lock.shared():
                        self.last_checkpoint = self.state.write_checkpoint(self.model, self.counters)
                    self.writer.reset()
            result = self.checkpoint_info()
        except (TextcwError, OSError) as exc:
            LOG.warning("checkpoint failed: %s", exc)
            if control is not None:
                control.future.set_exception(DurabilityError(
                    f"the checkpoint could not be written ({exc}); the previous checkpoint and the "
                    "update log still hold every update"))
            return
        if control is not None:
            control.future.set_result(result)

    def checkpoint_info(self) -> dict | None:
        cp = self.last_checkpoint
        if cp is None:
            return None
        return {"seq": cp.seq, "file": cp.path.name, "created_at": cp.created_at}

    # ------------------------------------------------------------------ status
    def digest(self) -> str:
        with self.lock.shared():
            seq = self.counters.seq
            if self._digest is None or self._digest[0] != seq:
                self._digest = (seq, model_digest(self.model))
            return self._digest[1]

    def status(self) -> dict:
        c = self.counters
        return {
            "model": self.name,
            **self.description,
            "learning": self.learning,
            "degraded": self.degraded,
            "classes": self.labels.classes,
            "update_count": c.seq,
            "documents_seen": c.documents,
            "online_mistakes": c.mistakes,
            "online_error": c.mistakes / c.documents if c.documents else None,
            "model_changes": c.changes,
            "last_checkpoint": self.checkpoint_info(),
            "model_digest": self.digest(),
            "vocabulary": self.vocabulary.describe(),
            "calibration": self.calibration,
            "uptime_seconds": round(time.monotonic() - self.started, 3),
        }
