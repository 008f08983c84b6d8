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
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tarfile
import tempfile
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass
from pathlib import Path

from textcw.errors import DataError

ENV_VAR = "TEXTCW_DATA"
OFFLINE_VAR = "TEXTCW_OFFLINE"
_CHUNK = 1 << 20


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
    """

    corpus: str
    filename: str
    url: str | None
    sha256: tuple[str, ...]
    members: tuple[tuple[str, str], ...] = ()
    homepage: str | None = None

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
    if not path.is_file():
        _check_may_download(remote, download)
        _download(remote)
    if not remote.pinned:
        return path
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime)
    if key not in _verified:
        _verify(remote, path, what=str(path),
                advice="the file is corrupt or a different version: delete it and download it again")
        _verified[key] = "ok"
    return path


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
    folder = remote.path.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create the data folder {folder}: {exc}; set {ENV_VAR}") from None
    fd, tmp = tempfile.mkstemp(prefix=f".{remote.filename}.", suffix=".part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(remote.url, timeout=30) as resp:
            promised = resp.headers.get("Content-Length")
            received = 0
            while chunk := resp.read(_CHUNK):
                out.write(chunk)
                received += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        # read(n) returns what arrived when a connection closes early; say so plainly
        if promised and promised.isdigit() and received != int(promised):
            raise DataError(_missing_message(
                remote, f"the download stopped after {received} of {promised} bytes"))
        _verify(remote, Path(tmp), what=f"the download from {remote.url}",
                advice="nothing was saved; try again later or put the file there by hand")
        os.replace(tmp, remote.path)
    # http.client.HTTPException covers a connection cut mid-body (IncompleteRead).
    except (urllib.error.URLError, http.client.HTTPException, OSError, TimeoutError) as exc:
        raise DataError(_missing_message(remote, f"downloading failed ({exc})")) from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
