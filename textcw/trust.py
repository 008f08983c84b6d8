"""Trust only what the user owns: the checks made before textcw reads back its own state.

textcw reads back what it wrote earlier: the service's state folder (checkpoints, the journal),
the corpus and feature caches, compiled kernels, signing keys and token files; and it unpickles
the model files a user names. Each of them could have been planted by somebody else if the
folder it lives in is not the user's own: a checkpoint or a model is unpickled, a cache entry
becomes a featurizer, a key decides what is trusted. So, as ssh does for ``~/.ssh`` and git for a
repository (``safe.directory``), a folder or a file is read back only when

- it is owned by the user running textcw (the effective user id; a model file may also be
  root's), and
- nobody else may write to it (no group or other write bit), and
- it is what it says it is: a real folder or a regular file (a FIFO or a device is refused
  before it is opened, so nothing blocks), and
- the way to it is the user's too: the **real** path is judged, folder by folder from ``/``,
  as the kernel walks it. Every folder on the way is owned by the user or by root and is not
  writable by others unless it has the sticky bit (``/tmp``: others can create names there but
  cannot rename or remove ours); every symbolic link on the way is owned by the user or by root
  (a link's owner can repoint it at any time, and in a sticky, group-writable team folder the
  kernel's own link protection does not apply), and the folders its target passes through are
  judged in turn. A state folder or state file that is itself a link is refused: the link, not
  the thing it points to, is what somebody could swap.

The walk opens each folder relative to the one before it without following links
(``openat`` with ``O_NOFOLLOW``), checks what it opened (``fstat``), and opens the file last,
relative to its folder: so the file that was judged is the file that is read, and the bytes
read through :func:`open_trusted_file` are all the caller ever reads, hashes and unpickles. No
second open of the same path exists for anyone to race.

Anything refused raises :class:`UntrustedLocationError` (a :class:`~textcw.errors.TextcwError`)
whose message names the path, what is wrong with it and the command that fixes it. Folders and
files that hold data or models are created owner-only (``0700`` and ``0600``), whatever the
umask says.

On a system without POSIX owners (Windows) the ownership checks are skipped: there, a folder's
access is governed by its ACL, which the user's profile folder already restricts.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from textcw.errors import TextcwError

__all__ = ["MAX_LINKS", "PRIVATE_DIR_MODE", "PRIVATE_FILE_MODE", "UntrustedLocationError", "check_trusted_dir",
           "check_trusted_file", "ensure_private_dir", "open_regular_file", "open_trusted_file", "posix_owners"]

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
MAX_LINKS = 40  # links followed in one path, as Linux's own bound (ELOOP)
_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH
# O_PATH (Linux) opens a folder to walk through it without needing to read it; elsewhere a
# folder must be readable to be walked this way.
_WALK_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
_TRUST_HINT = "(textcw reads state only from places that only you can write: docs/security.md)"


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


def _leaf_problem(path, st: os.stat_result, *, owners: tuple[int, ...], kind: str) -> str | None:
    """What makes the file or folder ``path`` (``fstat``'ed as ``st``) untrusted, or ``None``."""
    uid = owners[0]
    if st.st_uid not in owners:
        return (f"is owned by {_owner_name(st.st_uid)}, not by you ({_owner_name(uid)}); "
                f"if it is yours, run: chown {_owner_name(uid).split(' ')[0]} '{path}'")
    if st.st_mode & _WRITABLE_BY_OTHERS:
        return f"can be written by others (mode {stat.S_IMODE(st.st_mode):04o}); run: chmod go-w '{path}'"
    return None


def _folder_problem(folder: str, st: os.stat_result, uid: int) -> str | None:
    """What makes a folder on the way unsafe, or ``None`` (see the module docstring)."""
    if st.st_uid not in (uid, 0):
        return (f"is inside {folder}, which is owned by {_owner_name(st.st_uid)}: they can replace "
                f"what it holds; keep it in a folder of your own")
    if st.st_mode & _WRITABLE_BY_OTHERS and not st.st_mode & stat.S_ISVTX:
        return (f"is inside {folder}, which others can write to (mode {stat.S_IMODE(st.st_mode):04o}) "
                f"and which has no sticky bit: they can replace what it holds; run: chmod go-w '{folder}'")
    return None


def _link_problem(link: str, st: os.stat_result, uid: int) -> str | None:
    if st.st_uid in (uid, 0):
        return None
    return (f"is reached through the symbolic link {link}, which is owned by {_owner_name(st.st_uid)}: "
            f"they can point it anywhere at any time; give the real path")


def _parts(text: str) -> list[str]:
    """The components of a path, last first (a stack to pop), without empty ones and ``.``."""
    return [p for p in reversed(text.split("/")) if p not in ("", ".")]


class _Walk:
    """One walk from ``/`` to a path, folder by folder (see the module docstring).

    ``problem`` is the first trust problem met (an owner, a mode, another user's link); the
    walk goes on past it, so that a caller that can vouch for the content another way (a model
    file signed with the user's key) still gets the file. What makes the path unreadable as
    asked (missing, not a regular file, a link where none may be) raises at once.
    """

    def __init__(self, path, what: str, kind: str, *, follow_final: bool, owners: tuple[int, ...]):
        self.path, self.what, self.kind = Path(path), what, kind
        self.follow_final, self.owners = follow_final, owners
        self.problem: str | None = None
        self._stack: list[tuple[int, str]] = []

    def fail(self, problem: str, hint: bool = True):
        raise UntrustedLocationError(f"{self.what} {self.path} {problem}" + (f" {_TRUST_HINT}" if hint else ""))

    def note(self, problem: str | None) -> None:
        if problem and self.problem is None:
            self.problem = problem

    def _push_root(self) -> None:
        for fd, _ in self._stack[1:]:
            os.close(fd)
        del self._stack[1:]
        if not self._stack:
            fd = os.open("/", _WALK_FLAGS)
            self._stack.append((fd, "/"))
            self.note(_folder_problem("/", os.fstat(fd), self.owners[0]))

    def run(self) -> tuple[int, os.stat_result]:
        """The open descriptor of the path's leaf and its ``fstat``; the caller closes it."""
        text = os.path.abspath(os.fspath(self.path))
        pending = _parts(text)
        links = 0
        self._push_root()
        try:
            while pending:
                name = pending.pop()
                parent_fd, parent = self._stack[-1]
                here = os.path.join(parent, name)
                if name == "..":
                    if len(self._stack) > 1:
                        os.close(self._stack.pop()[0])
                    if not pending:
                        return self._open_leaf(None, self._stack[-1][1])
                    continue
                st = self._lstat(name, parent_fd, here)
                last = not pending
                if stat.S_ISLNK(st.st_mode):
                    links += 1
                    pending.extend(self._follow_link(name, parent_fd, here, st, last=last, links=links))
                    continue
                if last:
                    return self._open_leaf(name, here)
                self._enter_folder(name, parent_fd, here, st)
            return self._open_leaf(None, "/")  # the path is "/" itself
        finally:
            for fd, _ in self._stack:
                os.close(fd)
            self._stack.clear()

    def _lstat(self, name: str, parent_fd: int, here: str) -> os.stat_result:
        """The ``lstat`` of ``name`` in the folder ``parent_fd`` (a missing one fails)."""
        try:
            return os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        except FileNotFoundError:
            self.fail("does not exist", hint=False)
            raise  # unreachable: fail raises
        except OSError as exc:
            self.fail(f"cannot be examined ({here}: {exc.strerror})", hint=False)
            raise  # unreachable: fail raises

    def _follow_link(self, name: str, parent_fd: int, here: str, st: os.stat_result, *, last: bool,
                     links: int) -> list[str]:
        """The components of the target of the symbolic link ``name``, the ``links``-th met (an
        absolute target restarts the walk at ``/``)."""
        if last and not self.follow_final:
            self.fail(f"is a symbolic link (to {os.readlink(name, dir_fd=parent_fd)}); "
                      f"give the real {self.kind} instead")
        self.note(_link_problem(here, st, self.owners[0]))
        if links > MAX_LINKS:
            self.fail(f"passes through more than {MAX_LINKS} symbolic links", hint=False)
        target = os.readlink(name, dir_fd=parent_fd)
        if target.startswith("/"):
            self._push_root()
        return _parts(target)

    def _enter_folder(self, name: str, parent_fd: int, here: str, st: os.stat_result) -> None:
        """Open the folder ``name`` (``st``: its ``lstat``) onto the stack and judge it."""
        if not stat.S_ISDIR(st.st_mode):
            self.fail(f"cannot be reached: {here} is not a folder", hint=False)
        fd = self._open_at(name, _WALK_FLAGS, parent_fd, here)
        self._stack.append((fd, here))
        folder_st = os.fstat(fd)
        if (folder_st.st_dev, folder_st.st_ino) != (st.st_dev, st.st_ino):
            self.fail(f"changed while it was checked ({here} was replaced); try again", hint=False)
        self.note(_folder_problem(here, folder_st, self.owners[0]))

    def _open_at(self, name: str, flags: int, parent_fd: int, here: str) -> int:
        try:
            return os.open(name, flags, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT):
                self.fail(f"changed while it was checked ({here} was replaced); try again", hint=False)
            self.fail(f"cannot be read ({here}: {exc.strerror})", hint=False)
            raise  # unreachable: fail raises

    def _open_leaf(self, name: str | None, here: str) -> tuple[int, os.stat_result]:
        """Open the last component (``None``: the folder on top of the stack) and judge it."""
        parent_fd = self._stack[-1][0]
        if name is None:
            fd = os.dup(parent_fd) if self.kind == "folder" else -1
            if fd < 0:
                self.fail("is not a regular file", hint=False)
        else:
            st = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
            wanted = stat.S_ISDIR if self.kind == "folder" else stat.S_ISREG
            if not wanted(st.st_mode):  # refused before it is opened: a FIFO would block
                self.fail("is not a folder" if self.kind == "folder" else "is not a regular file")
            flags = _WALK_FLAGS if self.kind == "folder" else _FILE_FLAGS
            fd = self._open_at(name, flags, parent_fd, here)
        st = os.fstat(fd)
        if name is not None and not (stat.S_ISDIR if self.kind == "folder" else stat.S_ISREG)(st.st_mode):
            os.close(fd)
            self.fail(f"changed while it was checked ({here} was replaced); try again", hint=False)
        leaf = _leaf_problem(self.path, st, owners=self.owners, kind=self.kind)
        if leaf is not None:  # the leaf's own problem is the one to name first
            self.problem = leaf
        return fd, st


def _walk(path, what: str, kind: str, *, follow_final: bool, owners: tuple[int, ...] | None = None):
    uid = os.geteuid()
    return _Walk(path, what, kind, follow_final=follow_final, owners=owners or (uid,))


def _check(path: str | os.PathLike, what: str, kind: str) -> Path:
    if not posix_owners():
        return Path(path)
    walk = _walk(path, what, kind, follow_final=False)
    fd, _ = walk.run()
    os.close(fd)
    if walk.problem:
        walk.fail(walk.problem)
    return Path(path)


def check_trusted_dir(path: str | os.PathLike, what: str) -> Path:
    """Refuse to read state from folder ``path`` unless only the user can write it; returns it.

    Raises :class:`UntrustedLocationError` naming ``what`` (``"service state folder"``, ``"cache
    folder"``) when the folder is missing, a link, another user's, writable by others, or reached
    through a folder or a link that somebody else could use to swap it.
    """
    return _check(path, what, "folder")


def check_trusted_file(path: str | os.PathLike, what: str) -> Path:
    """Refuse to read state from file ``path`` unless only the user can write it; returns it.

    The same rules as :func:`check_trusted_dir`, for a regular file (a checkpoint, a signing key,
    a token file); a FIFO, a device or a link is refused before it is opened, so nothing blocks.
    Prefer :func:`open_trusted_file`, which returns the very file that was checked.
    """
    return _check(path, what, "file")


def open_trusted_file(path: str | os.PathLike, what: str, *, allow_root: bool = False,
                      follow_final: bool = False) -> BinaryIO:
    """The regular file ``path`` opened for reading once it passed :func:`check_trusted_file`.

    What the caller reads from the returned file is what was judged: there is no second open of
    ``path`` between the check and the use. ``allow_root`` also accepts a file owned by root (a
    model installed by the system); ``follow_final`` accepts a path whose last component is a
    link of the user's or root's (a model file named on the command line), judging its target.
    """
    fh, problem = open_regular_file(path, what, allow_root=allow_root, follow_final=follow_final)
    if problem:
        fh.close()
        raise UntrustedLocationError(f"{what} {path} {problem} {_TRUST_HINT}")
    return fh


def open_regular_file(path: str | os.PathLike, what: str, *, allow_root: bool = False,
                      follow_final: bool = True) -> tuple[BinaryIO, str | None]:
    """``(file, trust problem or None)``: the regular file ``path`` opened for reading, and what
    :func:`open_trusted_file` would refuse it for.

    For callers that can vouch for a file another way (a model signed with the user's own key
    may come from anywhere). A missing path, a folder, a FIFO or a device raises
    :class:`UntrustedLocationError` before anything is opened, so nothing blocks.
    """
    if not posix_owners():
        if not os.path.isfile(path):
            raise UntrustedLocationError(f"{what} {path} is not a regular file" if os.path.exists(path)
                                         else f"{what} {path} does not exist")
        return open(path, "rb"), None
    uid = os.geteuid()
    walk = _walk(path, what, "file", follow_final=follow_final, owners=(uid, 0) if allow_root else (uid,))
    fd, _ = walk.run()
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), walk.problem
    except BaseException:
        os.close(fd)
        raise


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
