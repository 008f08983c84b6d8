"""The update log: an append-only file of framed records, fsynced before an update is acknowledged.

Every ``/learn`` request becomes one record. A record is framed as::

    length (4 bytes, big-endian)   of the payload
    crc32  (4 bytes, big-endian)   of the sequence number's 8 bytes and the payload
    seq    (8 bytes, big-endian)   the record's number: 1, 2, 3, ... since the model was first served
    payload (length bytes)         JSON: {"documents": [...], "labels": [...]}

A label is one class, or, for a multi-label model, the list of a document's tags: the format
is the same, and a record is checked on replay to have the shape of the model it is replayed
into (:func:`textcw_serve.startup._record_labels`), so logs written before multi-label models
learned replay as they did.

Records are written in groups (group commit): the writer collects every request that arrived
while the previous ``fsync`` ran, writes them with one ``write`` and makes them durable with one
``fsync``. Only then are they applied and acknowledged, so an acknowledged update is on disk.

A crash (``kill -9``, a power cut) can interrupt at most the group being written, which was not
acknowledged: its records may be missing, cut off, or hold bytes that never made it to disk.
Damage elsewhere (a flipped bit, a bad sector) can hit acknowledged records. On reading, a
record whose frame is incomplete or whose checksum fails is skipped, and the reader looks for
the next intact record after it (a frame whose length fits, whose sequence number follows and
whose checksum holds): every intact record is kept, and :class:`LogContents` says which
stretches of bytes were damaged (``damage``). The caller (start-up) names the record numbers
lost in between, keeps a copy of the damaged log beside it, replays the intact records and
writes a checkpoint so that the log starts clean.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from textcw.errors import DataError

_HEADER = struct.Struct(">IIQ")
HEADER_BYTES = _HEADER.size
# One request's payload is bounded by the HTTP body limit (and a frame claiming more is damage);
# a write group by this many bytes.
MAX_RECORD_BYTES = 16 << 20
MAX_GROUP_BYTES = 64 << 20
MAX_GROUP_RECORDS = 1024


class LogDamagedError(DataError):
    """The update log holds intact records out of order: it was written by something else."""


@dataclass(frozen=True)
class Record:
    seq: int
    documents: list
    labels: list


def encode_record(seq: int, documents: list, labels: list) -> bytes:
    """One framed record. The payload is ASCII JSON (``ensure_ascii``): any str, lone surrogates
    included, survives the round trip."""
    return frame_record(seq, encode_payload(documents, labels))


def encode_payload(documents: list, labels: list) -> bytes:
    """A record's payload (its size does not depend on the record's number, so a write group is
    sized before its records are numbered)."""
    payload = json.dumps({"documents": documents, "labels": labels}, ensure_ascii=True,
                         separators=(",", ":")).encode("ascii")
    if len(payload) > MAX_RECORD_BYTES:
        raise ValueError(f"an update record of {len(payload):,} bytes is over the {MAX_RECORD_BYTES:,} limit")
    return payload


def frame_record(seq: int, payload: bytes) -> bytes:
    """``payload`` framed as record number ``seq``."""
    seq_bytes = seq.to_bytes(8, "big")
    return _HEADER.pack(len(payload), zlib.crc32(payload, zlib.crc32(seq_bytes)), seq) + payload


@dataclass(frozen=True)
class Damage:
    """``length`` bytes at ``offset`` that hold no intact record, between record ``after`` and
    record ``before`` (``None``: the end of the log)."""

    offset: int
    length: int
    after: int | None
    before: int | None


@dataclass
class LogContents:
    records: list[Record]
    valid_bytes: int  # where the last intact record ends
    dropped_bytes: int  # bytes after it (a torn last write, or damage to the last records)
    damage: list[Damage] = field(default_factory=list)

    @property
    def damaged_within(self) -> bool:
        """Whether intact records follow damaged bytes (not just a torn end)."""
        return any(d.before is not None for d in self.damage)


def read_log(path: Path) -> LogContents:
    """Every intact record of the log at ``path`` (none if it does not exist)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return LogContents([], 0, 0)
    return parse_log(data, path)


def parse_log(data: bytes, path: Path) -> LogContents:
    """Every intact record in ``data``, the log read from ``path``, and where it is damaged.

    Raises :class:`LogDamagedError` if two adjacent intact records do not follow each other (a
    log that textcw serve did not write: damage does not renumber checksummed records).
    """
    records: list[Record] = []
    damage: list[Damage] = []
    offset = 0
    while offset < len(data):
        record, end = _decode_at(data, offset)
        if record is not None and records and record.seq != records[-1].seq + 1:
            raise LogDamagedError(
                f"the update log {path} jumps from record {records[-1].seq} to {record.seq} at byte "
                f"{offset}; it was modified by something else than textcw serve. Restore it from a "
                "backup, or move it away to start from the newest checkpoint (losing its updates)")
        if record is None:
            after = records[-1].seq if records else None
            found, start, end = _resync(data, offset + 1, after)
            damage.append(Damage(offset, start - offset, after, found.seq if found else None))
            if found is None:
                break
            record = found
        records.append(record)
        offset = end
    valid = offset if not damage or damage[-1].before is not None else damage[-1].offset
    return LogContents(records, valid, len(data) - valid, damage)


_PAYLOAD_START = b'{"documents":'


def _resync(data: bytes, offset: int, after: int | None) -> tuple[Record | None, int, int]:
    """The first intact record at or after byte ``offset`` numbered after ``after``, where it
    starts and where it ends (``None`` and the end of ``data`` twice if there is none).

    Candidates are found by the payload's fixed opening (every payload starts with
    ``{"documents":``), so the search is one pass of ``bytes.find``; each is then checked in
    full (length, sequence number, checksum), so a match inside a document's text is not taken
    for a record.
    """
    search = offset + HEADER_BYTES
    while True:
        at = data.find(_PAYLOAD_START, search)
        if at < 0:
            return None, len(data), len(data)
        start = at - HEADER_BYTES
        record, end = _decode_at(data, start)
        if record is not None and (after is None or record.seq > after):
            return record, start, end
        search = at + 1


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
        # as JSON gave them: whether they make a request this model takes is checked on replay
        record = Record(seq, body["documents"], body["labels"])
    except (UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None, offset  # a checksum collision on garbage: still not a record we wrote
    return record, end


# How an appended group is made durable: ``fdatasync`` where the system has it. It flushes the
# data and the metadata needed to read them back (the file's new length), not the times of
# last access and change, which nothing here reads; on an append it took 0.46-0.78 ms against
# fsync's 1.28-1.53 ms on the disk the service was measured on, and every acknowledged update
# waits for it. PostgreSQL's log is synced the same way on Linux (its ``wal_sync_method``).
# Elsewhere (macOS has no fdatasync) ``fsync``. Looked up on ``os`` at each call, by name.
SYNC = "fdatasync" if hasattr(os, "fdatasync") else "fsync"


class LogWriter:
    """Appends groups of records to the log and makes each group durable with one ``fdatasync``
    (:data:`SYNC`)."""

    def __init__(self, path: Path, valid_bytes: int, *, sync: bool = True):
        self.path = path
        self._sync = sync
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
        # drop a torn last group before appending after it
        if os.fstat(self._fd).st_size != valid_bytes:
            os.ftruncate(self._fd, valid_bytes)
            os.fsync(self._fd)
        self.size = valid_bytes
        self.broken = False
        _fsync_folder(path.parent)  # the log's own name must survive a crash too

    def append(self, frames: list[bytes]) -> None:
        """:meth:`write` ``frames``, then :meth:`sync` them."""
        self.write(frames)
        self.sync()

    def write(self, frames: list[bytes]) -> None:
        """Write ``frames`` after the records written so far (every one of which must be synced:
        a failed write is cut back to them). If the write fails (a full disk), the log is cut
        back to where it was and the error re-raised. If the cut-back fails, what the disk holds
        is unknown: ``broken`` is set and the writer must not be used again."""
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
        self.size += len(data)

    def sync(self) -> None:
        """Make what was written durable (:data:`SYNC`). If it fails, what the disk holds is
        unknown (a failed sync may have dropped pages): ``broken`` is set and the writer must not
        be used again."""
        if self._sync:
            try:
                getattr(os, SYNC)(self._fd)
            except OSError:
                self.broken = True
                raise

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
