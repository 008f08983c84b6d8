"""Optional signing of model files: an HMAC-SHA256 over the manifest and the payload's digest.

With ``TEXTCW_SIGNING_KEY`` (the key itself) or ``TEXTCW_SIGNING_KEY_FILE`` (a file holding it)
set, :func:`textcw.persist.save` adds a signature member and :func:`textcw.persist.load`
refuses, before unpickling, a file that is unsigned, signed with another key, or changed after
signing. Digests are compared in constant time. A signature proves the file comes from someone
holding the key; it does not make a pickle from anyone else safe.

A key file decides which models are trusted, so it is read only when it is the user's own
(:func:`textcw.trust.check_trusted_file`: owned by the user, writable by nobody else, a regular
file and not a link, in folders others cannot swap), and it is opened without following links
and without blocking, so a FIFO or a device put in its place is refused, never waited on.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

from textcw.errors import ModelFileError
from textcw.untrusted import parse_json, safe_text

SIGNING_KEY_ENV = "TEXTCW_SIGNING_KEY"
SIGNING_KEY_FILE_ENV = "TEXTCW_SIGNING_KEY_FILE"
SIGNATURE_ALGORITHM = "hmac-sha256"
MIN_KEY_BYTES = 16
_MAX_KEY_FILE_BYTES = 64 << 10


def signing_key() -> bytes | None:
    """The signing key from ``TEXTCW_SIGNING_KEY`` or ``TEXTCW_SIGNING_KEY_FILE``, else ``None``.

    A key is at least :data:`MIN_KEY_BYTES` bytes (``python -c "import secrets;
    print(secrets.token_hex(32))"`` makes one); a key file's trailing line break is not part of
    the key. Setting both variables, an empty or short key, or an unreadable key file is an error,
    never a silent fall-back to unsigned files.
    """
    text, file = os.environ.get(SIGNING_KEY_ENV), os.environ.get(SIGNING_KEY_FILE_ENV)
    if text is not None and file is not None:
        raise ModelFileError(f"both {SIGNING_KEY_ENV} and {SIGNING_KEY_FILE_ENV} are set; set only one")
    if text is None and file is None:
        return None
    if text is not None:
        key, source = text.encode("utf-8", "surrogateescape"), SIGNING_KEY_ENV
    else:
        source = f"the key file {safe_text(file)} ({SIGNING_KEY_FILE_ENV})"
        key = _read_key_file(file, source)
        if len(key) > _MAX_KEY_FILE_BYTES:
            raise ModelFileError(f"{source} is larger than {_MAX_KEY_FILE_BYTES:,} bytes; it is not a key")
        key = key.rstrip(b"\r\n")
    if len(key) < MIN_KEY_BYTES:
        raise ModelFileError(
            f"the signing key in {source} has {len(key)} bytes; use at least {MIN_KEY_BYTES} random "
            "bytes, e.g. python -c \"import secrets; print(secrets.token_hex(32))\""
        )
    return key


def _read_key_file(file: str, source: str) -> bytes:
    """The first bytes of the key file (up to one more than a key may have), after checking it
    is the user's own; opened without following links or blocking, and checked again once open."""
    from textcw.trust import UntrustedLocationError, check_trusted_file

    try:
        if os.path.lexists(file) and not os.path.isdir(file):  # missing, a folder: the open says so
            check_trusted_file(file, "the signing key file")
    except UntrustedLocationError as exc:
        raise ModelFileError(f"{exc} (set by {SIGNING_KEY_FILE_ENV})") from None
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(file, flags)
    except OSError as exc:
        raise ModelFileError(f"cannot read {source}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a folder, or swapped since the check
        os.close(fd)
        raise ModelFileError(f"cannot read {source}: it is not a regular file; give the file that holds the key")
    with os.fdopen(fd, "rb") as fh:
        try:
            return fh.read(_MAX_KEY_FILE_BYTES + 1)
        except OSError as exc:
            raise ModelFileError(f"cannot read {source}: {exc.strerror or exc}") from None


def digests_equal(a: str, b: str) -> bool:
    """``a == b`` in time independent of where they differ (hmac.compare_digest), for any text."""
    return hmac.compare_digest(a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass"))


def _key_id(key: bytes) -> str:
    # Names the key in messages ("signed with another key") without revealing anything about it.
    return hmac.new(key, b"textcw signing key id", hashlib.sha256).hexdigest()[:16]


def _mac(key: bytes, manifest_bytes: bytes, payload_sha256: str) -> str:
    message = b"textcw-model signature 1\0" + manifest_bytes + b"\0" + payload_sha256.encode("ascii")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def signature_document(key: bytes, manifest_bytes: bytes, payload_sha256: str) -> bytes:
    document = {"algorithm": SIGNATURE_ALGORITHM, "key_id": _key_id(key),
                "mac": _mac(key, manifest_bytes, payload_sha256)}
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("ascii")


def signature_status(key: bytes | None, signature: bytes | None, manifest_bytes: bytes,
                      payload_sha256: str, path: Path) -> str:
    """``"unsigned"``, ``"unchecked"`` (signed, no key configured), ``"valid"``,
    ``"another key"`` or ``"invalid"``; a malformed signature member raises."""
    if signature is None:
        return "unsigned"
    document = parse_json(signature, f"the signature of {path}")
    if not (isinstance(document, dict) and document.get("algorithm") == SIGNATURE_ALGORITHM
            and isinstance(document.get("key_id"), str) and isinstance(document.get("mac"), str)):
        raise ModelFileError(f"the signature of {path} is not an {SIGNATURE_ALGORITHM} signature made by "
                             "textcw; the file is damaged or was modified")
    if key is None:
        return "unchecked"
    if not digests_equal(document["key_id"], _key_id(key)):
        return "another key"
    return "valid" if digests_equal(document["mac"], _mac(key, manifest_bytes, payload_sha256)) else "invalid"


def require_signature(status: str, path: Path) -> None:
    if status == "valid":
        return
    where = f"{SIGNING_KEY_ENV} or {SIGNING_KEY_FILE_ENV}"
    raise ModelFileError({
        "unsigned": f"{path} is not signed, and a signing key is set ({where}), so only models signed "
                    "with it are loaded; save the model again with the key set if you trust it",
        "another key": f"{path} is signed with another key than the one set in {where}; refusing to load it",
        "invalid": f"{path} was changed after it was signed (its manifest or payload does not match "
                   "the signature); refusing to load it",
    }[status])
