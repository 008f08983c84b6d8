"""Start-up: load the model (or the newest checkpoint) and replay the update log after it."""

from __future__ import annotations

import importlib.metadata
import logging
import platform
import time
from pathlib import Path

import textcw
from textcw.errors import DataError, InputError

from textcw_serve.deltas import FULL_EVERY, DeltaTracker, apply_deltas, delta_files, supports_deltas
from textcw_serve.journal import LogWriter
from textcw_serve.model_ops import LabelMap, check_learnable, check_servable, featurize, is_multilabel
from textcw_serve.updates import apply_update
from textcw_serve.service import ModelService
from textcw_serve.state import (INFO_KEY, Checkpoint, CheckpointMoved, Counters, StateFolder, check_state_folder,
                                prepare_folder)

LOG = logging.getLogger("textcw.serve")
STATE_SUFFIX = ".serve"
REPLICA_ATTEMPTS = 10  # reads of a state folder a learner changed meanwhile, before a replica gives up
REPLICA_BACKOFF_SECONDS = 0.1  # waited before the n-th new read: n times this (5.5 s over all ten)


def default_state_folder(model_path: Path) -> Path:
    """``spam.textcw-model`` learns into ``spam.serve/`` beside it."""
    return model_path.with_name(model_path.name.split(".")[0] + STATE_SUFFIX)


def versions() -> dict:
    found = {"python": platform.python_version()}
    for dist in ("textcw", "textcw-serve", "numpy", "scikit-learn", "fastapi", "uvicorn"):
        try:
            found[dist] = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            found[dist] = None
    return found


def open_service(model_path: str | Path, *, learn: bool = False, state: str | Path | None = None,
                 checkpoint_every: int = 10_000, max_group_records: int | None = None,
                 metrics=None, full_every: int = FULL_EVERY) -> ModelService:
    """The :class:`ModelService` for ``model_path``.

    With ``learn``, updates are logged and checkpointed in ``state`` (default: ``NAME.serve``
    beside the model), whose lock this process then holds. Without ``learn`` but with
    ``state`` (a replica), the newest checkpoint there is loaded and the log replayed, read-only.
    Every ``full_every``-th checkpoint holds the whole model; the others only the rows the updates
    since the one before changed (:mod:`textcw_serve.deltas`; 1: every checkpoint whole).
    """
    model_path = Path(model_path)
    manifest = textcw.read_manifest(model_path)  # a damaged or foreign file fails here, unpickled
    base_info = {k: v for k, v in (manifest.get("info") or {}).items() if k != INFO_KEY} \
        if isinstance(manifest.get("info"), dict) else {}
    if learn and state is None:
        state = default_state_folder(model_path)
    folder = None
    if state is not None:
        state = Path(state)
        if learn:
            prepare_folder(state)
        else:
            check_state_folder(state)
        folder = StateFolder(state, manifest["payload"]["sha256"], base_info)
        if learn:
            folder.lock()
    try:
        return _open(model_path, manifest, folder, learn, checkpoint_every, max_group_records, metrics, full_every)
    except BaseException:
        if folder is not None:
            folder.unlock()
        raise


def _load_model_file(model_path: Path, manifest: dict):
    """The model file's model, checked to be the one whose manifest was read at the start (the
    state folder is tied to that manifest's payload digest)."""
    model, loaded = textcw.load(model_path, with_manifest=True)
    if loaded["payload"]["sha256"] != manifest["payload"]["sha256"]:
        raise InputError(f"{model_path} was replaced while the service started; start it again")
    return model


def _read_state(folder: StateFolder, learn: bool):
    """``(newest checkpoint or None, the deltas after it, log contents, pending records, damage)``,
    read consistently.

    A replica reads a folder that a learning service may be changing: the learner writes a newer
    checkpoint, removes the older one and empties its log, all under the folder's exclusive lock
    (:meth:`StateFolder.snapshot`), and the replica reads under the shared one, so it sees the
    folder before or after, never in between. A learner of an older textcw-serve takes no such
    lock: a read that finds the folder inconsistent while a learner holds the folder is tried
    again (:data:`REPLICA_ATTEMPTS` times, waiting a little longer each time), and a replica
    never advises touching the files of a folder that a running service holds.
    """
    for attempt in range(1, REPLICA_ATTEMPTS + 1):
        try:
            with folder.snapshot(exclusive=learn):
                newest = folder.load_newest()
                seq = newest[1].seq if newest is not None else 0
                deltas = folder.read_deltas(seq) if newest is not None else []
                seq = deltas[-1].seq if deltas else seq
                log = folder.read_log(seq)
                newer = any(c.seq > seq for c in folder.checkpoints()) or any(
                    s > seq for s, _ in delta_files(folder.folder))
            if not learn and newer and folder.held_by_learner():
                # a newer checkpoint came while the log was read: the log may have been emptied
                raise CheckpointMoved(f"a checkpoint newer than record {seq} was written meanwhile")
            return (newest, deltas, *log)
        except (DataError, InputError) as exc:
            if learn or not folder.held_by_learner():
                raise
            if attempt == REPLICA_ATTEMPTS:
                raise InputError(
                    f"the state folder {folder.folder} changed under this replica {attempt} times while it was "
                    f"read (a learning service holds it and writes checkpoints); start the replica again, or "
                    f"give the learner a larger --checkpoint-every. Leave the folder's files as they are: "
                    f"the learning service needs them (last seen: {str(exc).split('. ')[0]})") from None
            LOG.info("the state folder changed while it was read (%s); reading it again", exc)
            time.sleep(REPLICA_BACKOFF_SECONDS * attempt)
    raise AssertionError("unreachable")


def _open(model_path, manifest, folder, learn, checkpoint_every, max_group_records, metrics, full_every):
    if folder is None:
        newest = contents = None
        deltas, pending, damage = [], [], []
    else:
        newest, deltas, contents, pending, damage = _read_state(folder, learn)
    if newest is None:
        model, counters, checkpoint = _load_model_file(model_path, manifest), Counters(), None
    else:
        model, counters, checkpoint = newest
        LOG.info("loaded checkpoint %s (record %d)", checkpoint.path.name, checkpoint.seq)
    name = model_path.name
    check_servable(model, name)
    if learn:
        check_learnable(model, name)
    # (a learner's own folder: a replica's may lose the file to the learner's next checkpoint)
    full_bytes = checkpoint.path.stat().st_size if learn and checkpoint is not None else 0
    if deltas:
        apply_deltas(model.steps[-1][1], deltas)
        counters, checkpoint = _counters_of(deltas[-1]), Checkpoint(deltas[-1].seq, deltas[-1].path,
                                                                    deltas[-1].header.get("created_at"))
        LOG.info("applied %d delta%s up to record %d (%s)", len(deltas), "s" if len(deltas) > 1 else "",
                 checkpoint.seq, checkpoint.path.name)
    # the rows the updates after the last checkpoint touch, for the next delta (deltas.py)
    tracker = DeltaTracker(model.steps[-1][1], chain=len(deltas), chain_bytes=sum(d.size for d in deltas),
                           full_bytes=full_bytes, max_chain=full_every - 1) \
        if learn and full_every > 1 and supports_deltas(model.steps[-1][1]) else None
    writer = None
    if folder is not None:
        # the evidence first: nothing of a damaged log is cut or emptied before a copy is kept
        copy = folder.quarantine_log() if damage and learn else None
        labels = LabelMap(model.steps[-1][1].classes_, multilabel=is_multilabel(model))
        for record in pending:
            resolved = _record_labels(record, labels, folder.log_path)
            X = featurize(model, record.documents)
            if tracker is not None:
                tracker.mark(X.tocsr())
            outcome = apply_update(model, X, resolved)
            counters.add(len(record.documents), outcome.mistakes, outcome.changes)
            counters.seq = record.seq  # records lost to damage keep their numbers
        if pending:
            LOG.info("replayed %d updates from %s", len(pending), folder.log_path.name)
        if damage:
            kept = (f"a copy of the damaged log is kept as {copy}" if copy is not None else
                    "the log is left as it is (this service only reads the state folder)")
            LOG.warning("the update log %s is damaged: %s; %s", folder.log_path, "; ".join(damage), kept)
        if learn:
            writer = LogWriter(folder.log_path, contents.valid_bytes)
            if checkpoint is None or damage:
                # the folder's first checkpoint (the model as served, record 0, or as replayed
                # from a log whose checkpoints were removed), or one that holds every intact
                # record of a damaged log, so that the log starts clean
                with folder.snapshot(exclusive=True):
                    checkpoint = folder.write_checkpoint(model, counters)
                    writer.reset()
                if tracker is not None:
                    tracker.full_checkpoint_written(checkpoint.path.stat().st_size)
            elif contents.records and not pending:  # a crash after a checkpoint, before emptying the log
                writer.reset()
    description = dict(manifest.get("model") or {})
    description.pop("classes", None)
    description["versions"] = versions()
    kwargs = {} if max_group_records is None else {"max_group_records": max_group_records}
    service = ModelService(model, name=name, counters=counters, state=folder if learn else None,
                        writer=writer, checkpoint=checkpoint, checkpoint_every=checkpoint_every,
                        metrics=metrics, description=description, deltas=tracker, **kwargs)
    if learn:
        announce_learning_limits(service, name)
    return service


def _record_labels(record, labels: LabelMap, log_path) -> list:
    """The classes a record of the update log names, checked as strictly as a ``/learn`` body:
    the log is read back as untrusted input, and a record that is not a request this model takes
    (documents that are not text, labels of the other shape: a single-label record in a
    multi-label model's log, or the reverse, or an unknown class) is refused, never applied."""
    documents, given = record.documents, record.labels
    if not (isinstance(documents, list) and isinstance(given, list) and documents
            and all(isinstance(d, str) for d in documents) and len(given) == len(documents)):
        raise DataError(f"record {record.seq} of the update log {log_path} is not a /learn request (its documents "
                        "are not a list of texts with one label each); the log was not written by this service "
                        "for this model: move it away to start from the newest checkpoint (losing its updates)")
    try:
        return labels.resolve(given)
    except InputError as exc:
        raise DataError(f"record {record.seq} of the update log {log_path} does not fit this model ({exc}); the "
                        "log belongs to another model or was modified: move it away to start from the newest "
                        "checkpoint (losing its updates)") from None


def _counters_of(delta) -> Counters:
    """The service's counters a delta recorded (checked: whole numbers, its own record number)."""
    found = delta.header.get("counters")
    fields = ("seq", "documents", "mistakes", "changes")
    if not (isinstance(found, dict) and all(isinstance(found.get(k), int) and found[k] >= 0 for k in fields)
            and found["seq"] == delta.seq):
        raise DataError(f"{delta.path} records counters that do not match its name; the state folder was edited "
                        "by hand")
    return Counters(**{k: found[k] for k in fields})


def announce_learning_limits(service: ModelService, name: str) -> None:
    """Say at start what /learn cannot change: words outside a fixed vocabulary, the temperature."""
    if service.vocabulary.fixed:
        LOG.warning("%s has a fixed vocabulary (%d terms, featurizer %s): /learn drops words the model never "
                    "saw, and each reply says how many (unseen_tokens); train with --featurizer hashed-tfidf "
                    "(tfidf's weights over hashed words) to learn new words", name, service.vocabulary.describe()["size"],
                    service.description.get("featurizer") or type(service.model.steps[0][1]).__name__)
    if service.calibration is not None:
        temperature = service.calibration["temperature"]
        LOG.warning("%s calibrates its probabilities with a temperature (%s) fitted in training; /learn keeps "
                    "it as it is while the learner changes (see calibration in /status)", name,
                    "infinite" if temperature is None else f"{temperature:.4g}")
