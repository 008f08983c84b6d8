"""Bring your own vectors: ``--corpus svmlight:PATH[,TEST_PATH]``.

The svmlight / libsvm format (Joachims 1999; Chang and Lin, LIBSVM): one document per line,
``label index:value index:value ...`` with increasing indices, an optional ``qid:N`` after the
label, and ``#`` comments. Files ending in ``.gz`` or ``.bz2`` are decompressed. scikit-learn's
``load_svmlight_files`` does the reading; when it rejects a file we scan the file ourselves to
say which line is wrong, since its parser reports neither file nor line.

Indices are zero-based if any file uses index 0, else one-based (scikit-learn's ``"auto"``),
and at most 2147483647 (scikit-learn stores them as 32-bit integers). Labels and values must be
finite numbers. A UTF-8 byte-order mark at the start of a file is skipped.
With one file the documents are split 80/20 by class with a seed; with two, the second file is
the test split. Labels keep their written value (``-1``, ``1``, ``3``); each distinct value is a
class. The rows come as a CSR matrix for the ``precomputed`` featurizer.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import math
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from textcw.corpus.base import check_split
from textcw.corpus.sampling import make_dataset, seeded_split, take
from textcw.errors import DataError, InputError
from textcw.untrusted import one_line, safe_text

__all__ = [
    "BOM", "MAX_INDEX", "TASKS", "TASK_PATTERNS", "UTF16_BOMS", "check_task", "find_bad_line", "load",
    "read_svmlight", "split_paths"
]

TASKS: dict = {}
TASK_PATTERNS = {"PATH[,TEST_PATH]": "an svmlight/libsvm file, optionally with a test file"}


def check_task(task: str) -> bool:
    """Any non-empty ``PATH[,TEST_PATH]`` is a task; the loader checks that the files exist."""
    split_paths(task)
    return True


def split_paths(task: str | None) -> list[str]:
    """``"a.svm,b.svm"`` -> ``["a.svm", "b.svm"]``; a path that exists is taken whole."""
    if not task or not task.strip():
        raise InputError("svmlight needs a file: --corpus svmlight:PATH or svmlight:TRAIN,TEST")
    if os.path.exists(task):
        return [task]
    paths = [p.strip() for p in task.split(",")]
    if len(paths) > 2 or not all(paths):
        raise InputError(
            f"svmlight:{task} is not PATH or PATH,TEST_PATH (one comma between two file names)"
        )
    return paths


MAX_INDEX = 2**31 - 1  # scikit-learn's parser keeps indices in 32-bit integers
BOM = b"\xef\xbb\xbf"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


def _open(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rb")
    if path.suffix == ".bz2":
        return bz2.open(path, "rb")
    return open(path, "rb")


def _open_past_bom(path: Path):
    """``path`` opened for reading, past a UTF-8 byte-order mark if it starts with one.

    Editors on Windows often write one; scikit-learn's parser would read it as part of the
    first label and reject the file.
    """
    fh = _open(path)
    try:
        if fh.read(len(BOM)) != BOM:
            fh.seek(0)
    except BaseException:
        fh.close()
        raise
    return fh


def _text(raw: bytes) -> str:
    """Bytes of a bad line as the user wrote them: UTF-8, else Latin-1 (never mojibake of
    UTF-8, never an error); the message shows them with repr, so control bytes are escaped."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _line_problem(line: bytes, zero_based: bool | str) -> str | None:
    """What is wrong with one line, or ``None`` (the rules of scikit-learn's parser)."""
    text = line.split(b"#", 1)[0].strip()
    if not text:
        return None
    tokens = text.split()
    try:
        label = float(tokens[0])
    except ValueError:
        return f"the label {_text(tokens[0])!r} is not a number"
    if not math.isfinite(label):
        return f"the label {_text(tokens[0])!r} is not finite"
    previous = -1
    for k, token in enumerate(tokens[1:]):
        name, sep, value = token.partition(b":")
        shown = _text(token)
        if not sep:
            return f"{shown!r} is not index:value"
        if k == 0 and name == b"qid":
            continue
        try:
            index = int(name)
        except ValueError:
            return f"the index in {shown!r} is not an integer"
        if index < 0 or (index == 0 and zero_based is False):
            return f"the index in {shown!r} is out of range"
        if index > MAX_INDEX:
            return f"the index in {shown!r} is too large (at most {MAX_INDEX})"
        if index <= previous:
            return f"indices must increase along a line; {shown!r} comes after index {previous}"
        previous = index
        try:
            number = float(value)
        except ValueError:
            return f"the value in {shown!r} is not a number"
        if not math.isfinite(number):
            return f"the value in {shown!r} is not finite"
    return None


def find_bad_line(path: Path, zero_based: bool | str = "auto") -> tuple[int, str, str] | None:
    """``(line number, line, problem)`` of the first malformed line of ``path``, or ``None``."""
    with _open(path) as fh:
        for number, line in enumerate(fh, start=1):
            if number == 1 and line.startswith(UTF16_BOMS):
                return (number, line[:80].decode("latin-1").rstrip("\r\n"),
                        "the file is UTF-16 text (it starts with a UTF-16 byte-order mark); save "
                        "it as UTF-8 or ASCII")
            if number == 1 and line.startswith(BOM):
                line = line[len(BOM):]
            problem = _line_problem(line, zero_based)
            if problem is not None:
                shown = _text(line).rstrip("\r\n")
                return number, (shown[:80] + "…" if len(shown) > 80 else shown), problem
    return None


def read_svmlight(paths: list[str | Path], *, zero_based: bool | str = "auto"
                  ) -> list[tuple[sp.csr_matrix, np.ndarray]]:
    """Read svmlight files into ``(X, y)`` pairs of one width, or raise a clear error."""
    paths = [Path(p) for p in paths]
    for path in paths:
        if path.is_dir():
            raise DataError(f"svmlight:{safe_text(path, limit=None)} is a folder; give the svmlight file "
                            "(for a folder of text files per class use --corpus folder:PATH)")
        if not path.is_file():
            raise DataError(f"svmlight file {safe_text(path, limit=None)} not found")
    files = []
    try:
        files = [_open_past_bom(p) for p in paths]
        from sklearn.datasets import load_svmlight_files  # here: corpora register without scikit-learn

        loaded = load_svmlight_files(files, zero_based=zero_based, dtype=np.float64)
    # OverflowError: an index beyond 32 bits, which the parser cannot store
    except (ValueError, UnicodeDecodeError, EOFError, OSError, OverflowError) as exc:
        raise _explain(paths, zero_based, exc) from None
    finally:
        for fh in files:
            fh.close()
    pairs = [(sp.csr_matrix(loaded[i]), np.asarray(loaded[i + 1])) for i in range(0, len(loaded), 2)]
    for path, (X, y) in zip(paths, pairs):
        if X.shape[0] == 0:
            raise DataError(f"svmlight file {safe_text(path, limit=None)} holds no documents; each line must "
                            "be 'label index:value ...'")
        # scikit-learn accepts nan/inf values and labels
        if not (np.all(np.isfinite(X.data)) and np.all(np.isfinite(y))):
            raise _explain([path], zero_based, ValueError("a value or label is not finite"))
    return pairs


def _explain(paths: list[Path], zero_based, exc: Exception) -> DataError:
    for path in paths:
        try:
            bad = find_bad_line(path, zero_based)
        except (OSError, EOFError) as err:
            reason = err.strerror if isinstance(err, OSError) and err.strerror else one_line(err)
            return DataError(f"cannot read svmlight file {safe_text(path, limit=None)}: {reason}")
        if bad is not None:
            number, line, problem = bad
            return DataError(
                f"{safe_text(path, limit=None)}, line {number}: {problem} (line: {line!r}); each line must be "
                "'label index:value index:value ...' with increasing indices"
            )
    return DataError(f"cannot read svmlight file(s) {', '.join(safe_text(p, limit=None) for p in paths)}: "
                     f"{one_line(exc)}")


@functools.lru_cache(maxsize=4)
def _read_cached(paths: tuple[str, ...], stamps: tuple) -> list:
    return read_svmlight(list(paths))


def load(task: str | None = None, split: str = "train", *, seed: int = 0, order_seed: int = 0,
         test_size: float = 0.2, download: bool = True):
    """Load ``svmlight:PATH[,TEST_PATH]`` (``download`` is accepted and ignored: local files)."""
    check_split(split)
    paths = split_paths(task)
    stamps = tuple(_stamp(p) for p in paths)
    pairs = _read_cached(tuple(str(Path(p).resolve()) for p in paths), stamps)
    y_all = np.concatenate([y for _, y in pairs])
    values = np.unique(y_all)
    # Whole numbers are named as integers ("1", "-1"), others as written by repr ("2.5");
    # beyond 2**53 a float's integer digits are not the ones in the file, so keep repr there.
    names = [str(int(v)) if float(v).is_integer() and abs(v) < 2**53 else repr(float(v))
             for v in values]
    if len(values) < 2:
        raise DataError(f"svmlight:{task} has a single label ({names[0]}); a task needs two or more")
    if len(pairs) == 2:
        X, y = pairs[0 if split == "train" else 1]
        target = np.searchsorted(values, y)
    else:
        X, y = pairs[0]
        target = np.searchsorted(values, y)
        chosen = seeded_split(target, split, seed, test_size, names)
        X, target = take(X, chosen), target[chosen]
    return make_dataset(X, target, names, name=f"svmlight:{task}", split=split,
                        order_seed=order_seed, info={"files": [str(p) for p in paths]})


def _stamp(path: str) -> tuple:
    try:
        stat = os.stat(path)
    except OSError:
        raise DataError(f"svmlight file {safe_text(path, limit=None)} not found") from None
    return stat.st_size, stat.st_mtime_ns
