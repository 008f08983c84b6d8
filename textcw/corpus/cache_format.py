"""The file format of the corpus cache (:mod:`textcw.corpus.cache`): plain arrays in ``.npz`` files.

A cache file is a NumPy ``.npz`` archive (uncompressed) of plain arrays: no pickle, and nothing
that needs one. It is read back as untrusted input, by :func:`read_npz` rather than
``numpy.load``: each member's declared shape must match its size before anything is allocated,
object arrays are refused, and a file or member that does not fit raises :class:`ValueError`.
The sha256 of all members (:func:`members_digest`) is written beside them and compared on reading;
it only detects damage, since whoever writes an entry can recompute it.

JSON and documents are stored as arrays too: JSON as the UTF-8 bytes of its text
(:func:`text_array`, :func:`from_text`), a list of documents as their concatenation and the
character offsets (:func:`pack_texts`, :func:`unpack_texts`).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import numpy as np

__all__ = ["MAX_FILE_BYTES", "from_text", "members_digest", "pack_texts", "read_npz", "text_array", "to_json",
           "unpack_texts"]

#: The most bytes one cache file may hold (the largest built-in corpus needs about 100 MB).
MAX_FILE_BYTES = 4 << 30
_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def read_npz(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an uncompressed ``.npz`` file, bounded and without unpickling anything.

    Each member's header is read and its shape checked against the member's actual size
    before the array is allocated, so a damaged header cannot ask for more memory than the
    file holds; object arrays (pickles) are refused.
    """
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"it is larger than {MAX_FILE_BYTES} bytes")
    out = {}
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            if not info.filename.endswith(".npy") or info.compress_type != zipfile.ZIP_STORED:
                raise ValueError(f"unexpected member {info.filename!r}")
            with zf.open(info) as fh:
                version = np.lib.format.read_magic(fh)
                if version not in _HEADERS:
                    raise ValueError(f"member {info.filename!r} has npy format {version}")
                shape, fortran, dtype = _HEADERS[version](fh)
                if dtype.hasobject or fortran:
                    raise ValueError(f"member {info.filename!r} is not a plain array")
                header = fh.tell()
                nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
                if nbytes != info.file_size - header:
                    raise ValueError(f"member {info.filename!r} is cut short or padded")
                buf = bytearray(nbytes)
                if fh.readinto(buf) != nbytes:
                    raise ValueError(f"member {info.filename!r} is cut short")
            out[info.filename[:-4]] = np.frombuffer(buf, dtype=dtype).reshape(shape)
    return out


def members_digest(members: dict[str, np.ndarray]) -> str:
    """The sha256 of ``members``: each one's name, dtype, shape and bytes, in name order."""
    h = hashlib.sha256()
    for name in sorted(members):
        a = members[name]
        h.update(f"{name}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(memoryview(np.ascontiguousarray(a)).cast("B"))
    return h.hexdigest()


def to_json(value) -> str:
    """How cached JSON is written (dicts keep their order)."""
    return json.dumps(value, allow_nan=False)


def text_array(text: str) -> np.ndarray:
    """``text`` as a member: its UTF-8 bytes."""
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


def from_text(array: np.ndarray) -> str:
    """The text of a member written by :func:`text_array`; :class:`ValueError` if it is not one."""
    if array.dtype != np.uint8 or array.ndim != 1:
        raise ValueError("a text member is not bytes")
    return array.tobytes().decode("utf-8")


def pack_texts(texts: list[str]) -> dict[str, np.ndarray]:
    """Documents as two arrays: their UTF-8 concatenation and the character offsets."""
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    # surrogatepass: a str holding lone surrogates (undecodable file names) still round-trips
    return {"text": np.frombuffer("".join(texts).encode("utf-8", "surrogatepass"), dtype=np.uint8),
            "offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)}


def unpack_texts(arrays: dict[str, np.ndarray], prefix: str = "") -> list[str]:
    """The documents :func:`pack_texts` stored under ``prefix``; :class:`ValueError` when the
    offsets do not fit the text."""
    blob = arrays[prefix + "text"].tobytes().decode("utf-8", "surrogatepass")
    offsets = arrays[prefix + "offsets"]
    if offsets.ndim != 1 or len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(blob) \
            or np.any(np.diff(offsets) < 0):
        raise ValueError("the document offsets do not fit the text")
    bounds = offsets.tolist()
    return [blob[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
