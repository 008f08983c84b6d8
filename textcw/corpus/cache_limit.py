"""The size limit of the corpus cache (:mod:`textcw.corpus.cache`): least recently used goes first.

Without a limit the cache grows with every corpus, featurizer parameter and textcw version a
user ever ran, and only ``textcw cache clear`` would shrink it. So before an entry is written,
the entries used longest ago are deleted until the new one fits under the limit; an entry larger
than the whole limit is not written at all (the run goes on uncached).

The limit is ``TEXTCW_CACHE_LIMIT`` when set, in bytes or with a binary suffix (``500M``, ``2G``,
``1.5G``; ``0`` keeps nothing), otherwise :data:`DEFAULT_LIMIT` (2 GiB: the parsed and featurized
matrices of every built-in corpus fit, with room for a few featurizer settings).

"Used" means written or read: a successful read sets the file's modification time to now, so
the order survives across processes and does not depend on the file system recording access
times (many are mounted ``noatime`` or ``relatime``). Temporary files that an interrupted write
left behind (``.NAME.*.tmp``, older than :data:`ORPHAN_AGE` seconds) are deleted first and count
against the limit until then.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path

from textcw.errors import InputError

__all__ = ["DEFAULT_LIMIT", "LIMIT_VAR", "ORPHAN_AGE", "entry_files", "estimated_size", "limit",
           "make_room", "mark_used", "parse_size"]

LIMIT_VAR = "TEXTCW_CACHE_LIMIT"
DEFAULT_LIMIT = 2 << 30
#: A temporary file this much older than now belongs to no write still running.
ORPHAN_AGE = 3600
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"2G"`` -> 2147483648; bytes, or a number with K, M, G or T (powers of 1024)."""
    match = _SIZE.fullmatch(text)
    if match is None:
        raise InputError(f"{LIMIT_VAR}={text!r} is not a size: give bytes or a number with K, M, G "
                         "or T (powers of 1024), e.g. 500M or 2G; 0 keeps nothing in the cache")
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


def limit() -> int:
    """The most bytes the cache may hold: ``$TEXTCW_CACHE_LIMIT``, or :data:`DEFAULT_LIMIT`."""
    text = os.environ.get(LIMIT_VAR, "").strip()
    return parse_size(text) if text else DEFAULT_LIMIT


def estimated_size(arrays: dict) -> int:
    """The bytes an uncompressed ``.npz`` of ``arrays`` takes: the data plus each member's headers."""
    return sum(int(a.nbytes) + 512 for a in arrays.values()) + 1024


def entry_files(folder: Path, kinds: tuple[str, ...]) -> list[tuple[int, str, Path, int]]:
    """``(last use in ns, name, path, bytes)`` of every entry and leftover temporary file, oldest first."""
    out = []
    for kind in kinds:
        for path in (folder / kind).glob("*"):
            if path.suffix not in (".npz", ".tmp") or path.is_symlink():
                continue
            with contextlib.suppress(OSError):  # deleted by another process meanwhile
                st = path.stat()
                out.append((st.st_mtime_ns, path.name, path, st.st_size))
    return sorted(out)


def make_room(folder: Path, kinds: tuple[str, ...], needed: int, keep: Path | None = None) -> bool:
    """Delete the least recently used entries until ``needed`` more bytes fit under :func:`limit`.

    False (and nothing deleted) when ``needed`` alone exceeds the limit: the entry is not to be
    written. ``keep`` (the entry about to be replaced) is never counted nor deleted.
    """
    most = limit()
    if needed > most:
        return False
    files = [f for f in entry_files(folder, kinds) if f[2] != keep]
    orphan_before = (time.time() - ORPHAN_AGE) * 1e9
    # leftovers of interrupted writes go first, whatever their age order among the entries
    files.sort(key=lambda f: (not (f[2].suffix == ".tmp" and f[0] < orphan_before), f[0], f[1]))
    total = sum(f[3] for f in files)
    for mtime, _, path, size in files:
        if total + needed <= most:
            break
        if path.suffix == ".tmp" and mtime >= orphan_before:
            continue  # another process is writing it right now
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        total -= size
    return total + needed <= most


def mark_used(path: Path) -> None:
    """Record that ``path`` was just read (its modification time is its last use)."""
    with contextlib.suppress(OSError):  # a read-only cache is still read; it just ages
        os.utime(path)
