"""The update log: an append-only file of framed records, fsynced before an update is acknowledged.

Every ``/learn`` request becomes one record. A record is framed as::

    length (4 bytes, big-endian)   of the payload
    crc32  (4 bytes, big-endian)   of the sequence number's 8 bytes and the payload
    seq    (8 bytes, big-endian)   the record's number: 1, 2, 3, ... since the model was first served
    payload (length bytes)         JSON: {"documents": [...], "labels": [...]}

Records are written in groups (group commit): the writer collects every request that arrived
while the previous ``fsync`` ran, writes them with one ``write`` and makes them durable with one
``fsync``. Only then are they applied and acknowledged, so an acknowledged update is on disk.

A crash (``kill -9``, a power cut) can interrupt at most the group being written, which was not
acknowledged: its records may be missing, cut off, or hold bytes that never made it to disk. On
reading, the first record whose frame is incomplete or whose checksum fails ends the log; the
bytes from there on are dropped (and cut off the file before new records are appended). A group
is at most :data:`MAX_GROUP_BYTES`, so a bad record followed by more than that is not a torn
last group but damage in the middle of acknowledged records: :func:`read_log` refuses it rather
than silently losing acknowledged updates.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

from textcw.errors import DataError

_HEADER = struct.Struct(">IIQ")
HEADER_BYTES = _HEADER.size
# One request's payload is bounded by the HTTP body limit; a group by this many bytes. The
# reader uses the same bound to tell a torn last group from damage further back.
MAX_RECORD_BYTES = 16 << 20
MAX_GROUP_BYTES = 64 << 20
MAX_GROUP_RECORDS = 1024


class LogDamagedError(DataError):
    """The update log is damaged before its last group: acknowledged updates cannot be recovered."""


@dataclass(frozen=True)
class Record:
    seq: int
    documents: list
    labels: list


def encode_record(seq: int, documents: list, labels: list) -> bytes:
    """One framed record. The payload is ASCII JSON (``ensure_ascii``): any str, lone surrogates
    included, survives the round trip."""
    payload = json.dumps({"documents": documents, "labels": labels}, ensure_ascii=True,
                         separators=(",", ":")).encode("ascii")
    if len(payload) > MAX_RECORD_BYTES:
        raise ValueError(f"an update record of {len(payload):,} bytes is over the {MAX_RECORD_BYTES:,} limit")
    seq_bytes = seq.to_bytes(8, "big")
    return _HEADER.pack(len(payload), zlib.crc32(payload, zlib.crc32(seq_bytes)), seq) + payload


@dataclass
class LogContents:
    records: list[Record]
    valid_bytes: int  # where the good records end: the rest was a torn last group
    dropped_bytes: int


def read_log(path: Path) -> LogContents:
    """Every complete, intact record of the log at ``path`` (none if it does not exist).

    Raises :class:`LogDamagedError` if a bad record is followed by more bytes than one group
    can hold, or if the sequence numbers do not follow each other.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LogContents([], 0, 0)
    records: list[Record] = []
    offset = 0
    while offset < len(data):
        record, end = _decode_at(data, offset)
        if record is None:
            break
        if records and record.seq != records[-1].seq + 1:
            raise LogDamagedError(
                f"the update log {path} jumps from record {records[-1].seq} to {record.seq} at byte "
                f"{offset}; it was modified by something else than textcw serve. Restore it from a "
                "backup, or move it away to start from the newest checkpoint (losing its updates)")
        records.append(record)
        offset = end
    dropped = len(data) - offset
    if dropped > MAX_GROUP_BYTES + HEADER_BYTES:
        raise LogDamagedError(
            f"the update log {path} has a damaged record at byte {offset} followed by {dropped:,} more "
            f"bytes, more than one write group ({MAX_GROUP_BYTES:,}): acknowledged updates after it "
            "cannot be read. Restore the log from a backup, or move it away to start from the newest "
            "checkpoint (losing its updates)")
    return LogContents(records, offset, dropped)


def _decode_at(data: bytes, offset: int) -> tuple[Record | None, int]:
    """The record starting at ``offset`` and where it ends, or ``(None, offset)`` if it is torn."""
    if len(data) - offset < HEADER_BYTES:
        return None, offset
    length, crc, seq = _HEADER.unpack_from(data, offset)
    start, end = offset + HEADER_BYTES, offset + HEADER_BYTES + length
    if length > MAX_RECORD_BYTES or end > len(data):
        return None, offset
    payload = data[start:end]
    if zlib.crc32(payload, zlib.crc32(seq.to_bytes(8, "big"))) != crc:
        return None, offset
    try:
        body = json.loads(payload.decode("ascii"))
        record = Record(seq, list(body["documents"]), list(body["labels"]))
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None, offset  # a checksum collision on garbage: still not a record we wrote
    return record, end


class LogWriter:
    """Appends groups of records to the log and makes each group durable with one ``fsync``."""

    def __init__(self, path: Path, valid_bytes: int, *, sync: bool = True):
        self.path = path
        self._sync = sync
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        # drop a torn last group before appending after it
        if os.fstat(self._fd).st_size != valid_bytes:
            os.ftruncate(self._fd, valid_bytes)
            os.fsync(self._fd)
        self.size = valid_bytes
        self.broken = False
        _fsync_folder(path.parent)  # the log's own name must survive a crash too

    def append(self, frames: list[bytes]) -> None:
        """Write ``frames`` and fsync them. If the write fails (a full disk), the log is cut
        back to where it was and the error re-raised. If the cut-back or the ``fsync`` fails,
        what the disk holds is unknown (a failed fsync may have dropped pages): ``broken`` is
        set and the writer must not be used again."""
        data = b"".join(frames)
        if len(data) > MAX_GROUP_BYTES:
            raise ValueError(f"a write group of {len(data):,} bytes is over the {MAX_GROUP_BYTES:,} limit")
        try:
            view = memoryview(data)
            while view:
                written = os.write(self._fd, view)
                view = view[written:]
        except OSError:
            try:
                os.ftruncate(self._fd, self.size)
                os.fsync(self._fd)
            except OSError:
                self.broken = True
            raise
        if self._sync:
            try:
                os.fsync(self._fd)
            except OSError:
                self.broken = True
                raise
        self.size += len(data)

    def reset(self) -> None:
        """Empty the log (after a checkpoint holds every record in it)."""
        os.ftruncate(self._fd, 0)
        os.fsync(self._fd)
        self.size = 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _fsync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
