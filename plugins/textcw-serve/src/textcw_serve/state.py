"""The state folder of a learning service: its checkpoints and its update log.

::

    STATE/
        checkpoint-000000000000.textcw-model   the served model before any update (record 0)
        checkpoint-000000001234.textcw-model   the model after record 1234 (the newest is kept)
        delta-000000001300.npz                 the rows updates 1235-1300 changed (textcw_serve.deltas)
        checkpoints.sha256                     the sha256 of each checkpoint and delta this service wrote
        updates.log                            the records after the newest checkpoint
        lock                                   held (flock) by the one service learning here

Trust: a checkpoint is a pickle, so the folder is read only when it is the user's own and nobody
else can write to it or to a folder above it (:func:`textcw.trust.check_trusted_dir`), and a
checkpoint is unpickled only when it is a regular file of the user's whose sha256 is the one
recorded in ``checkpoints.sha256`` (itself checked the same way) when the service wrote it.
The folder is created ``0700``; checkpoints, the digest record, the log and the lock are
``0600`` whatever the umask (a checkpoint is written in the private ``.tmp/`` folder, made
``0600`` and only then renamed into place). See docs/security.md, "The service".

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

import contextlib
import datetime
import fcntl
import hashlib
import hmac
import logging
import os
import re
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

import textcw
import textcw.persist
from textcw.atomic import atomic_write_text, fsync_folder
from textcw.errors import DataError, InputError
from textcw.persist import SUFFIX
from textcw.trust import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, check_trusted_dir, open_trusted_file

from textcw_serve.deltas import delta_files, read_deltas
from textcw_serve.journal import LogContents, parse_log

CHECKPOINT_PATTERN = re.compile(r"^checkpoint-(\d{12})" + re.escape(SUFFIX) + "$")
LOG_NAME = "updates.log"
LOCK_NAME = "lock"
DIGESTS_NAME = "checkpoints.sha256"
TMP_NAME = ".tmp"
INFO_KEY = "textcw_serve"
_MAX_DIGESTS_BYTES = 64 << 10
_DIGEST_LINE = re.compile(r"^([0-9a-f]{64})  (checkpoint-\d{12}" + re.escape(SUFFIX) + r"|delta-\d{12}\.npz)$")
LOG = logging.getLogger("textcw.serve")


class CheckpointMoved(DataError):
    """A checkpoint went away while it was read: a learning service replaced it (a replica retries)."""


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
        try:
            fd = os.open(self.folder / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK,
                         PRIVATE_FILE_MODE)
        except OSError as exc:
            raise InputError(f"cannot open the lock of the state folder {self.folder}: {exc.strerror or exc}; "
                             f"remove {self.folder / LOCK_NAME} if it is not a regular file") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise InputError(f"another textcw serve is learning into {self.folder}; stop it first, "
                             "or give this one its own --state folder") from None
        self._lock_fd = fd

    @contextlib.contextmanager
    def snapshot(self, *, exclusive: bool):
        """Hold the folder as one snapshot: a learner writes a checkpoint and empties the log
        under the exclusive lock, a replica reads the checkpoint and the log under a shared one,
        so that it never sees a new checkpoint with an old log or the reverse (``flock`` on the
        folder itself: no file is added, and it holds between threads of one process too). A
        replica's read can delay a learner's checkpoint by as long as it takes; appends to the
        log, which a replica reads as a prefix, are not held up."""
        fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)  # releases the lock

    def held_by_learner(self) -> bool:
        """Whether a learning service holds this folder's lock now (a replica asks, read-only)."""
        try:
            fd = os.open(self.folder / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        finally:
            os.close(fd)  # releases the shared lock too
        return False

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
        once it is written and its digest recorded. Raises :class:`textcw.errors.ModelFileError`
        (a full disk, a read-only folder) or :class:`OSError` with every existing file unchanged."""
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        info = dict(self.base_info)
        info[INFO_KEY] = {**asdict(counters), "base_sha256": self.base_sha256}
        name = checkpoint_name(counters.seq)
        path = self.folder / name
        # Written in the private .tmp/ folder and made 0600 there: textcw.save creates files as
        # the umask says, and the state folder itself may be readable by others.
        staging = self.folder / TMP_NAME
        if staging.is_symlink() or (staging.exists() and not staging.is_dir()):
            raise InputError(f"{staging} is not a folder; remove it")
        staging.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
        os.chmod(staging, PRIVATE_DIR_MODE)
        staged = staging / name
        try:
            textcw.save(model, staged, info=info, created_at=now)
            os.chmod(staged, PRIVATE_FILE_MODE)
            digest = file_sha256(staged)
            os.replace(staged, path)
            fsync_folder(self.folder)
        finally:
            staged.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                staging.rmdir()
        recorded = self._recorded_digests()
        self._write_digests({**{k: v for k, v in recorded.items() if (self.folder / k).exists()}, name: digest})
        for old in self.checkpoints():
            if old.seq < counters.seq:
                old.path.unlink(missing_ok=True)
        for seq, old_delta in delta_files(self.folder):  # the full checkpoint holds what they held
            if seq <= counters.seq:
                old_delta.unlink(missing_ok=True)
        self._write_digests({name: digest})
        return Checkpoint(counters.seq, path, now.isoformat())

    def record_digest(self, name: str, digest: str) -> None:
        """Add the sha256 of a file just written (a delta) to ``checkpoints.sha256``."""
        recorded = self._recorded_digests()
        self._write_digests({**{k: v for k, v in recorded.items() if (self.folder / k).exists()}, name: digest})

    def _write_digests(self, digests: dict[str, str]) -> None:
        path = self.folder / DIGESTS_NAME
        text = "".join(f"{digest}  {name}\n" for name, digest in sorted(digests.items()))
        atomic_write_text(path, text)
        os.chmod(path, PRIVATE_FILE_MODE)

    def _recorded_digests(self) -> dict[str, str]:
        """``{checkpoint name: sha256}`` from ``checkpoints.sha256`` (``sha256sum`` format), checked
        like the folder; none if there is no record yet."""
        path = self.folder / DIGESTS_NAME
        if not os.path.lexists(path):
            return {}
        raw = read_regular_file(path, _MAX_DIGESTS_BYTES, "the checkpoint digests of the service state folder")
        digests = {}
        for number, line in enumerate(raw.decode("ascii", "replace").splitlines(), 1):
            match = _DIGEST_LINE.match(line)
            if not match:
                raise DataError(f"{path} line {number} is not '<sha256>  checkpoint-NNNNNNNNNNNN{SUFFIX}'; "
                                "the state folder was edited by hand: restore the line or remove the "
                                "checkpoint it named")
            digests[match.group(2)] = match.group(1)
        return digests

    def load_newest(self):
        """``(model, counters, checkpoint)`` of the newest checkpoint, or ``None`` if there is none.

        The checkpoint is opened once (:func:`textcw.trust.open_trusted_file`) and read whole: the
        bytes whose sha256 is compared with the recorded one are the bytes whose manifest is read
        and whose payload is unpickled (:func:`textcw.persist.load_vouched`)."""
        checkpoints = self.checkpoints()
        if not checkpoints:
            return None
        recorded = self._recorded_digests()
        newest = checkpoints[-1]
        if newest.path.name not in recorded:
            if len(checkpoints) > 1 and checkpoints[-2].path.name in recorded:
                # a crash after the new checkpoint was renamed into place, before its digest was
                # recorded: the previous checkpoint and the log still hold every update
                LOG.warning("ignoring %s: its digest is not recorded in %s (the service stopped while "
                            "writing it, or something else put it there); it is not loaded",
                            newest.path.name, DIGESTS_NAME)
                newest = checkpoints[-2]
            elif newest.seq == 0 and len(checkpoints) == 1 and not recorded:
                # a crash during the first start, before the first checkpoint's digest was
                # recorded: that checkpoint is the model file as served, which is loaded instead
                # (and checkpointed again); it is never unpickled unrecorded
                LOG.warning("ignoring %s: the service stopped during its first start before recording its "
                            "digest; starting from the model file again", newest.path.name)
                return None
        expected = recorded.get(newest.path.name)
        if expected is None:
            raise DataError(
                f"{newest.path} has no sha256 recorded in {self.folder / DIGESTS_NAME}, so it was not "
                "written by this service (or by an earlier textcw-serve, which recorded none); a checkpoint "
                "is a pickle and is loaded only when its digest was recorded. If you wrote it, record it with: "
                f"cd '{self.folder}' && sha256sum {newest.path.name} >> {DIGESTS_NAME}")
        try:
            with open_trusted_file(newest.path, "the service checkpoint") as fh:
                data = fh.read()
        except FileNotFoundError:
            raise CheckpointMoved(f"{newest.path} was removed while it was read") from None
        actual = hashlib.sha256(data).hexdigest()
        if not hmac.compare_digest(actual, expected):
            raise DataError(f"{newest.path} is not the checkpoint this service wrote (sha256 {actual[:12]}..., "
                            f"recorded {expected[:12]}...); refusing to load it. Restore it, or remove it "
                            "and its log to start from the model file")
        manifest = textcw.persist.read_manifest_bytes(data, newest.path)
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
        model = textcw.persist.load_vouched(data, newest.path)
        newest.created_at = manifest.get("created_at")
        return model, Counters(**{k: info[k] for k in fields}), newest

    def read_deltas(self, after: int) -> list:
        """The recorded deltas after the full checkpoint of record ``after``, read, checked
        against their recorded sha256 and chained (:func:`textcw_serve.deltas.read_deltas`)."""
        return read_deltas(self.folder, self._recorded_digests(), after, self.base_sha256, LOG)

    def read_log(self, after: int) -> tuple[LogContents, list, list[str]]:
        """The log, its intact records after record ``after`` and, if it is damaged, one line per
        damaged stretch naming the record numbers lost there."""
        if os.path.lexists(self.log_path):
            with open_trusted_file(self.log_path, "the update log of the service state folder") as fh:
                data = fh.read()
        else:
            data = b""
        contents = parse_log(data, self.log_path)
        pending = [r for r in contents.records if r.seq > after]
        if pending and pending[0].seq != after + 1 and not any(
                d.before == pending[0].seq for d in contents.damage):
            raise DataError(
                f"the update log {self.log_path} starts at record {pending[0].seq} but the newest "
                f"checkpoint holds records up to {after}: records in between are missing. Restore "
                "the missing checkpoint, or move the log away to start from the checkpoint")
        return contents, pending, describe_damage(contents, after)

    def quarantine_log(self) -> Path:
        """Copy the log to ``updates.log.damaged-<UTC time>`` (0600) beside it, before anything
        is cut or emptied, so the evidence of damage is kept."""
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
        copy = self.folder / f"{LOG_NAME}.damaged-{stamp}"
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, PRIVATE_FILE_MODE)
        with os.fdopen(fd, "wb") as out, open_regular(self.log_path) as source:
            while chunk := source.read(1 << 20):
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        fsync_folder(self.folder)
        return copy


def describe_damage(contents: LogContents, after: int) -> list[str]:
    """One sentence per damaged stretch of the log, naming exactly the records lost in it."""
    lines = []
    for d in contents.damage:
        # records up to ``after`` are in the checkpoint: damage among them loses nothing
        first = max(d.after if d.after is not None else after, after) + 1
        where = f"{d.length:,} damaged bytes at byte {d.offset:,}"
        if d.before is not None:
            last = d.before - 1
            if last < first or last <= after:
                lines.append(f"{where}: no record lost (the records around it follow each other or are "
                             "in the checkpoint)")
            else:
                lost = f"record {first}" if first == last else f"records {first} to {last}"
                lines.append(f"{where}: {lost} lost ({last - first + 1} acknowledged "
                             f"update{'s' if last > first else ''}); replaying resumed at record {d.before}")
        else:
            lines.append(f"{where} at the end of the log: any records from {first} on that were there "
                         "are lost (a write cut off by a crash was never acknowledged; damage to the "
                         "last records was)")
    return lines


def prepare_folder(folder: Path) -> Path:
    """Create the state folder owner-only (0700) if needed (its parent must exist), or check the
    one that is there: it must be the user's own and writable by nobody else."""
    if os.path.lexists(folder):
        check_trusted_dir(folder, "the service state folder")
    else:
        if not folder.parent.is_dir():
            raise InputError(f"--state: folder {folder.parent} does not exist; create it first")
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
            os.chmod(folder, PRIVATE_DIR_MODE)  # mkdir's mode is masked by the umask
        except OSError as exc:
            raise InputError(f"cannot create the state folder {folder}: {exc.strerror or exc}") from None
        check_trusted_dir(folder, "the service state folder")  # and the folders above it
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"the state folder {folder} is not writable; choose another with --state")
    return folder


def check_state_folder(folder: Path) -> Path:
    """A replica's state folder (read, never written): the same trust rule as a learner's."""
    if not os.path.lexists(folder):
        raise InputError(f"--state {folder} does not exist; give the state folder of a learning "
                         "service, or leave --state out to serve the model file as it is")
    return check_trusted_dir(folder, "the service state folder")


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def open_regular(path: Path):
    """``path`` opened for reading without following a link and without blocking on a FIFO;
    anything but a regular file is refused."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    fh = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        fh.close()
        raise InputError(f"{path} is not a regular file")
    return fh


def read_regular_file(path: Path, limit: int, what: str, *, should_hold: str = "what textcw serve wrote") -> bytes:
    """At most ``limit`` bytes of the file ``path``, opened once it passed the trust rules
    (:func:`textcw.trust.open_trusted_file`: the user's own regular file, that nobody else can
    write, in folders nobody else can swap); more is an error."""
    with open_trusted_file(path, what) as fh:
        raw = fh.read(limit + 1)
    if len(raw) > limit:
        raise InputError(f"{what} {path} is over {limit} bytes; it should hold {should_hold}")
    return raw
