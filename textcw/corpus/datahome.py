"""The data home and sha256-pinned corpus files.

Files live at ``<data home>/<corpus>/<file name>``, where the data home is ``$TEXTCW_DATA`` or
``~/textcw_data``. A missing file is downloaded from its canonical URL into a temporary file in
the same folder, checked, and moved into place atomically, so a crash never leaves a partial
file under the real name.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from textcw.errors import DataError

ENV_VAR = "TEXTCW_DATA"
_CHUNK = 1 << 20


def data_home() -> Path:
    """``$TEXTCW_DATA`` if set, else ``~/textcw_data``."""
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else Path.home() / "textcw_data"


@dataclass(frozen=True)
class RemoteFile:
    """A corpus file: where it lives, where it comes from, and the digests we accept.

    ``sha256`` lists every known-good digest: the canonical archive's and those of known
    repackings with byte-identical contents.
    """

    corpus: str
    filename: str
    url: str | None
    sha256: tuple[str, ...]

    @property
    def path(self) -> Path:
        return data_home() / self.corpus / self.filename


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
    if not path.exists():
        if not download or remote.url is None:
            raise DataError(_missing_message(remote, "downloading is off" if remote.url else
                                             "it has no public download"))
        _download(remote)
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime)
    digest = _verified.get(key) or sha256_of(path)
    if digest not in remote.sha256:
        raise DataError(
            f"{path} has sha256 {digest}, which is not a known-good digest of {remote.filename} "
            f"({', '.join(d[:12] + '…' for d in remote.sha256)}); the file is corrupt or a "
            "different version: delete it and download it again"
        )
    _verified[key] = digest
    return path


def _missing_message(remote: RemoteFile, why: str) -> str:
    where = f" (from {remote.url})" if remote.url else ""
    return (
        f"corpus file {remote.filename} not found in {remote.path.parent} and {why}; put "
        f"{remote.filename}{where} there, or set {ENV_VAR} to the folder that holds "
        f"{remote.corpus}/{remote.filename}"
    )


def _download(remote: RemoteFile) -> None:
    folder = remote.path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create the data folder {folder}: {exc}; set {ENV_VAR}") from None
    fd, tmp = tempfile.mkstemp(prefix=f".{remote.filename}.", suffix=".part", dir=folder)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(remote.url, timeout=30) as resp:
            while chunk := resp.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() not in remote.sha256:
            raise DataError(
                f"downloaded {remote.url} but its sha256 {digest.hexdigest()} is not a known-good "
                f"digest of {remote.filename}; nothing was saved"
            )
        os.replace(tmp, remote.path)
    except (urllib.error.URLError, OSError, TimeoutError) as exc:
        raise DataError(_missing_message(remote, f"downloading failed ({exc})")) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)

