"""The portable export format (:mod:`textcw.portable`): its constants and the bounded reading of
an export's archive.

An export is a ZIP archive holding ``model.json`` then ``arrays/0.npy``, ``arrays/1.npy`` ... in
that order. Everything here reads with bounds decided before anything is decompressed: the
unpacked total, ``model.json``'s share of it, and every array's header (dtype, dimensions and
element count against the member's size), so a hostile file is refused before numpy allocates.
"""

from __future__ import annotations

import math
import os
import zipfile
import zlib
from pathlib import Path

import numpy as np

from textcw._limits import MAX_LABEL_CHARS
from textcw.errors import ModelFileError
from textcw.untrusted import FITTED_NAME, check_printable, parse_json, read_member, safe_text

__all__ = [
    "ARRAY_DTYPES", "DEFAULT_MAX_BYTES", "FITTED_NAME", "FORMAT", "FORMAT_VERSION", "JSON_MEMBER",
    "KINDS", "is_export", "json_limit", "open_export", "read_array", "read_description",
    "read_document", "read_export"
]


FORMAT = "textcw-portable"


FORMAT_VERSION = 1


JSON_MEMBER = "model.json"


DEFAULT_MAX_BYTES = 4 << 30


KINDS = {"featurizer": "featurizers", "learner": "learners"}




# The dtypes an export holds (state and coefficients, counts, labels) and nothing else: a
# zero-size dtype such as <U0 would let a header declare 10^12 elements in no bytes.
ARRAY_DTYPES = frozenset(np.dtype(t).str for t in ("?", "<i1", "<i2", "<i4", "<i8", "<u1", "<u2", "<u4",
                                                      "<u8", "<f4", "<f8"))


_MAX_LABEL_CHARS = MAX_LABEL_CHARS  # a label (a <U array's item) longer than this is no label: the bound
# `textcw train` and `textcw export` hold too (textcw._limits), so a model that trains also imports


_MAX_ARRAY_DIMS = 3  # (labels, rows, rows): a multi-class full covariance


# JSON takes up to ~25 times its size once parsed ("[{},{},...]"): model.json gets a share of the
# unpacked-size bound, not all of it (a vocabulary of a million words is about 20 MB of JSON).
_JSON_SHARE = 32


_MIN_JSON_LIMIT = 1 << 20



def json_limit(max_bytes: int) -> int:
    """The most bytes of ``model.json`` read for an export bounded by ``max_bytes``."""
    return min(max_bytes, max(_MIN_JSON_LIMIT, max_bytes // _JSON_SHARE))


def is_export(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a ZIP archive whose first member is ``model.json`` (nothing is read)."""
    if not os.path.isfile(path):  # a FIFO would block the open below
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return False
    return bool(names) and names[0] == JSON_MEMBER


def open_export(path: Path, max_bytes: int) -> tuple[zipfile.ZipFile, list[zipfile.ZipInfo]]:
    if not path.is_file():
        raise ModelFileError(f"{path} does not exist" if not path.exists() else f"{path} is not a file")
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ModelFileError(f"{path} is not an exported textcw model (a ZIP archive made by `textcw export`), "
                             "or it is truncated") from None
    except OSError as exc:
        raise ModelFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    infos = archive.infolist()
    total = sum(i.file_size for i in infos)
    names = [i.filename for i in infos]
    expected = [JSON_MEMBER] + [f"arrays/{n}.npy" for n in range(len(names) - 1)]
    if total > max_bytes:
        archive.close()
        raise ModelFileError(
            f"{path} unpacks to {total:,} bytes, more than the limit of {max_bytes:,}; if you trust "
            "its size, raise max_bytes"
        )
    if names != expected:
        archive.close()
        raise ModelFileError(f"{path} is an archive but not an exported textcw model (members "
                             f"{[safe_text(n, 60) for n in names[:4]]})")
    return archive, infos


def read_description(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, max_bytes: int) -> dict:
    raw = read_member(archive, info, path, json_limit(max_bytes), "the model description")
    document = parse_json(raw, f"the {JSON_MEMBER} of {path}")
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ModelFileError(f"{path} is not an exported textcw model (its model.json has another format)")
    version = document.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ModelFileError(f"{path} uses export format {safe_text(repr(version), 40)}; this textcw reads "
                             f"format {FORMAT_VERSION}; upgrade textcw to import it")
    return document


def read_export(path: Path, max_bytes: int) -> tuple[dict, dict[int, np.ndarray]]:
    archive, infos = open_export(path, max_bytes)
    with archive:
        document = read_description(archive, infos[0], path, max_bytes)
        arrays = {number: read_array(archive, info, path) for number, info in enumerate(infos[1:])}
    return document, arrays


def read_document(path: str | os.PathLike, *, max_bytes: int = DEFAULT_MAX_BYTES) -> dict:
    """The ``model.json`` of the export at ``path``, with each step's fitted state replaced by
    ``"(fitted state)"``: what ``textcw inspect`` shows. Read with the bounds of
    :func:`textcw.portable.import_model` (the same ``max_bytes``); no array is read, nothing is built."""
    path = Path(path)
    archive, infos = open_export(path, max_bytes)
    with archive:
        document = read_description(archive, infos[0], path, max_bytes)
    for step in document.get("steps", []) if isinstance(document.get("steps"), list) else []:
        if isinstance(step, dict):
            for key in ("state_dict", "attributes"):
                if key in step:
                    step[key] = "(fitted state)"
    return document


def read_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path) -> np.ndarray:
    """One ``.npy`` member, without pickle, after checking its header: numpy allocates the
    declared shape before reading, so a header that lies about its size, or declares a dtype an
    export never holds (objects, zero-size strings), must not get there."""
    try:
        with archive.open(info) as fh:
            version = np.lib.format.read_magic(fh)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
                else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(fh, max_header_size=10000)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, SyntaxError) as exc:
        raise ModelFileError(f"{path} is damaged or not an exported textcw model ({info.filename}: {exc})") from None
    allowed = dtype.str in ARRAY_DTYPES or (dtype.kind == "U" and dtype.byteorder in "<|="
                                             and 1 <= dtype.itemsize // 4 <= _MAX_LABEL_CHARS)
    if dtype.hasobject or not allowed:
        raise ModelFileError(f"{info.filename} holds an array of dtype {safe_text(dtype.str, 40)}, which an "
                             "export never has (numbers, booleans and labels of 1 to "
                             f"{_MAX_LABEL_CHARS} characters)")
    if len(shape) > _MAX_ARRAY_DIMS:
        raise ModelFileError(f"{info.filename} declares a {len(shape)}-dimensional array; an export holds at "
                             f"most {_MAX_ARRAY_DIMS} dimensions")
    count = math.prod(shape)
    if count * dtype.itemsize > info.file_size:
        raise ModelFileError(f"{info.filename} declares a {shape} array, more data than it holds")
    try:
        with archive.open(info) as fh:
            array = np.lib.format.read_array(fh, allow_pickle=False, max_header_size=10000)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as exc:
        raise ModelFileError(f"{path} is damaged or not an exported textcw model ({info.filename}: {exc})") from None
    if array.dtype.kind == "U":
        check_printable(array.ravel().tolist(), f"{info.filename}, a list of labels")
    return array
