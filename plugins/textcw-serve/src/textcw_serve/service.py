"""The running model: concurrent predictions, serialized durable updates, checkpoints, status.

One thread, the committer, owns every change. ``/learn`` requests are checked by the request's
own thread and queued. The preparer thread takes everything queued (up to a group's bounds)
and featurizes it with one ``transform`` call (a row-wise featurizer gives each request the
rows it would get alone: :func:`~textcw_serve.model_ops.row_wise`) while the committer is busy
with the group before. The committer takes every group prepared meanwhile, appends it to the
update log with one write and one ``fsync`` (group commit), applies the updates in log order
under the exclusive model lock, and only then completes each request's future: an
acknowledged update is on disk and visible to the next prediction. While it applies a group,
the next one is written and fsynced beside it (:meth:`ModelService._run`). A group is applied
with one ``partial_fit_each`` call (:func:`~textcw_serve.updates.apply_group`), which is one
``partial_fit`` call per request bit for bit and reports each request's own mistakes and
changes: what a group shares is the featurizer's call, the write, the ``fsync`` and the
learner's checks. Updates keep the order they were queued in. Checkpoints go through the same
queues, so they are taken between groups. Predictions hold the lock shared and never see a half-applied update
(:mod:`textcw_serve.rwlock`).

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

from textcw_serve.deltas import DeltaTracker, write_checkpoint
from textcw_serve.journal import (HEADER_BYTES, MAX_GROUP_BYTES, MAX_GROUP_RECORDS, LogWriter, encode_payload,
                                  frame_record)
from textcw_serve.model_ops import (LabelMap, Scored, Vocabulary, calibration_of, featurize_for_scoring,
                                   is_multilabel, model_digest, prediction_rows, row_wise, score)
from textcw_serve.tagsets import status_of
from textcw_serve.updates import apply_group, featurize_each, learn_reply
from textcw_serve.rwlock import ReadWriteLock
from textcw_serve.state import Checkpoint, Counters, StateFolder

LOG = logging.getLogger("textcw.serve")
MAX_QUEUED = 4096
# A /learn request with at most this many characters of text is featurized by the preparer,
# with the rest of its group: cheap enough to queue from the event loop (microseconds), and one
# featurizer call for a group of single documents costs about what one document alone does
# (0.2-0.3 ms of fixed cost per call). Larger requests are featurized by their own worker
# thread before they are queued, so one large batch does not hold up the group behind it.
GROUP_FEATURIZE_CHARS = 1 << 16
# Groups featurized and waiting for the committer: the next one is prepared while the current one
# is written; past that the preparer waits, and the queue (MAX_QUEUED) fills as before.
MAX_PREPARED = 2


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
    X: object  # None: featurized by the preparer, with its group
    logged_labels: list = field(default_factory=list)  # the labels' JSON forms, as the log records them
    unseen: int | None = None  # terms dropped by a fixed vocabulary
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)
    payload: bytes = b""  # the log record's payload (numbered when its group is written)


@dataclass
class _Control:
    action: str  # "checkpoint" or "stop"
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


class ModelService:
    """A loaded model and, when learning, its state folder and log writer."""

    def __init__(self, model, *, name: str, counters: Counters, state: StateFolder | None = None,
                 writer: LogWriter | None = None, checkpoint: Checkpoint | None = None,
                 checkpoint_every: int = 10_000, max_group_records: int = MAX_GROUP_RECORDS,
                 metrics=None, description: dict | None = None, deltas: DeltaTracker | None = None):
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
        self.deltas = deltas  # the rows touched since the last checkpoint (None: full checkpoints only)
        self.labels = LabelMap(model.steps[-1][1].classes_, multilabel=is_multilabel(model))
        self.vocabulary = Vocabulary(model)
        self.calibration = calibration_of(model)
        self.lock = ReadWriteLock()
        self.started = time.monotonic()
        self.degraded: str | None = None
        self._digest: tuple[int, str] | None = None
        self._queue: queue.Queue = queue.Queue(MAX_QUEUED)  # requests -> the preparer
        self._prepared: queue.Queue = queue.Queue(MAX_PREPARED)  # the preparer -> the committer
        self._group_featurize = row_wise(model.steps[0][1])
        self._logged = counters.seq  # the number of the last record written to the log
        self._diverged = False  # an update in the log could not be applied: none after it is
        self._syncer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="textcw-serve-fsync")
        self._threads: list[threading.Thread] = []
        if writer is not None:
            self._threads = [threading.Thread(target=self._prepare, name="textcw-serve-preparer", daemon=True),
                             threading.Thread(target=self._run, name="textcw-serve-committer", daemon=True)]
            for thread in self._threads:
                thread.start()

    @property
    def learning(self) -> bool:
        return self.writer is not None

    # ------------------------------------------------------------------ predictions
    def predict(self, documents: list[str]) -> tuple[int, list[dict]]:
        """``(model version, one result per document)``, all from one model state."""
        version, scored = self.scored(documents)
        return version, prediction_rows(scored, self.labels)  # after the lock: an update waits less

    def scored(self, documents: list[str]) -> tuple[int, Scored]:
        """``(model version, the arrays of the prediction)``: featurized before the lock, scored under it."""
        X = featurize_for_scoring(self.model, documents)
        with self.lock.shared():
            return self.counters.seq, score(self.model, X)

    # ------------------------------------------------------------------ updates
    def submit_update(self, documents: list[str], labels: list) -> concurrent.futures.Future:
        """Queue one ``/learn`` request; the future's result is its reply (after the fsync).
        Microseconds when :meth:`queues_at_once` says so (the preparer featurizes it)."""
        self._check_learning()
        resolved = self.labels.resolve(labels)
        update = _Update(documents, resolved, None, self.labels.canonical(labels))
        if not self.queues_at_once(documents):
            X = featurize_each(self.model, [documents], together=False)[0]
            if isinstance(X, Exception):
                raise X
            update.X, update.unseen = X, self.vocabulary.unseen(documents)
        self._enqueue(update)
        return update.future

    def queues_at_once(self, documents: list[str]) -> bool:
        """Whether :meth:`submit_update` leaves ``documents`` to be featurized with their group
        (and so may be called from the event loop)."""
        return self._group_featurize and sum(map(len, documents)) <= GROUP_FEATURIZE_CHARS

    def submit_checkpoint(self) -> concurrent.futures.Future:
        self._check_learning()
        control = _Control("checkpoint")
        self._enqueue(control)
        return control.future

    def stop(self, *, checkpoint: bool = True, timeout: float = 60.0) -> None:
        """Finish the queued updates, take a checkpoint if anything was learned since the last
        one, and stop the preparer and the committer."""
        if not self._threads:
            return
        if checkpoint and self.degraded is None:
            self._queue.put(_Control("checkpoint"))
        self._queue.put(_Control("stop"))
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._syncer.shutdown(wait=True)
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

    # ------------------------------------------------------------------ the preparer thread
    def _prepare(self) -> None:
        """Group the queued updates, featurize each group, hand it to the committer; a control
        (checkpoint, stop) is handed on in its place, so the order is kept."""
        carry = None
        while True:
            item = carry if carry is not None else self._queue.get()
            carry = None
            if isinstance(item, _Control):
                self._prepared.put(item)
                if item.action == "stop":
                    return
                continue
            group, size = [item], self._sized(item)
            while len(group) < self.max_group_records:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if isinstance(nxt, _Control) or size + self._sized(nxt) > MAX_GROUP_BYTES:
                    carry = nxt  # a checkpoint goes between groups; a large update opens the next one
                    break
                size += self._sized(nxt)
                group.append(nxt)
            try:
                group = self._featurized(group)
            except Exception as exc:  # a bug, not bad input: keep answering, stop learning
                self._stop_learning(group, exc)
                continue
            if group:
                self._prepared.put((group, size))

    # ------------------------------------------------------------------ the committer thread
    def _run(self) -> None:
        """Write, fsync and apply every group the preparer hands on (those waiting together in
        one write and one fsync), and take the checkpoints between them.

        While a durable group is applied, the next one, if it is ready, is written and fsynced
        by the syncer thread: the fsync, which needs neither the model lock nor the CPU, overlaps
        applying, which needs both. The next group is applied only once its own fsync is done,
        and after this group; a failed write or fsync of it fails it alone (this one is durable
        already). Nothing is written past a group after which a checkpoint is due: the
        checkpoint empties the log."""
        carry = None
        while True:
            item = carry if carry is not None else self._prepared.get()
            carry = None
            if isinstance(item, _Control):
                if item.action == "stop":
                    item.future.set_result(None)
                    return
                self._checkpoint(item)
                continue
            group, carry = self._merged(item)
            in_flight = group
            try:
                started = self._write(group)
                seconds = None if started is None else self._synced(group, started, self.writer.sync)
                while seconds is not None:
                    nxt = syncing = None
                    if carry is None and not self._checkpoint_due(len(group)):
                        nxt, carry = self._ready()
                    if nxt:
                        in_flight = group + nxt
                        started = self._write(nxt)
                        syncing = None if started is None else self._syncer.submit(self.writer.sync)
                    self._apply(group, seconds)
                    in_flight = nxt or []
                    if syncing is None:
                        break
                    group, seconds = nxt, self._synced(nxt, started, syncing.result)
                if self._checkpoint_due(0):
                    self._checkpoint(None)
            except Exception as exc:  # a bug, not bad input: keep answering, stop learning
                self._stop_learning(in_flight, exc)

    def _merged(self, item) -> tuple[list[_Update], object]:
        """The prepared group ``item`` with those prepared after it (within a group's bounds),
        and the item that did not fit (or ``None``)."""
        group, size = item
        while len(group) < self.max_group_records:
            try:
                nxt = self._prepared.get_nowait()
            except queue.Empty:
                return group, None
            if (isinstance(nxt, _Control) or len(group) + len(nxt[0]) > self.max_group_records
                    or size + nxt[1] > MAX_GROUP_BYTES):
                return group, nxt
            group, size = group + nxt[0], size + nxt[1]
        return group, None

    def _ready(self) -> tuple[list[_Update] | None, object]:
        """The next prepared group if one is ready (:meth:`_merged`), else ``None``; and the item
        after it, or a control that came first."""
        try:
            item = self._prepared.get_nowait()
        except queue.Empty:
            return None, None
        return (None, item) if isinstance(item, _Control) else self._merged(item)

    def _checkpoint_due(self, more: int) -> bool:
        """Whether a checkpoint is due once ``more`` updates are applied (``--checkpoint-every``)."""
        return bool(self.checkpoint_every) and self.counters.seq + more - self._checkpointed_seq() >= self.checkpoint_every

    def _stop_learning(self, group: list[_Update], exc: Exception) -> None:
        LOG.error("the committer failed", exc_info=exc)
        self._diverged = True
        self.degraded = f"an internal error stopped learning ({type(exc).__name__}: {exc})"
        for update in group:
            if not update.future.done():
                update.future.set_exception(NotLearningError(f"learning is stopped: {self.degraded}"))

    @staticmethod
    def _sized(update: _Update) -> int:
        """The update's record size in the log (its payload is encoded once)."""
        if not update.payload:
            update.payload = encode_payload(update.documents, update.logged_labels)
        return HEADER_BYTES + len(update.payload)

    def _featurized(self, group: list[_Update]) -> list[_Update]:
        """The group with every update featurized (:func:`featurize_each`); an update whose
        documents the featurizer cannot read is refused (422) and left out, before anything is
        written."""
        pending = [u for u in group if u.X is None]
        for update, X in zip(pending, featurize_each(self.model, [u.documents for u in pending],
                                                     together=self._group_featurize)):
            if isinstance(X, Exception):
                update.future.set_exception(X)
            else:
                update.X, update.unseen = X, self.vocabulary.unseen(update.documents)
        return [u for u in group if not u.future.done()]

    def _write(self, group: list[_Update]) -> float | None:
        """Write the group's records, numbered after those written before; when it started, or
        ``None`` if they were not written (their futures are failed)."""
        if self.degraded is not None:
            for update in group:
                update.future.set_exception(NotLearningError(f"learning is stopped: {self.degraded}"))
            return None
        started = time.perf_counter()
        try:
            self.writer.write([frame_record(self._logged + i, u.payload) for i, u in enumerate(group, 1)])
        except OSError as exc:
            self._not_durable(group, exc)
            return None
        self._logged += len(group)
        return started

    def _synced(self, group: list[_Update], started: float, sync) -> float | None:
        """Wait for ``sync`` (the group's fsync); the seconds since the write started, or ``None``
        if it failed (the group's futures are failed, and learning stops)."""
        try:
            sync()
        except OSError as exc:
            self._not_durable(group, exc)
            return None
        return time.perf_counter() - started

    def _not_durable(self, group: list[_Update], exc: OSError) -> None:
        reason = f"the update log could not be written ({exc.strerror or exc})"
        if self.writer.broken:
            self.degraded = reason
        for update in group:
            update.future.set_exception(DurabilityError(f"{reason}; the update was not applied"))

    def _apply(self, group: list[_Update], write_seconds: float) -> None:
        """Apply a durable group in log order, then answer each of its requests. Not once an
        update before it could not be applied: the model would skip a record of the log."""
        results = []
        error = None
        if not self._diverged:
            with self.lock.exclusive():
                outcomes, error = apply_group(self.model, [u.X for u in group], [u.labels for u in group])
                for update, outcome in zip(group, outcomes):  # each request's own counts, in log order
                    if self.deltas is not None:
                        self.deltas.mark_columns(update.X.columns)
                    self.counters.add(len(update.documents), outcome.mistakes, outcome.changes)
                    results.append(learn_reply(self.counters, len(update.documents), outcome, update.unseen))
        if error is not None:
            # Checked and featurized beforehand, an update does not fail; if one does, it is in
            # the log but not in the model: stop learning rather than diverge from the log.
            LOG.error("an update could not be applied", exc_info=error)
            self._diverged = True
            self.degraded = (f"update {self.counters.seq + 1} is in the log but could not be applied "
                             f"({type(error).__name__}: {error})")
        if self.metrics is not None:
            self.metrics.committed(len(results), write_seconds, results)
        for update, reply in zip(group, results):
            update.future.set_result(reply)
        for update in group[len(results):]:
            update.future.set_exception(NotLearningError(f"learning is stopped: {self.degraded}"))

    def _checkpointed_seq(self) -> int:
        return self.last_checkpoint.seq if self.last_checkpoint is not None else 0

    def _checkpoint(self, control: _Control | None) -> None:
        """Save the model (predictions go on meanwhile), then empty the log. Not once learning
        stopped: the log may hold updates the model does not (a restart replays them)."""
        if self.degraded is not None:
            if control is not None:
                control.future.set_exception(NotLearningError(f"learning is stopped: {self.degraded}"))
            return
        try:
            if self.last_checkpoint is None or self.last_checkpoint.seq != self.counters.seq:
                with self.state.snapshot(exclusive=True):  # replicas see both changes or neither
                    self.last_checkpoint = write_checkpoint(self.state, self.model, self.counters, self.lock,
                                                            self.deltas, self.last_checkpoint)
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
            **({"multi_label": status_of(self.model.steps[-1][1])} if self.labels.multilabel else {}),
        }
