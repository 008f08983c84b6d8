"""The first pass over a table's file(s): the rows of each split, the labels, the bad rows, and
where every STRIDE-th row of a split starts (a :class:`~textcw.corpus.tabular.files.Position`),
so that any range of rows is then read from the nearest one. CSV and TSV files of
``SCAN_MIN_BYTES`` or more are counted by the compiled scanner (:mod:`textcw.corpus._table_scan`),
which gives the same answers; the index is cached per file stamp.
"""

from __future__ import annotations

import functools
import logging
import os
from dataclasses import dataclass

import numpy as np

from textcw import _limits
from textcw.corpus.labels import LabelCheck
from textcw.corpus.tabular import limits
from textcw.corpus.tabular.files import Position, _name, _stamp, _stdin_bytes
from textcw.corpus.tabular.readers import Row, _CsvReader, _Rows
from textcw.corpus.tabular.spec import TableSpec
from textcw.corpus.tabular.split import SPLIT_BLOCK, _test_rows
from textcw.errors import DataError

__all__: list[str] = []

log = logging.getLogger("textcw.corpus")


@dataclass
class _Index:
    labels: list[str]
    sizes: dict
    checkpoints: dict  # split -> [Position of split rows 0, STRIDE, 2 STRIDE, ...]
    skipped: dict
    first_problem: dict


def _bad_row(spec: TableSpec, path: str, row: Row) -> DataError:
    where = f"row {row.line}" if spec.fmt == "parquet" else f"line {row.line}"
    return DataError(f"{_name(path)} {where}: {row.problem}; fix the row, or skip bad rows (counted) with "
                     f"{spec.example(bad_rows='skip')}")


class _Counts:
    """What the first pass learns of a table, told row by row (:meth:`row`) or by runs of good
    rows (:meth:`run`, from :mod:`textcw.corpus._table_scan`); the same answers either way."""

    def __init__(self, spec: TableSpec):
        self.spec = spec
        self.labels: set[str] = set()
        self.sizes: dict[str, int] = {"train": 0, "test": 0}
        self.checkpoints: dict[str, list[Position]] = {"train": [], "test": []}
        self.skipped: dict[str, int] = {"train": 0, "test": 0}
        self.first_problem: dict[str, str | None] = {"train": None, "test": None}

    def start_file(self, k: int, path: str, start: Position) -> None:
        self.path, self.fixed = path, None if self.spec.test is None else ("train", "test")[k]
        self.position = start  # where the row after the last one counted starts
        self.block, self.held = -1, np.zeros(0, bool)

    def split_of_row(self, number: int) -> str:
        if self.fixed is not None:
            return self.fixed
        if number // SPLIT_BLOCK != self.block:
            self.block = number // SPLIT_BLOCK
            self.held = _test_rows(self.spec.seed, self.block, self.spec.test_share)
        return "test" if self.held[number % SPLIT_BLOCK] else "train"

    def add_labels(self, labels) -> None:
        self.labels.update(labels)
        if len(self.labels) > _limits.MAX_LABELS:
            raise DataError(f"{_name(self.path)}: column {self.spec.label!r} has more than {_limits.MAX_LABELS:,} "
                            f"distinct values; is it the label column? Name it: {self.spec.example(label='COLUMN')}")

    def row(self, row: Row, after) -> None:
        """Count ``row``; ``after(row)`` is where the next row starts (asked only if needed)."""
        split, spec = self.split_of_row(row.row), self.spec
        if row.problem is not None:
            if not spec.skip_bad:
                raise _bad_row(spec, self.path, row)
            self.skipped[split] += 1
            self.first_problem[split] = self.first_problem[split] or \
                str(_bad_row(spec, self.path, row)).split("; fix")[0]
        else:
            if self.sizes[split] % limits.STRIDE == 0:
                self.checkpoints[split].append(self.position)
            self.sizes[split] += 1
            if row.label not in self.labels:
                self.add_labels((row.label,))
        # Where the next row starts is needed only if it may start a run of STRIDE rows
        # (found right after this row: a reader knows only where it stands).
        if self.sizes[self.split_of_row(row.row + 1)] % limits.STRIDE == 0:
            self.position = after(row)

    def run(self, first: int, ends: np.ndarray, lines: np.ndarray) -> None:
        """Count the good rows ``first, first + 1, ...``, row ``first + j`` ending at byte
        ``ends[j]`` before line ``lines[j]``."""
        n = len(ends)
        if self.fixed is not None:
            test = np.full(n, self.fixed == "test")
        else:
            blocks = range(first // SPLIT_BLOCK, (first + n - 1) // SPLIT_BLOCK + 1)
            held = np.concatenate([_test_rows(self.spec.seed, b, self.spec.test_share) for b in blocks])
            test = held[first % SPLIT_BLOCK:first % SPLIT_BLOCK + n]
        for split, rows in (("train", np.flatnonzero(~test)), ("test", np.flatnonzero(test))):
            size = self.sizes[split]
            for j in rows[(-size) % limits.STRIDE::limits.STRIDE].tolist():  # the rows that start a run of STRIDE
                self.checkpoints[split].append(
                    self.position if j == 0 else Position(int(ends[j - 1]), int(lines[j - 1]), first + j))
            self.sizes[split] = size + len(rows)
        self.position = Position(int(ends[-1]), int(lines[-1]), first + n)

    def index(self) -> _Index:
        for split in ("train", "test"):
            if self.skipped[split]:
                log.warning("%s: skipped %d bad row%s of the %s split (first: %s)", self.spec.example()[:-1],
                            self.skipped[split], "s" if self.skipped[split] != 1 else "", split,
                            self.first_problem[split])
        return _Index(sorted(self.labels), self.sizes, self.checkpoints, self.skipped, self.first_problem)


@functools.lru_cache(maxsize=8)
def _index_cached(spec: TableSpec, stamps: tuple) -> _Index:
    counts = _Counts(spec)
    labels = LabelCheck()  # one for both files: a label's kind is the same in the test file
    for k, path in enumerate(spec.files):
        rows = _Rows(spec, path, need_label=True, labels=labels)
        counts.start_file(k, path, rows.start)
        # the compiled scanner checks a label field as one label: a multi-label read goes row by row
        if isinstance(rows.reader, _CsvReader) and not spec.multilabel and _size(path) >= limits.SCAN_MIN_BYTES:
            # deferred: loads numba, whose start costs what the compiled scan saves on a smaller file
            from textcw.corpus.tabular import scan

            if scan.index_csv(counts, rows):
                continue
        for row in rows.read():
            counts.row(row, rows.position_after)
    return counts.index()


def _size(path: str) -> int:
    return len(_stdin_bytes()) if path == "-" else os.stat(path).st_size


def _index(spec: TableSpec) -> _Index:
    return _index_cached(spec, tuple(_stamp(p) for p in spec.files))
