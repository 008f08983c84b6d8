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

Eviction never follows a link out of the cache folder: the folder and its ``corpus/`` and
``features/`` subfolders are opened without following symbolic links (``O_NOFOLLOW``), and every
file is looked at and deleted relative to that open folder (``dir_fd``), so a subfolder that is,
or becomes, a link to somewhere else is skipped and nothing outside the cache is ever deleted.
Only regular files are counted or deleted.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import time
from pathlib import Path

from textcw.errors import InputError

__all__ = ["DEFAULT_LIMIT", "LIMIT_VAR", "ORPHAN_AGE", "entry_files", "estimated_size", "limit",
           "make_room", "mark_used", "parse_size", "remove_entry", "scan_folder"]

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


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
# Where the os module cannot work relative to an open folder (Windows), links are checked by path.
_BY_FD = (hasattr(os, "O_NOFOLLOW") and os.unlink in os.supports_dir_fd and os.stat in os.supports_dir_fd
          and os.listdir in os.supports_fd)


@contextlib.contextmanager
def _open_kind(folder: Path, kind: str):
    """A descriptor of ``folder/kind``, opened without following a link at either level, or
    None when either is missing, a link or not a folder."""
    fds: list[int] = []
    try:
        fds.append(os.open(folder, _DIR_FLAGS))
        fds.append(os.open(kind, _DIR_FLAGS, dir_fd=fds[0]))
    except OSError:  # missing, a link (ELOOP), not a folder (ENOTDIR)
        fds.append(-1)
    try:
        yield fds[-1] if fds[-1] >= 0 else None
    finally:
        for fd in fds:
            if fd >= 0:
                os.close(fd)


def scan_folder(folder: Path, kind: str, suffixes: tuple[str, ...]) -> list[tuple[int, str, int]]:
    """``(modification time in ns, name, bytes)`` of each regular file in ``folder/kind`` whose
    name ends in one of ``suffixes``; empty when that subfolder is missing or a link."""
    out = []
    if not _BY_FD:
        sub = folder / kind
        if folder.is_symlink() or sub.is_symlink() or not sub.is_dir():
            return out
        for path in sub.iterdir():
            with contextlib.suppress(OSError):
                st = path.lstat()
                if path.suffix in suffixes and stat.S_ISREG(st.st_mode):
                    out.append((st.st_mtime_ns, path.name, st.st_size))
        return out
    with _open_kind(folder, kind) as fd:
        if fd is None:
            return out
        for name in os.listdir(fd):
            if not name.endswith(suffixes):
                continue
            with contextlib.suppress(OSError):  # deleted by another process meanwhile
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISREG(st.st_mode):
                    out.append((st.st_mtime_ns, name, st.st_size))
    return out


def remove_entry(folder: Path, kind: str, name: str) -> bool:
    """Delete the regular file ``folder/kind/name`` without following a link on the way;
    False when it is gone, not a regular file, or its folder is a link."""
    if not _BY_FD:
        path = folder / kind / name
        if folder.is_symlink() or path.parent.is_symlink() or not path.is_file() or path.is_symlink():
            return False
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            return True
        return False
    with _open_kind(folder, kind) as fd:
        if fd is None:
            return False
        try:
            if not stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
                return False
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            return False
    return True


def entry_files(folder: Path, kinds: tuple[str, ...]) -> list[tuple[int, str, Path, int]]:
    """``(last use in ns, name, path, bytes)`` of every entry and leftover temporary file, oldest
    first (regular files only, in subfolders that are not links: see the module docstring)."""
    out = []
    for kind in kinds:
        for mtime, name, size in scan_folder(folder, kind, (".npz", ".tmp")):
            out.append((mtime, name, folder / kind / name, size))
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
        remove_entry(folder, path.parent.name, path.name)
        total -= size
    return total + needed <= most


def mark_used(path: Path) -> None:
    """Record that ``path`` was just read (its modification time is its last use)."""
    with contextlib.suppress(OSError):  # a read-only cache is still read; it just ages
        os.utime(path)
