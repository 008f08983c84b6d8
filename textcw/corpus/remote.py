"""What a corpus file is and when a copy of it is good: the data home, :class:`RemoteFile` and
its sha256 pins.

A file is accepted when its sha256 is a known-good digest. For an archive we also pin the
sha256 of the members that hold the data: a repacked archive (or a canonical one whose digest
we never saw) with byte-identical members is the same data, so it is accepted too.
Fetching (:func:`textcw.corpus.datahome.fetch`) and downloading
(:mod:`textcw.corpus.download`) build on this.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from textcw.errors import DataError

__all__ = [
    "ENV_VAR", "OFFLINE_VAR", "RemoteFile", "check_members", "data_home", "missing_message", "offline",
    "sha256_of", "verify"
]

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
    max_bytes : int or None
        The most bytes a download of it may have: the canonical file's size (plus a margin when
        only its approximate size is known). ``None`` means
        :data:`textcw.corpus.download.DEFAULT_MAX_BYTES`.
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


def verify(remote: RemoteFile, path: Path, *, what: str, advice: str) -> None:
    """Raise :class:`DataError` unless ``path`` is a known-good copy of ``remote``."""
    digest = sha256_of(path)
    if digest in remote.sha256:
        return
    member_problem = check_members(remote, path) if remote.members else None
    if remote.members and member_problem is None:
        return
    expected = ", ".join(remote.sha256) or "(none recorded)"
    detail = f"; and {member_problem}" if member_problem else ""
    raise DataError(
        f"{what} has sha256 {digest}, but the known-good sha256 of {remote.filename} is "
        f"{expected}{detail}; {advice}"
    )


def check_members(remote: RemoteFile, path: Path) -> str | None:
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


def missing_message(remote: RemoteFile, why: str) -> str:
    source = remote.url or remote.homepage
    where = f" (from {source})" if source else ""
    return (
        f"corpus file {remote.filename} not found in {remote.path.parent} and {why}; put "
        f"{remote.filename}{where} there, or set {ENV_VAR} to the folder that holds "
        f"{remote.corpus}/{remote.filename}"
    )
