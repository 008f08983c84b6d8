"""USPS handwritten digits (Hull, IEEE PAMI 16(5), 1994), as distributed with ESL.

Read from ``zip.train.gz`` (7,291 images) and ``zip.test.gz`` (2,007 images) of Hastie,
Tibshirani and Friedman, *The Elements of Statistical Learning*: gzipped text, one image per
line, the digit then the 256 grey values of a 16 x 16 image, scaled to [-1, 1] (-1 is the
background). The two files are the official split. Each document is a row of 256 floats (the
data is a 2-d array), for the ``pixels`` and ``pixel-pairs`` featurizers.

Tasks: ``usps`` (10-way, the default); the JMLR 2012 pairs (section 7.6) ``0v9``, ``1v2``,
``3v4``, ``5v6``, ``7v8``; any pair ``AvB`` of digits, and one-vs-rest ``Avall`` (the AROW
2013 OCR tasks). Images come in a seeded random order.
"""

from __future__ import annotations

import functools
import gzip
import re
import zlib

import numpy as np
from textcw.corpus.base import Dataset, check_split
# The pinned, verified download of a corpus file. No documented public module offers it yet; a
# copy of its checks (digests, size cap, deadline, atomic move) here would drift from textcw's.
from textcw.corpus.datahome import RemoteFile, fetch
from textcw.errors import DataError, UnknownNameError

ESL = "https://hastie.su.domains/ElemStatLearn/datasets/"
FILES = {
    "train": RemoteFile(corpus="usps", filename="zip.train.gz", url=ESL + "zip.train.gz",
                        sha256=("66ebf231ab51f2cf6ac1a892d0f98ccffee1079d7a5db638c1f11f366046ca16",)),
    "test": RemoteFile(corpus="usps", filename="zip.test.gz", url=ESL + "zip.test.gz",
                       sha256=("8dacc3c6e136af6c3488de9e5113a7daf140c8c2f1f0b61c54ee02f03f1a962f",)),
}
N_PIXELS = 256
DIGITS = [str(d) for d in range(10)]
JMLR_PAIRS = ("0v9", "1v2", "3v4", "5v6", "7v8")
TASKS = {
    "all": "10-way digit recognition (the default task)",
    **{p: f"digit {p[0]} vs digit {p[2]} (JMLR 2012)" for p in JMLR_PAIRS},
}
TASK_PATTERNS = {"AvB": "any pair of digits, e.g. 3v8", "Avall": "one digit vs the rest, e.g. 3vall"}
_PAIR = re.compile(r"(\d)v(\d|all)")


def parse_task(task: str | None) -> tuple[list[str], list[list[int]]]:
    """Class names and the digits in each class: ``"3vall"`` -> ``(["3", "not-3"], [[3], [...]])``."""
    if task in (None, "all"):
        return list(DIGITS), [[d] for d in range(10)]
    match = _PAIR.fullmatch(task)
    if match is None or match.group(1) == match.group(2):
        raise UnknownNameError("task of corpus 'usps'", task,
                               [f"usps:{t}" for t in [*TASKS, *TASK_PATTERNS]])
    a = int(match.group(1))
    if match.group(2) == "all":
        return [str(a), f"not-{a}"], [[a], [d for d in range(10) if d != a]]
    b = int(match.group(2))
    return [str(a), str(b)], [[a], [b]]


def check_task(task: str) -> bool:
    """Accept ``AvB`` (two different digits) and ``Avall``."""
    parse_task(task)
    return True


@functools.lru_cache(maxsize=2)
def read_file(path: str) -> tuple[np.ndarray, np.ndarray]:
    """``(pixels, digits)``: a float64 array ``(n, 256)`` in [-1, 1] and the int digit of each row."""
    try:
        with gzip.open(path, "rt", encoding="ascii") as fh:
            # numpy's C reader: no Python object per value (a list of strings would take 150 MB)
            table = np.loadtxt(fh, dtype=np.float64, ndmin=2)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise DataError(f"cannot read {path}: {exc}; delete it and download it again") from None
    except ValueError as exc:  # its message names the row
        raise DataError(f"{path} is not ESL zip data (a digit and {N_PIXELS} pixels per line): "
                        f"{exc}") from None
    if table.shape[1] != N_PIXELS + 1:
        raise DataError(f"{path} has {table.shape[1]} values per line, expected a digit and "
                        f"{N_PIXELS} pixels")
    digits, pixels = table[:, 0], table[:, 1:]
    if len(table) == 0 or not np.all(np.isin(digits, np.arange(10))):
        raise DataError(f"{path} holds no images, or a label that is not a digit 0-9")
    if not (np.all(np.isfinite(pixels)) and pixels.min() >= -1.0 and pixels.max() <= 1.0):
        raise DataError(f"{path} has pixel values outside [-1, 1]; is it the ESL zip data?")
    return pixels, digits.astype(np.int64)


def load(task: str | None = None, split: str = "train", *, order_seed: int = 0,
         download: bool = True):
    """Load a USPS task from the official ``split`` (see the module docstring)."""
    names, groups = parse_task(task)
    check_split(split)
    pixels, digits = read_file(str(fetch(FILES[split], download=download)))
    class_of = np.full(10, -1, dtype=np.int64)
    for k, group in enumerate(groups):
        class_of[group] = k
    target = class_of[digits]
    keep = np.flatnonzero(target >= 0)
    # A seeded random order (online learners see the images in the order given), drawn as
    # textcw's own loaders draw theirs: one permutation of the kept rows from order_seed.
    rows = keep[np.random.RandomState(order_seed).permutation(keep.size)]
    return Dataset(data=pixels[rows], target=target[rows], target_names=names,
                   name="usps" if task in (None, "all") else f"usps:{task}", split=split)
