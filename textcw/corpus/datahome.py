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
  overwrites it. The folders a failed download created (the corpus folder, a new data home)
  are removed too, when nothing else was put in them meanwhile, so no empty corpus folder
  suggests that the corpus is there;
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
from pathlib import Path

from textcw.corpus.download import DEFAULT_MAX_BYTES, DOWNLOAD_DEADLINE, download_file
from textcw.corpus.remote import (
    ENV_VAR,
    OFFLINE_VAR,
    RemoteFile,
    data_home,
    missing_message,
    offline,
    sha256_of,
    verify,
)
from textcw.errors import DataError

__all__ = [
    "DEFAULT_MAX_BYTES", "DOWNLOAD_DEADLINE", "ENV_VAR", "OFFLINE_VAR", "RemoteFile", "data_home", "fetch",
    "offline", "sha256_of",
]


_verified: dict[tuple[str, int, float], str] = {}


def fetch(remote: RemoteFile, *, download: bool = True) -> Path:
    """The verified local path of ``remote``, downloading it first if it is missing."""
    path = remote.path
    with _readable(path):
        present = path.is_file()
    if not present:
        _check_may_download(remote, download)
        download_file(remote)
    if not remote.pinned:
        return path
    with _readable(path):
        stat = path.stat()
        key = (str(path.resolve()), stat.st_size, stat.st_mtime)
        if key not in _verified:
            verify(remote, path, what=str(path),
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
        raise DataError(missing_message(remote, "it has no download textcw knows of"))
    if not remote.pinned:
        raise DataError(missing_message(
            remote, "textcw has no pinned digest for it, so it does not download it"))
    if not download or offline():
        why = f"{OFFLINE_VAR}=1" if download else "downloading is off"
        raise DataError(missing_message(remote, why))
