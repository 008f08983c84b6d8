"""Text files one document a line, as Vowpal Wabbit reads them: ``--corpus vw:PATH[,TEST_PATH]``.

Each non-empty line is ``label | text``: the label is the one word before the first ``|`` (any
token without spaces: ``1``, ``-1``, ``sports``; each distinct label is a class), the document is
everything after it. This is the text form of Vowpal Wabbit's input format, so the same file
trains both (``1 | the words of the document``); VW's importance weights and tags (more than
one word before the ``|``) are refused, since ignoring them would train a different model than
VW does. The text after the ``|`` is the document as a whole: a namespace name written right
after the ``|`` (``|title words``) and ``name:value`` features are read as words of it. Empty
lines are skipped. Text is UTF-8 (undecodable bytes replaced); compressed files are not read.

With one file, its last fifth (of documents, in file order) is the test split and the rest
the training split; with two, the second file is the test split. The classes are the labels of
both splits.

The file is read at the speed of the disk: it is mapped into memory, compiled kernels find the
lines, labels and text of a range of documents, and a chunk reaches the featurizer as one
:class:`~textcw.features.native.TextBlock` (the bytes of its documents and their offsets),
which the ``hashing`` and bag-of-words featurizers tokenise without a Python string per
document. One scan of each file (cached per process, keyed by the file's path, size and
modification time) counts its documents, collects its labels and records the byte offset of
every :data:`CHECKPOINT`-th document, so any range ``[start, stop)`` (a stream's chunk, a
shard) is found without reading what comes before it.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from textcw.corpus.base import Dataset, check_split
from textcw.errors import DataError, InputError
from textcw.untrusted import safe_text

__all__ = ["CHECKPOINT", "MAX_LABELS", "TASKS", "TASK_PATTERNS", "check_task", "load", "size", "stream"]

TASKS: dict = {}
TASK_PATTERNS = {"PATH[,TEST_PATH]": "a text file of 'label | text' lines, optionally with a test file"}
CHECKPOINT = 1024  # documents between recorded byte offsets
MAX_LABELS = 10_000  # distinct labels: more means the first word is not a label
CHUNK = 10_000
_TABLE = 1 << 15  # slots of the label hash table: over twice MAX_LABELS

# Scan error codes (:func:`textcw.corpus._vw_kernels._scan` reports the first bad line).
_NO_BAR, _NO_LABEL, _EXTRA, _TOO_MANY = 1, 2, 3, 4


def check_task(task: str) -> bool:
    """Any non-empty ``PATH[,TEST_PATH]`` is a task (``True``); the loader checks that the files
    exist."""
    _paths(task)
    return True


def _paths(task: str | None) -> list[str]:
    if not task or not task.strip():
        raise InputError("vw needs a file: --corpus vw:PATH or vw:TRAIN,TEST")
    if os.path.exists(task):
        return [task]
    paths = [p.strip() for p in task.split(",")]
    if len(paths) > 2 or not all(paths):
        raise InputError(f"vw:{task} is not PATH or PATH,TEST_PATH (one comma between two file names)")
    return paths


@dataclass(frozen=True)
class _Scan:
    """What one pass over a file found."""

    path: str
    n_documents: int
    checkpoints: np.ndarray  # byte offset of documents 0, CHECKPOINT, 2 * CHECKPOINT, ...
    labels: tuple  # distinct labels, in order of first appearance
    keys: np.ndarray  # the hash-table key of each label


def _map(path: str) -> np.ndarray:
    if os.path.getsize(path) == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.memmap(path, dtype=np.uint8, mode="r")


def _check_file(path: str) -> os.stat_result:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError(f"vw: no file {safe_text(path)!r}; give the path of a 'label | text' file") from None
    except OSError as exc:
        raise InputError(f"vw: cannot read {safe_text(path)!r}: {exc.strerror}") from None
    if not os.path.isfile(path):
        raise InputError(f"vw: {safe_text(path)!r} is not a regular file; give a 'label | text' file")
    if path.endswith((".gz", ".bz2", ".xz", ".zst")):
        raise InputError(f"vw: {safe_text(path)!r} looks compressed; vw reads plain text files: "
                         "decompress it first")
    return info


def _scan_file(path: str) -> _Scan:
    info = _check_file(path)
    return _scan_cached(os.path.realpath(path), info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=8)
def _scan_cached(path: str, size: int, mtime_ns: int) -> _Scan:
    from textcw.corpus._vw_kernels import _scan  # deferred: loads numba; a full start imports this module

    buf = _map(path)
    slots = np.full(_TABLE, -1, dtype=np.int64)
    first = np.zeros(MAX_LABELS + 1, dtype=np.int64)
    lengths = np.zeros(MAX_LABELS + 1, dtype=np.int64)
    keys = np.zeros(MAX_LABELS + 1, dtype=np.int64)
    n_docs, checkpoints, n_labels, error, line, where = _scan(buf, CHECKPOINT, MAX_LABELS, slots, first,
                                                              lengths, keys)
    if error:
        shown = safe_text(bytes(buf[where:where + 80]).split(b"\n")[0].decode("utf-8", "replace"))
        what = {
            _NO_BAR: "has no '|': write each document as 'label | text'",
            _NO_LABEL: "has no label before its '|': write each document as 'label | text'",
            _EXTRA: "has more than one word before its '|'; only 'label | text' is read (Vowpal "
                    "Wabbit's importance weights and tags are not supported)",
            _TOO_MANY: f"brings the number of distinct labels past {MAX_LABELS}: is the first word of "
                       "each line its label?",
        }[error]
        raise DataError(f"vw: line {line} of {safe_text(path)!r} {what} (the line starts {shown!r})")
    labels = tuple(bytes(buf[first[i]:first[i] + lengths[i]]).decode("utf-8", "replace")
                   for i in range(n_labels))
    return _Scan(path, int(n_docs), checkpoints, labels, keys[:n_labels].copy())


def _files(task: str | None) -> tuple[_Scan, _Scan | None]:
    paths = _paths(task)
    train = _scan_file(paths[0])
    test = _scan_file(paths[1]) if len(paths) == 2 else None
    return train, test


def _layout(task: str | None, split: str) -> tuple[_Scan, int, int, list[str]]:
    """The file of ``split``, its documents ``[lo, hi)`` in it, and the classes."""
    check_split(split)
    train, test = _files(task)
    names = sorted(set(train.labels) | set(test.labels if test else ()))
    if test is not None:
        scan = train if split == "train" else test
        return scan, 0, scan.n_documents, names
    n_test = train.n_documents // 5
    cut = train.n_documents - n_test
    return (train, 0, cut, names) if split == "train" else (train, cut, train.n_documents, names)


def size(task: str | None = None, split: str = "train", **options) -> int:
    """The number of documents of ``split``."""
    _, lo, hi, _ = _layout(task, split)
    return hi - lo


def stream(task: str | None = None, split: str = "train", *, start: int = 0, stop: int | None = None,
           chunk_size: int = CHUNK, download: bool = False) -> Iterator[Dataset]:
    """Documents ``[start, stop)`` of ``split`` as consecutive chunks of ``TextBlock`` documents."""
    # deferred: both load numba; a full start (building the plugin index) imports this module
    from textcw.corpus._vw_kernels import _read
    from textcw.features.native import TextBlock

    scan, lo, hi, names = _layout(task, split)
    n = hi - lo
    stop = n if stop is None else stop
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise InputError(f"chunk_size must be a whole number >= 1; got {chunk_size!r}")
    if not (0 <= start <= stop <= n):
        raise InputError(f"documents [{start}, {stop}) are outside the {n} {split} documents of vw:{task}")
    buf = _map(scan.path)
    index = {label: k for k, label in enumerate(names)}
    label_class = np.asarray([index[label] for label in scan.labels], dtype=np.int64)
    slots = _label_slots(scan.keys)
    name = f"vw:{task}"
    for a in range(start, stop, chunk_size):
        b = min(stop, a + chunk_size)
        first = lo + a
        begin = scan.checkpoints[first // CHECKPOINT]
        after = (lo + b - 1) // CHECKPOINT + 1  # the checkpoint after the chunk's last document
        limit = scan.checkpoints[after] if after < len(scan.checkpoints) else len(buf)
        text, offsets, target, bad = _read(buf, begin, limit, first % CHECKPOINT, b - a, slots, scan.keys,
                                           label_class)
        if bad >= 0:
            raise DataError(f"vw: {safe_text(scan.path)!r} changed while it was read (document {lo + a + bad} "
                            "has a label the first reading did not see); read it again")
        yield Dataset(data=TextBlock(text, offsets), target=target, target_names=list(names), name=name,
                      split=split)


def load(task: str | None = None, split: str = "train", *, download: bool = False) -> Dataset:
    """The whole ``split`` as one chunk (for files that fit in memory; ``--stream`` reads any size)."""
    n = size(task, split)
    parts = list(stream(task, split, chunk_size=max(1, n)))
    if not parts:
        from textcw.features.native import TextBlock  # deferred: loads numba, as in stream()

        _, _, _, names = _layout(task, split)
        return Dataset(data=TextBlock(np.zeros(0, np.uint8), np.zeros(1, np.int64)),
                       target=np.zeros(0, dtype=np.int64), target_names=names, name=f"vw:{task}", split=split)
    return parts[0]


def _label_slots(keys: np.ndarray) -> np.ndarray:
    slots = np.full(_TABLE, -1, dtype=np.int64)
    for i, key in enumerate(keys.tolist()):
        s = key & (_TABLE - 1)
        while slots[s] != -1:
            s = (s + 1) & (_TABLE - 1)
        slots[s] = i
    return slots
