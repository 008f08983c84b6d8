"""Downloading a pinned corpus file, bounded in size and time and leaving nothing half-done
(the rules are in :mod:`textcw.corpus.datahome`).

The bytes go to a locked ``.<file name>.part`` beside the file, are checked against the file's
pins (:func:`textcw.corpus.remote.verify`), and only then are moved into place.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from textcw.atomic import fsync_folder
from textcw.corpus.remote import ENV_VAR, RemoteFile, missing_message, verify
from textcw.errors import DataError

__all__ = ["DEFAULT_MAX_BYTES", "DOWNLOAD_DEADLINE", "download_file"]

_CHUNK = 1 << 20

#: Seconds a whole download may take: connecting, redirects, headers and body together.
DOWNLOAD_DEADLINE = 15 * 60.0
#: The size cap of a download whose :class:`RemoteFile` gives no ``max_bytes``. Every file textcw
#: downloads is below 20 MB; the cap only stops a server that sends far more than that.
DEFAULT_MAX_BYTES = 32 << 20
# Longest single network wait (connect, one read); the deadline bounds the sum.
_READ_TIMEOUT = 30.0


def download_file(remote: RemoteFile) -> None:
    """Download ``remote`` to its path, checked against its pins (see the module docstring). A
    download that fails removes the folders it created (the corpus folder, the data home), so
    that nothing looks half there."""
    folder = remote.path.parent
    created = _missing_folders(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _remove_empty(created)
        raise DataError(f"cannot create the data folder {folder}: {exc}; set {ENV_VAR}") from None
    try:
        _download(remote, folder)
    except BaseException:
        _remove_empty(created)
        raise


def _missing_folders(folder: Path) -> list[Path]:
    """``folder`` and those of its parents that do not exist yet, deepest first."""
    missing = []
    while not folder.exists() and folder.parent != folder:
        missing.append(folder)
        folder = folder.parent
    return missing


def _remove_empty(folders: list[Path]) -> None:
    """Remove each of ``folders`` (deepest first) that is still empty; one that is not (another
    download put a file there meanwhile) stays, with its parents."""
    for folder in folders:
        try:
            folder.rmdir()
        except OSError:
            return


def _download(remote: RemoteFile, folder: Path) -> None:
    with _Deadline(DOWNLOAD_DEADLINE) as deadline:
        try:
            with _part_file(remote, deadline) as part:
                if part is None:  # another process downloaded it while we waited for the lock
                    return
                _receive(remote, part, deadline)
                verify(remote, _part_path(remote), what=f"the download from {remote.url}",
                       advice="nothing was saved; try again later or put the file there by hand")
                os.replace(_part_path(remote), remote.path)
                fsync_folder(folder)
        except DataError:
            raise
        except PermissionError as exc:
            raise DataError(f"cannot write {remote.filename} into the data folder {folder} "
                            f"({exc.strerror or exc}); make the folder writable or set {ENV_VAR} to a "
                            "folder you can write to") from None
        # http.client.HTTPException covers a connection cut mid-body (IncompleteRead).
        except (urllib.error.URLError, http.client.HTTPException, OSError, TimeoutError) as exc:
            if deadline.expired:
                raise DataError(missing_message(
                    remote, f"the download did not finish within {deadline.seconds:g} seconds; try again "
                            "later")) from None
            raise DataError(missing_message(remote, f"downloading failed ({exc})")) from None


def _receive(remote: RemoteFile, out, deadline: _Deadline) -> None:
    """Copy the body of ``remote.url`` into ``out``, within its size cap and the deadline."""
    cap = remote.max_bytes or DEFAULT_MAX_BYTES
    with _open(remote.url, deadline) as resp:
        promised = resp.headers.get("Content-Length")
        promised = int(promised) if promised and promised.isdigit() else None
        if promised is not None and promised > cap:
            raise DataError(missing_message(
                remote, f"the server announced {promised} bytes, more than the {cap} a download of it "
                        "may have; nothing was saved"))
        received = 0
        with _progress(remote.filename, promised) as advance:
            # read1 returns what has arrived (up to _CHUNK) instead of waiting for a full chunk, so
            # the deadline is checked however slowly the bytes come
            while not deadline.expired and (chunk := resp.read1(_CHUNK)):
                received += len(chunk)
                if received > cap:
                    raise DataError(missing_message(
                        remote, f"the server sent more than the {cap} bytes a download of it may "
                                "have; nothing was saved"))
                out.write(chunk)
                out.flush()  # the .part file's size shows how far the download is
                advance(len(chunk))
    if deadline.expired:  # the watchdog shut the connection, or the time ran out between reads
        raise TimeoutError("deadline")
    # read1 returns b"" when a connection closes early; say so plainly
    if promised is not None and received != promised:
        raise DataError(missing_message(
            remote, f"the download stopped after {received} of {promised} bytes"))
    out.flush()
    os.fsync(out.fileno())


def _candidate_urls(url: str) -> list[str]:
    """``url``, preceded by its https form when it is plain http on the default port."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or parts.port is not None:
        return [url]
    return [urllib.parse.urlunsplit(("https", *parts[1:])), url]


def _open(url: str, deadline: _Deadline):
    """The response for ``url`` (its https form first, see :func:`_candidate_urls`)."""
    opener = urllib.request.build_opener(_HTTPHandler(deadline), _HTTPSHandler(deadline))
    candidates = _candidate_urls(url)
    for number, candidate in enumerate(candidates, 1):
        try:
            return opener.open(candidate, timeout=max(0.01, min(_READ_TIMEOUT, deadline.remaining())))
        except (urllib.error.URLError, http.client.HTTPException, OSError):
            if number == len(candidates) or deadline.expired:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


class _Deadline:
    """A time limit for a whole download: when it passes, every connection opened under it is
    shut down, which ends any blocked read."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds
        self._fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = _Watchdog(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()

    @property
    def expired(self) -> bool:
        return self._fired or time.monotonic() >= self._end

    def remaining(self) -> float:
        return max(0.0, self._end - time.monotonic())

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            if self._fired:
                _shut(sock)
            else:
                self._sockets.append(sock)

    def _fire(self) -> None:
        with self._lock:
            self._fired = True
            for sock in self._sockets:
                _shut(sock)


class _Watchdog(threading.Timer):
    """The deadline's timer thread, which takes no signals: the kernel delivers a process's
    signal to any thread that does not block it, and one delivered here would leave the main
    thread blocked in a read until the socket's own timeout (30 s) before Ctrl-C took effect."""

    def run(self) -> None:
        if hasattr(signal, "pthread_sigmask"):  # POSIX; elsewhere signals go to the main thread
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM, signal.SIGHUP})
        super().run()


def _shut(sock) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _watched(connection_class, deadline: _Deadline):
    class Connection(connection_class):
        def connect(self):
            super().connect()
            deadline.watch(self.sock)

    return Connection


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._connection = _watched(http.client.HTTPConnection, deadline)

    def http_open(self, req):
        return self.do_open(self._connection, req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, deadline: _Deadline) -> None:
        super().__init__()
        self._connection = _watched(http.client.HTTPSConnection, deadline)

    def https_open(self, req):
        return self.do_open(self._connection, req, context=self._context)


def _part_path(remote: RemoteFile) -> Path:
    return remote.path.parent / f".{remote.filename}.part"


@contextlib.contextmanager
def _part_file(remote: RemoteFile, deadline: _Deadline):
    """The locked, emptied ``.<file name>.part`` beside ``remote.path``, open for writing; ``None``
    when another process saved the file while this one waited for the lock. Removed on any
    exception."""
    part = _part_path(remote)
    while True:
        # 0o666: the umask applies, as to any new file (mkstemp would make it 0o600)
        fd = os.open(part, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        try:
            _lock(fd, part, deadline)
            same = os.path.exists(part) and os.path.samestat(os.fstat(fd), os.stat(part))
        except BaseException:
            os.close(fd)
            raise
        if same:
            break
        os.close(fd)  # the lock holder renamed it into place (or removed it) meanwhile
        if remote.path.is_file():
            yield None
            return
    out = os.fdopen(fd, "wb")
    try:
        out.truncate(0)  # a killed process's leftovers
        yield out
    finally:
        try:
            # still ours while we hold the lock: after a successful rename it is gone
            with contextlib.suppress(FileNotFoundError):
                if os.path.samestat(os.fstat(out.fileno()), os.stat(part)):
                    os.unlink(part)
        finally:
            out.close()  # releases the lock


def _lock(fd: int, part: Path, deadline: _Deadline) -> None:
    """Hold an exclusive lock on ``fd``, waiting (until the deadline) while another process does."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): concurrent downloads of one file are not serialised
        return
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if deadline.expired:
                raise DataError(f"another process has been downloading {part.name[1:-5]} into "
                                f"{part.parent} for too long; wait for it or remove {part}") from None
            time.sleep(0.1)


@contextlib.contextmanager
def _progress(label: str, total: int | None):
    """An ``advance(n_bytes)`` callback drawing a download bar on stderr, when it is a terminal."""
    console = _progress_console()
    if not console.is_terminal:
        yield lambda n: None
        return
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

    with Progress(TextColumn("downloading {task.description}"), BarColumn(), DownloadColumn(),
                  TransferSpeedColumn(), console=console) as progress:
        task = progress.add_task(label, total=total)
        yield lambda n: progress.advance(task, n)


def _progress_console():
    from rich.console import Console

    return Console(file=sys.stderr)
