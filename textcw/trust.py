"""Trust only what the user owns: the checks made before textcw reads back its own state.

textcw reads back what it wrote earlier: the service's state folder (checkpoints, the journal),
the corpus and feature caches, compiled kernels, signing keys and token files. Each of them could
have been planted by somebody else if the folder it lives in is not the user's own: a checkpoint
is unpickled, a cache entry becomes a featurizer, a key decides what is trusted. So, as ssh does
for ``~/.ssh`` and git for a repository (``safe.directory``), a folder or a file is read back only
when

- it is owned by the user running textcw (the effective user id), and
- nobody else may write to it (no group or other write bit), and
- it is what it says it is: a real folder or a regular file, not a symbolic link to one
  (a link in a folder others can write can be pointed anywhere), and
- every folder above it is owned by that user or by root, and is not writable by others unless
  it has the sticky bit (``/tmp``: others can create names there but cannot rename or remove
  ours).

Anything refused raises :class:`UntrustedLocationError` (a :class:`~textcw.errors.TextcwError`)
whose message names the path, what is wrong with it and the command that fixes it. Folders and
files that hold data or models are created owner-only (``0700`` and ``0600``), whatever the
umask says.

On a system without POSIX owners (Windows) the ownership checks are skipped: there, a folder's
access is governed by its ACL, which the user's profile folder already restricts.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from textcw.errors import TextcwError

__all__ = ["PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "UntrustedLocationError", "check_trusted_dir",
           "check_trusted_file", "ensure_private_dir", "posix_owners"]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH


class UntrustedLocationError(TextcwError):
    """A folder or file that textcw would read state from is not the user's own."""


def posix_owners() -> bool:
    """Whether this system has POSIX owners and permission bits to check."""
    return hasattr(os, "geteuid")


def _owner_name(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _problem(path: Path, st: os.stat_result, *, uid: int, kind: str) -> str | None:
    """What makes ``path`` (already lstat'ed as ``st``) untrusted, or ``None``."""
    if stat.S_ISLNK(st.st_mode):
        return f"is a symbolic link (to {os.readlink(path)}); give the real {kind} instead"
    wanted = stat.S_ISDIR if kind == "folder" else stat.S_ISREG
    if not wanted(st.st_mode):
        return f"is not a {'folder' if kind == 'folder' else 'regular file'}"
    if st.st_uid != uid:
        return (f"is owned by {_owner_name(st.st_uid)}, not by you ({_owner_name(uid)}); "
                f"if it is yours, run: chown {_owner_name(uid).split(' ')[0]} '{path}'")
    if st.st_mode & _WRITABLE_BY_OTHERS:
        return f"can be written by others (mode {stat.S_IMODE(st.st_mode):04o}); run: chmod go-w '{path}'"
    return None


def _ancestor_problem(path: Path, uid: int) -> str | None:
    """What makes a folder above ``path`` unsafe, or ``None`` (see the module docstring)."""
    for parent in Path(os.path.abspath(path)).parents:
        try:
            st = os.stat(parent)
        except OSError:
            continue  # a parent that cannot be looked at cannot be checked; the leaf check still holds
        if st.st_uid not in (uid, 0):
            return (f"is inside {parent}, which is owned by {_owner_name(st.st_uid)}: they can replace "
                    f"what it holds; keep it in a folder of your own")
        if st.st_mode & _WRITABLE_BY_OTHERS and not st.st_mode & stat.S_ISVTX:
            return (f"is inside {parent}, which others can write to (mode {stat.S_IMODE(st.st_mode):04o}) "
                    f"and which has no sticky bit: they can replace what it holds; run: chmod go-w '{parent}'")
    return None


def _check(path: str | os.PathLike, what: str, kind: str) -> Path:
    path = Path(path)
    if not posix_owners():
        return path
    uid = os.geteuid()
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise UntrustedLocationError(f"{what} {path} does not exist") from None
    except OSError as exc:
        raise UntrustedLocationError(f"{what} {path} cannot be examined: {exc.strerror}") from None
    problem = _problem(path, st, uid=uid, kind=kind) or _ancestor_problem(path, uid)
    if problem:
        raise UntrustedLocationError(f"{what} {path} {problem} (textcw reads state only from places "
                                     "that only you can write: docs/security.md)")
    return path


def check_trusted_dir(path: str | os.PathLike, what: str) -> Path:
    """Refuse to read state from folder ``path`` unless only the user can write it; returns it.

    Raises :class:`UntrustedLocationError` naming ``what`` (``"service state folder"``, ``"cache
    folder"``) when the folder is missing, a link, another user's, writable by others, or inside
    a folder that somebody else could use to swap it.
    """
    return _check(path, what, "folder")


def check_trusted_file(path: str | os.PathLike, what: str) -> Path:
    """Refuse to read state from file ``path`` unless only the user can write it; returns it.

    The same rules as :func:`check_trusted_dir`, for a regular file (a checkpoint, a signing key,
    a token file); a FIFO, a device or a link is refused before it is opened, so nothing blocks.
    """
    return _check(path, what, "file")


def ensure_private_dir(path: str | os.PathLike, what: str) -> Path:
    """Create folder ``path`` (and missing parents) owner-only, or check the one that is there.

    A new folder, and every missing folder above it, gets mode ``0700`` whatever the umask; an
    existing one must pass :func:`check_trusted_dir`. Returns the path.
    """
    path = Path(path)
    missing = [p for p in (path, *path.parents) if not os.path.lexists(p)]
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:
            continue  # created meanwhile by another process: checked below like any existing folder
        os.chmod(folder, PRIVATE_DIR_MODE)  # mkdir's mode is masked by the umask
    return check_trusted_dir(path, what)
