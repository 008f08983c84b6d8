"""The state folder of a learning service: its checkpoints and its update log.

::

    STATE/
        checkpoint-000000000000.textcw-model   the served model before any update (record 0)
        checkpoint-000000001234.textcw-model   the model after record 1234 (the newest is kept)
        updates.log                            the records after the newest checkpoint
        lock                                   held (flock) by the one service learning here

Checkpoints are ordinary model files written by :func:`textcw.save` (atomically, signed when a
signing key is configured) and read back with :func:`textcw.load`, so they pass every check a
model file does. Each records in its manifest (``info["textcw_serve"]``) the record number it
holds, the service's counters, and the sha256 of the model file the service was started from,
so that a state folder is never applied to another model by mistake.

Start-up (:func:`open_state`): the newest checkpoint is loaded and the log's records after it
are replayed; records it already holds (a crash between writing a checkpoint and emptying the
log) are skipped. Writing a checkpoint (:meth:`StateFolder.write_checkpoint`) saves the new
file first and only then may the caller empty the log, so a crash or a full disk at any point
leaves a checkpoint and a log that together hold every acknowledged update.
"""

from __future__ import annotations

import datetime
import fcntl
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path

import textcw
from textcw.errors import DataError, InputError
from textcw.persist import SUFFIX

from textcw_serve.journal import LogContents, read_log

CHECKPOINT_PATTERN = re.compile(r"^checkpoint-(\d{12})" + re.escape(SUFFIX) + "$")
LOG_NAME = "updates.log"
LOCK_NAME = "lock"
INFO_KEY = "textcw_serve"


@dataclass
class Counters:
    """What the service has learned since the model was first served."""

    seq: int = 0  # records (``/learn`` requests) applied
    documents: int = 0  # documents learned
    mistakes: int = 0  # online mistakes on them, each counted before its update
    changes: int = 0  # documents whose update changed the model

    def add(self, documents: int, mistakes: int, changes: int) -> None:
        self.seq += 1
        self.documents += documents
        self.mistakes += mistakes
        self.changes += changes


@dataclass
class Checkpoint:
    seq: int
    path: Path
    created_at: str | None


def checkpoint_name(seq: int) -> str:
    return f"checkpoint-{seq:012d}{SUFFIX}"


class StateFolder:
    """The files of one state folder; see the module docstring."""

    def __init__(self, folder: Path, base_sha256: str, base_info: dict):
        self.folder = folder
        self.base_sha256 = base_sha256
        self.base_info = base_info
        self.log_path = folder / LOG_NAME
        self._lock_fd: int | None = None

    def lock(self) -> None:
        """Hold the folder's lock for this process: two services appending to one log would
        interleave their records."""
        fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InputError(f"another textcw serve is learning into {self.folder}; stop it first, "
                             "or give this one its own --state folder") from None
        self._lock_fd = fd

    def unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def checkpoints(self) -> list[Checkpoint]:
        found = []
        for entry in os.scandir(self.folder):
            match = CHECKPOINT_PATTERN.match(entry.name)
            if match and entry.is_file(follow_symlinks=False):
                found.append(Checkpoint(int(match.group(1)), Path(entry.path), None))
        return sorted(found, key=lambda c: c.seq)

    def write_checkpoint(self, model, counters: Counters) -> Checkpoint:
        """Save ``model`` as the checkpoint of record ``counters.seq``; older ones are removed
        once it is written. Raises :class:`textcw.errors.ModelFileError` (a full disk, a
        read-only folder) with every existing file unchanged."""
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        info = dict(self.base_info)
        info[INFO_KEY] = {**asdict(counters), "base_sha256": self.base_sha256}
        path = self.folder / checkpoint_name(counters.seq)
        textcw.save(model, path, info=info, created_at=now)
        for old in self.checkpoints():
            if old.seq < counters.seq:
                old.path.unlink(missing_ok=True)
        return Checkpoint(counters.seq, path, now.isoformat())

    def load_newest(self):
        """``(model, counters, checkpoint)`` of the newest checkpoint, or ``None`` if there is none."""
        checkpoints = self.checkpoints()
        if not checkpoints:
            return None
        newest = checkpoints[-1]
        manifest = textcw.read_manifest(newest.path)
        info = manifest.get("info", {}).get(INFO_KEY) if isinstance(manifest.get("info"), dict) else None
        if not isinstance(info, dict) or not isinstance(info.get("base_sha256"), str):
            raise DataError(f"{newest.path} was not written by textcw serve (its manifest has no "
                            f"{INFO_KEY!r} record); remove it from the state folder {self.folder}")
        if info["base_sha256"] != self.base_sha256:
            raise InputError(
                f"the state folder {self.folder} belongs to another model (sha256 "
                f"{info['base_sha256'][:12]}..., this one {self.base_sha256[:12]}...); give this model "
                "its own --state folder, or start the service with the model that folder was made for")
        fields = ("seq", "documents", "mistakes", "changes")
        if not all(isinstance(info.get(k), int) and info[k] >= 0 for k in fields) or info["seq"] != newest.seq:
            raise DataError(f"{newest.path} records counters that do not match its name; the state "
                            f"folder {self.folder} was edited by hand")
        model = textcw.load(newest.path)
        newest.created_at = manifest.get("created_at")
        return model, Counters(**{k: info[k] for k in fields}), newest

    def read_log(self, after: int) -> tuple[LogContents, list]:
        """The log and its records after record ``after``, checking that they continue it."""
        contents = read_log(self.log_path)
        pending = [r for r in contents.records if r.seq > after]
        if pending and pending[0].seq != after + 1:
            raise DataError(
                f"the update log {self.log_path} starts at record {pending[0].seq} but the newest "
                f"checkpoint holds records up to {after}: records in between are missing. Restore "
                "the missing checkpoint, or move the log away to start from the checkpoint")
        return contents, pending


def prepare_folder(folder: Path) -> Path:
    """Create the state folder if needed (its parent must exist); refuse a file or a link."""
    if folder.is_symlink() and not folder.is_dir():
        raise InputError(f"--state {folder} is a symbolic link to nothing; give a folder")
    if folder.exists():
        if not folder.is_dir():
            raise InputError(f"--state {folder} is not a folder; give a folder for checkpoints and the log")
    else:
        if not folder.parent.is_dir():
            raise InputError(f"--state: folder {folder.parent} does not exist; create it first")
        try:
            folder.mkdir(mode=0o700)
        except OSError as exc:
            raise InputError(f"cannot create the state folder {folder}: {exc.strerror or exc}") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"the state folder {folder} is not writable; choose another with --state")
    return folder
