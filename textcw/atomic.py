"""Atomic file replacement: a reader (or a crash) sees the old file or the new one, never a mix.

The content is written to a temporary file in the destination's folder (same file system, so the
final ``os.replace`` is an atomic rename), flushed and fsynced, then renamed over the
destination, and the folder is fsynced so that the rename itself survives a power cut. Two
processes writing the same path each write their own temporary file; the last rename wins and
leaves one complete file. A process killed mid-write leaves the destination untouched and, at
worst, a hidden ``.NAME.*.tmp`` file beside it; any exception in the writing process (including
``KeyboardInterrupt`` and ``SystemExit``) removes the temporary file.

What may be replaced
--------------------
A rename replaces whatever the destination name points at, so only two destinations are
accepted: nothing (a new file) or a regular file. Everything else is refused with an
:class:`~textcw.errors.OutputError` before any work starts (:func:`check_output_path`) and again
right before the rename (the destination may have changed while the content was written):

- a device such as ``/dev/null``: as root, the rename would turn it into a regular file for
  every program on the machine;
- a FIFO or a socket: another program is reading from it and would never see the data;
- a folder;
- a symbolic link, even one to a regular file. Following it would write to a place the user
  did not name (in a shared folder, a planted link can point anywhere), and replacing it would
  silently cut the link (a ``current.joblib`` link would stop following new models). The error
  names the link's target, so the user can give that path instead.

Who may read it
---------------
A file that holds data or a model (a saved model, an export, a checkpoint, a cache entry) is
written with ``private=True``: it is created owner-only (``0600``) whatever the umask, because a
model or a featurized corpus can reveal the data it was trained on, and because textcw reads
such files back only when nobody else could have written them (:mod:`textcw.trust`). Reports,
plots and JSON summaries follow the umask, as any new file does, so that a shared results
folder stays shared.

A check and a rename cannot be one atomic step, so a destination swapped for a link or a
device in the instant between the last check and the rename is still replaced; the checks
catch every mistake and every change that happens while a model is trained or written.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from textcw.errors import OutputError, TextcwError

__all__ = [
    "atomic_output", "atomic_write_bytes", "atomic_write_text", "check_output_folder",
    "check_output_path", "fsync_folder"
]


def check_output_path(path: str | os.PathLike, what: str, *, not_same_as: str | os.PathLike | None = None,
                      example: str | None = None, error: type[TextcwError] = OutputError) -> Path:
    """Check that ``path`` can receive an atomic write, before any work starts; returns it as a Path.

    Accepted: a path that does not exist yet, or an existing regular file, in an existing folder
    that this process may create files in. Refused (raising ``error``, an
    :class:`~textcw.errors.OutputError` unless the caller names another
    :class:`~textcw.errors.TextcwError` subclass): a folder, a symbolic link, a device, a FIFO
    or a socket; a missing or read-only folder; and the same file as ``not_same_as`` (an input
    that writing would destroy before it is read, e.g. ``textcw export m.joblib m.joblib``).

    Parameters
    ----------
    path : path-like
        The destination.
    what : str
        What the destination is, as the user knows it (``"--out"``, ``"--json-out"``,
        ``"model file"``); it starts every message.
    not_same_as : path-like, optional
        An input file the destination must not be (hard links and symbolic links to it count).
    example : str, optional
        A file name to suggest when ``path`` is a folder (``"model.joblib"``).
    error : TextcwError subclass
        The error to raise.
    """
    path = Path(path)
    problem = _destination_problem(path)
    if problem == "folder":
        hint = f"a file name such as {path / example}" if example else "a file name in it"
        raise error(f"{what} {path} is a folder; give {hint}")
    if problem:
        raise error(f"{what} {path} {problem}")
    folder = path.parent
    if not folder.is_dir():
        state = "is not a folder" if folder.exists() else "does not exist"
        raise error(f"{what}: folder {folder} {state}; create it first")
    if not _may_create_in(folder):
        raise error(f"{what}: folder {folder} is not writable (read-only file system or no "
                    f"permission); choose another folder")
    if not_same_as is not None and _same_file(path, Path(not_same_as)):
        raise error(f"{what} {path} is the input file {not_same_as}; writing it would destroy the "
                    "input: give another file name")
    return path


def check_output_folder(path: str | os.PathLike, what: str, *,
                        error: type[TextcwError] = OutputError) -> Path:
    """Check, before any work, a folder that files will be written into (``--plot FOLDER``).

    Accepted: an existing folder (a symbolic link to one is fine: the files go inside it, the
    link is never replaced) that this process may create files in, or a missing folder whose
    parent exists and is writable (the writer creates it). Each file later written into it is
    still checked by :func:`atomic_output`. Returns ``path`` as a Path.
    """
    path = Path(path)
    if path.exists():
        if not path.is_dir():
            raise error(f"{what} {path} is not a folder; give a folder for the files")
        if not _may_create_in(path):
            raise error(f"{what}: folder {path} is not writable (read-only file system or no "
                        f"permission); choose another folder")
        return path
    if os.path.islink(path):
        raise error(f"{what} {path} is a symbolic link to a missing folder; create the folder "
                    "or give another one")
    parent = path.parent
    if not parent.is_dir():
        raise error(f"{what}: folder {parent} does not exist; create it first")
    if not _may_create_in(parent):
        raise error(f"{what}: folder {parent} is not writable (read-only file system or no "
                    f"permission); choose another folder")
    return path


def _destination_problem(path: Path) -> str | None:
    """``None`` if ``path`` is absent or a regular file, else what it is (for a message)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    except NotADirectoryError:  # a parent is a file: reported by the folder check
        return None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc}); choose another file name"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "folder"
    if stat.S_ISLNK(mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return (f"is a symbolic link (to {target}); textcw replaces files by renaming and would "
                f"replace the link itself: give the link's target as the file name, or remove the link")
    kind = ("a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode)
            else "a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")
    discard = " (to discard the output, leave the option out)" if stat.S_ISCHR(mode) else ""
    return (f"is {kind}, not a regular file; textcw writes files by renaming a new file over the old "
            f"one, which would replace it: give a regular file name{discard}")


def _may_create_in(folder: Path) -> bool:
    """Whether a new file can be created in ``folder``: permission (``access``, which also reports
    a read-only file system, even to root) and, where known, the file system's read-only flag."""
    if not os.access(folder, os.W_OK | os.X_OK):
        return False
    try:
        return not os.statvfs(folder).f_flag & os.ST_RDONLY
    except (AttributeError, OSError):  # no statvfs (Windows): access() has answered
        return True


def _same_file(path: Path, other: Path) -> bool:
    try:
        return os.path.samefile(path, other)
    except OSError:  # either does not exist: they cannot be the same file
        return False


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike, suffix: str = ".tmp", *, private: bool = False):
    """Open a temporary binary file for writing; on success it replaces ``path``.

    ``private=True`` creates the file owner-only (``0600``) whatever the umask: for anything
    that holds data or a model (see the module docstring); otherwise the umask applies.

    The file object's ``name`` is the temporary path, for checks that need to read the result
    before it is published. If the body raises (any exception, ``KeyboardInterrupt`` and
    ``SystemExit`` included), the temporary file is removed and ``path`` is left as it was.
    ``path`` must be absent or a regular file, both before and right before the rename
    (:class:`~textcw.errors.OutputError` otherwise; see the module docstring).
    """
    path = Path(path)
    _refuse_non_regular(path, "")
    try:
        tmp = _create_temporary(path, suffix, 0o600 if private else 0o666)
    except OSError as exc:  # a missing or read-only folder: say so, not "unexpected OSError"
        raise OutputError(f"cannot create {path}: {exc.strerror or exc}; check that the folder "
                          f"{path.parent} exists and is writable") from None
    try:
        with open(tmp, "wb") as fh:  # by name, so that fh.name is the temporary path
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        _refuse_non_regular(path, "while it was being written, ")
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise OutputError(f"cannot replace {path}: {exc.strerror or exc}; nothing was written") from None
        fsync_folder(path.parent)
    finally:  # also on BaseException: no temporary file is left behind
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def _refuse_non_regular(path: Path, when: str) -> None:
    problem = _destination_problem(path)
    if problem == "folder":
        problem = "is a folder; give a file name in it"
    if problem:
        raise OutputError(f"{when}{path} {problem}" + ("; nothing was written" if when else ""))


def _create_temporary(path: Path, suffix: str, mode: int = 0o666) -> str:
    """A new, exclusively created file beside ``path``, with ``mode``: ``0o666`` lets the user's
    umask apply, as to any new file (reports stay shareable; changing the umask instead would
    race with other threads); ``0o600`` is owner-only whatever the umask (the umask can only
    remove bits), for data and models."""
    # os.urandom, not the secrets module (the same source, but secrets imports hmac and base64,
    # a few milliseconds on the start-up of every command that may write a file)
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}{suffix}")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode))
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"cannot create a temporary file beside {path}")


def atomic_write_bytes(path: str | os.PathLike, data: bytes, *, private: bool = False) -> None:
    with atomic_output(path, private=private) as fh:
        fh.write(data)


def atomic_write_text(path: str | os.PathLike, text: str, *, private: bool = False) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), private=private)


def fsync_folder(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort where folders cannot be opened)."""
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
