"""Atomic file replacement: a reader (or a crash) sees the old file or the new one, never a mix.

The content is written to a temporary file in the destination's folder (same file system, so the
final ``os.replace`` is an atomic rename), flushed and fsynced, then renamed over the
destination, and the folder is fsynced so that the rename itself survives a power cut. Two
processes writing the same path each write their own temporary file; the last rename wins and
leaves one complete file. A process killed mid-write leaves the destination untouched and, at
worst, a hidden ``.NAME.*.tmp`` file beside it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, suffix: str = ".tmp"):
    """Open a temporary binary file for writing; on success it replaces ``path``.

    The file object's ``name`` is the temporary path, for checks that need to read the result
    before it is published. If the body raises, the temporary file is removed and ``path`` is
    left as it was.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=suffix, dir=path.parent)
    os.close(fd)
    try:
        with open(tmp, "wb") as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp creates the file readable by its owner only; a saved model or report should
        # get the permissions any new file of this user gets.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
        _fsync_folder(path.parent)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_output(path) as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # e.g. a platform without directory handles: the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
