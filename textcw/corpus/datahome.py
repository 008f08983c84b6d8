"""The data home and sha256-pinned corpus files.

Files live at ``<data home>/<corpus>/<file name>``, where the data home is ``$TEXTCW_DATA`` or
``~/textcw_data``. A missing file is downloaded from its canonical URL into a temporary file in
the same folder, checked, and moved into place atomically, so a crash or a bad download never
leaves a partial file under the real name. ``TEXTCW_OFFLINE=1`` turns downloading off.

A file is accepted when its sha256 is a known-good digest. For an archive we also pin the
sha256 of the members that hold the data: a repacked archive (or a canonical one whose digest
we never saw) with byte-identical members is the same data, so it is accepted too. A file with
no pinned digest at all (we never had a copy to hash) is read if the user put it in place, but
never downloaded: there would be nothing to check the download against.

Downloads are bounded and leave nothing half-done:

- **size**: a download stops with an error as soon as it exceeds the file's ``max_bytes`` (or
  :data:`DEFAULT_MAX_BYTES`), and is refused at once when the server announces more, so a
  misbehaving server cannot fill the disk;
- **time**: the whole download (connecting, redirects, headers, body) must finish within
  :data:`DOWNLOAD_DEADLINE` seconds, however slowly a server trickles bytes; a watchdog shuts
  the connection when the time is up, and each network wait is also bounded on its own;
- **https**: an ``http://`` address on the default port is tried as ``https://`` first, and the
  plain address is used only when the https one cannot be reached; either way the file must
  match its pinned sha256, which is what makes the plain address safe to use at all;
- **partial files**: the bytes go to a hidden ``.<file name>.part`` beside the file, created
  with mode 0o666 so the umask applies (a shared data home stays shared). It is locked while
  a download runs, so two processes never write it at once, and removed on any exception,
  ``KeyboardInterrupt``, ``SystemExit`` and signals the caller turns into exceptions included.
  Only a process killed outright (SIGKILL, power cut) leaves it behind; the next download
  overwrites it;
- **progress** is shown on stderr when stderr is a terminal;
- every failure, a data home that cannot be written included, is a :class:`DataError` that
  says what to do.

The fetcher is written here rather than taken from pooch, the usual choice for pinned data
files: pooch checks one digest per file (we accept several, or an archive's member digests),
creates its temporary file with mode 0o600, and has neither a size cap nor an overall
deadline, so every property above would need code around it anyway.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import os
import socket
import sys
import tarfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path

from textcw.errors import DataError

ENV_VAR = "TEXTCW_DATA"
OFFLINE_VAR = "TEXTCW_OFFLINE"
_CHUNK = 1 << 20

#: Seconds a whole download may take: connecting, redirects, headers and body together.
DOWNLOAD_DEADLINE = 15 * 60.0
#: The size cap of a download whose :class:`RemoteFile` gives no ``max_bytes``. Every file textcw
#: downloads is below 20 MB; the cap only stops a server that sends far more than that.
DEFAULT_MAX_BYTES = 32 << 20
# Longest single network wait (connect, one read); the deadline bounds the sum.
_READ_TIMEOUT = 30.0


def data_home() -> Path:
    """``$TEXTCW_DATA`` if set, else ``~/textcw_data``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / "textcw_data"


def offline() -> bool:
    """True when ``$TEXTCW_OFFLINE`` is set to ``1`` (never download)."""
    return os.environ.get(OFFLINE_VAR, "") == "1"


@dataclass(frozen=True)
class RemoteFile:
    """A corpus file: where it lives, where it comes from, and the digests we accept.

    Attributes
    ----------
    corpus, filename : str
        The file is ``<data home>/<corpus>/<filename>``.
    url : str or None
        The canonical download; ``None`` when there is none.
    sha256 : tuple of str
        Every known-good digest of the whole file: the canonical one and those of known
        repackings with byte-identical contents. Empty when no copy was ever hashed.
    members : tuple of (str, str)
        ``(member name, sha256)`` of the data members of a tar archive; an archive whose own
        digest is unknown is accepted when every one of these members is present and matches.
    homepage : str or None
        Where a person can get the file by hand (said in the error when it is missing).
    max_bytes : int or None
        The most bytes a download of it may have: the canonical file's size (plus a margin when
        only its approximate size is known). ``None`` means :data:`DEFAULT_MAX_BYTES`.
    """

    corpus: str
    filename: str
    url: str | None
    sha256: tuple[str, ...]
    members: tuple[tuple[str, str], ...] = ()
    homepage: str | None = None
    max_bytes: int | None = None

    @property
    def path(self) -> Path:
        return data_home() / self.corpus / self.filename

    @property
    def pinned(self) -> bool:
        return bool(self.sha256 or self.members)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


_verified: dict[tuple[str, int, float], str] = {}


def fetch(remote: RemoteFile, *, download: bool = True) -> Path:
    """The verified local path of ``remote``, downloading it first if it is missing."""
    path = remote.path
    with _readable(path):
        present = path.is_file()
    if not present:
        _check_may_download(remote, download)
        _download(remote)
    if not remote.pinned:
        return path
    with _readable(path):
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime)
        if key not in _verified:
            _verify(remote, path, what=str(path),
                    advice="the file is corrupt or a different version: delete it and download it again")
            _verified[key] = "ok"
    return path


@contextlib.contextmanager
def _readable(path: Path):
    """Turn a permission error on a corpus file or its folders into a clear :class:`DataError`."""
    try:
        yield
    except PermissionError as exc:
        raise DataError(f"cannot read {path} ({exc.strerror or exc}); make it and its folders "
                        f"readable, or set {ENV_VAR} to a data folder you can read") from None


def _check_may_download(remote: RemoteFile, download: bool) -> None:
    if remote.url is None:
        raise DataError(_missing_message(remote, "it has no download textcw knows of"))
    if not remote.pinned:
        raise DataError(_missing_message(
            remote, "textcw has no pinned digest for it, so it does not download it"))
    if not download or offline():
        why = f"{OFFLINE_VAR}=1" if download else "downloading is off"
        raise DataError(_missing_message(remote, why))


def _verify(remote: RemoteFile, path: Path, *, what: str, advice: str) -> None:
    """Raise :class:`DataError` unless ``path`` is a known-good copy of ``remote``."""
    digest = sha256_of(path)
    if digest in remote.sha256:
        return
    member_problem = _check_members(remote, path) if remote.members else None
    if remote.members and member_problem is None:
        return
    expected = ", ".join(remote.sha256) or "(none recorded)"
    detail = f"; and {member_problem}" if member_problem else ""
    raise DataError(
        f"{what} has sha256 {digest}, but the known-good sha256 of {remote.filename} is "
        f"{expected}{detail}; {advice}"
    )


def _check_members(remote: RemoteFile, path: Path) -> str | None:
    """``None`` if every pinned member is in the archive with its digest, else what is wrong."""
    wanted = dict(remote.members)
    try:
        with tarfile.open(path, "r:*") as tar:
            for member in tar:
                if member.name in wanted and member.isfile():
                    data = tar.extractfile(member).read()
                    if hashlib.sha256(data).hexdigest() != wanted.pop(member.name):
                        return f"its member {member.name} differs from the known-good one"
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        return f"it is not a readable archive ({exc})"
    if wanted:
        return f"it lacks {len(wanted)} expected member(s), e.g. {sorted(wanted)[0]}"
    return None


def _missing_message(remote: RemoteFile, why: str) -> str:
    source = remote.url or remote.homepage
    where = f" (from {source})" if source else ""
    return (
        f"corpus file {remote.filename} not found in {remote.path.parent} and {why}; put "
        f"{remote.filename}{where} there, or set {ENV_VAR} to the folder that holds "
        f"{remote.corpus}/{remote.filename}"
    )


def _download(remote: RemoteFile) -> None:
    """Download ``remote`` to its path, checked against its pins (see the module docstring)."""
    folder = remote.path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create the data folder {folder}: {exc}; set {ENV_VAR}") from None
    with _Deadline(DOWNLOAD_DEADLINE) as deadline:
        try:
            with _part_file(remote, deadline) as part:
                if part is None:  # another process downloaded it while we waited for the lock
                    return
                _receive(remote, part, deadline)
                _verify(remote, _part_path(remote), what=f"the download from {remote.url}",
                        advice="nothing was saved; try again later or put the file there by hand")
                os.replace(_part_path(remote), remote.path)
                _fsync_folder(folder)
        except DataError:
            raise
        except PermissionError as exc:
            raise DataError(f"cannot write {remote.filename} into the data folder {folder} "
                            f"({exc.strerror or exc}); make the folder writable or set {ENV_VAR} to a "
                            "folder you can write to") from None
        # http.client.HTTPException covers a connection cut mid-body (IncompleteRead).
        except (urllib.error.URLError, http.client.HTTPException, OSError, TimeoutError) as exc:
            if deadline.expired:
                raise DataError(_missing_message(
                    remote, f"the download did not finish within {deadline.seconds:g} seconds; try again "
                            "later")) from None
            raise DataError(_missing_message(remote, f"downloading failed ({exc})")) from None


def _receive(remote: RemoteFile, out, deadline: _Deadline) -> None:
    """Copy the body of ``remote.url`` into ``out``, within its size cap and the deadline."""
    cap = remote.max_bytes or DEFAULT_MAX_BYTES
    with _open(remote.url, deadline) as resp:
        promised = resp.headers.get("Content-Length")
        promised = int(promised) if promised and promised.isdigit() else None
        if promised is not None and promised > cap:
            raise DataError(_missing_message(
                remote, f"the server announced {promised} bytes, more than the {cap} a download of it "
                        "may have; nothing was saved"))
        received = 0
        with _progress(remote.filename, promised) as advance:
            # read1 returns what has arrived (up to _CHUNK) instead of waiting for a full chunk, so
            # the deadline is checked however slowly the bytes come
            while not deadline.expired and (chunk := resp.read1(_CHUNK)):
                received += len(chunk)
                if received > cap:
                    raise DataError(_missing_message(
                        remote, f"the server sent more than the {cap} bytes a download of it may "
                                "have; nothing was saved"))
                out.write(chunk)
                out.flush()  # the .part file's size shows how far the download is
                advance(len(chunk))
    if deadline.expired:  # the watchdog shut the connection, or the time ran out between reads
        raise TimeoutError("deadline")
    # read1 returns b"" when a connection closes early; say so plainly
    if promised is not None and received != promised:
        raise DataError(_missing_message(
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
        self._timer = threading.Timer(seconds, self._fire)
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


def _fsync_folder(folder: Path) -> None:
    from textcw._atomic import _fsync_folder as fsync_folder

    fsync_folder(folder)
