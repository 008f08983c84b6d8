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
import secrets
from pathlib import Path


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, suffix: str = ".tmp"):
    """Open a temporary binary file for writing; on success it replaces ``path``.

    The file object's ``name`` is the temporary path, for checks that need to read the result
    before it is published. If the body raises, the temporary file is removed and ``path`` is
    left as it was.
    """
    path = Path(path)
    tmp = _create_temporary(path, suffix)
    try:
        with open(tmp, "wb") as fh:  # by name, so that fh.name is the temporary path
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        _fsync_folder(path.parent)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _create_temporary(path: Path, suffix: str) -> str:
    """A new, exclusively created file beside ``path``. Created with mode 0o666 so that the
    user's umask applies, as to any new file (mkstemp's 0o600 would make models and reports
    private; changing the umask to read it would race with other threads)."""
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(6)}{suffix}")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {path}")


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
