"""Your labelled text in a table: ``csv:``, ``tsv:``, ``jsonl:`` and ``parquet:`` corpora.

A task names the file(s) and, after ``?``, options joined by ``&`` (as in a URL)::

    csv:reviews.csv                          columns "text" and "label", 80/20 split
    csv:train.csv,test.csv                   the split given by two files
    csv:news.csv?text=title,body&label=topic several text columns, joined by a space
    tsv:data.tsv?header=no&text=2&label=1    no header row: columns are numbered from 1
    jsonl:posts.jsonl?text=body&label=tag    one JSON object per line
    parquet:data.parquet                     the `parquet` extra (pyarrow)
    csv:-                                    standard input (read whole; not with --stream)

Options: ``text`` (column(s), default ``text``), ``label`` (default ``label``), ``header``
(``yes``/``no``, CSV and TSV), ``delimiter`` (CSV: one character, or ``tab``), ``test`` (the
share of rows held out when no test file is given, default 0.2), ``seed`` (of that split,
default 0), ``bad_rows`` (``error``, the default, or ``skip``) and ``encoding`` (``utf-8``, the
default, or ``latin-1``).

The split without a test file is seeded and per row, not stratified: row ``i`` (counted from
0 after the header, bad rows included) is a test row when a draw seeded by ``(seed, i // 1000)``
puts it there with probability ``test``. So any range of rows knows its split without the rows
before it, every run and every process agrees, and a class may be under- or over-represented
in a small test split. Rows keep the file's order (an online learner sees them as written).

Reading is streamed: a first pass over the file(s) counts the rows of each split, collects the
labels and records where every 1,000th row of a split starts (a byte offset for CSV, TSV and
JSON lines, a row number for Parquet); any range ``[start, stop)`` of a split is then read from
the nearest recorded place, so ``--stream`` and ``--shards`` hold one chunk whatever the size of
the file. CSV is parsed by the standard library's C parser from blocks of lines; the first pass
over a CSV or TSV file finds the rows and their labels with a compiled twin of that parser and
leaves to it every row it cannot vouch for (:mod:`textcw.corpus._table_scan`), so the answers
and errors are the same, sooner (docs/benchmarks.md, "Tabular corpora").

A bad row (a wrong number of columns, no label, bytes that are not in the encoding, a JSON line
that is not an object) stops the read with an error naming the file and line, unless
``bad_rows=skip``: then it is skipped, counted (``Dataset.info["skipped_rows"]``) and the
count is logged. Every size is bounded before it is used: a line or field larger than
:data:`MAX_FIELD` bytes, more than :data:`MAX_LABELS` distinct labels (the label column is
probably not the label), standard input over :data:`MAX_STDIN_BYTES`, or more than
:data:`MAX_MATERIALISED` rows loaded at once (use ``--stream``) are errors.
"""

from __future__ import annotations

import codecs
import csv
import functools
import io
import itertools
import json
import logging
import os
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

import numpy as np

from textcw.corpus.base import Dataset, check_split
from textcw.errors import DataError, InputError
from textcw.untrusted import first_unprintable, safe_text, unprintable_kind

__all__ = [
    "CSV", "FORMATS", "JSONL", "MAX_FIELD", "MAX_LABELS", "MAX_MATERIALISED", "MAX_STDIN_BYTES", "PARQUET",
    "STRIDE", "TASK_PATTERNS", "TSV", "Position", "Row", "TableCorpus", "TableSpec", "parse_spec", "read_rows",
    "split_of"
]

log = logging.getLogger("textcw.corpus")

FORMATS = ("csv", "tsv", "jsonl", "parquet")
TASK_PATTERNS = {
    "PATH[,TEST_PATH][?OPTIONS]": "your table; options text=COLUMN[,COLUMN], label=COLUMN, test=0.2, "
                                  "seed=0, bad_rows=skip, ... (docs/guide/your-own-data.md)",
}
# Where every STRIDE-th row of a split starts is recorded: a range is read from at most
# STRIDE - 1 rows before it.
STRIDE = 1_000
# The split of a single file is drawn in blocks of rows, each from its own seed.
SPLIT_BLOCK = 1_000
CHUNK = 10_000
MAX_FIELD = 16 * 2**20
MAX_LINE = 4 * MAX_FIELD
MAX_LABELS = 10_000
MAX_STDIN_BYTES = 2**30
MAX_MATERIALISED = 2_000_000
BLOCK_BYTES = 2**20
# The first pass over a CSV or TSV file of this size or more is made by the compiled scanner
# (textcw.corpus._table_scan); below, the csv module is as quick as starting numba (~0.4 s).
SCAN_MIN_BYTES = 16 * 2**20
ENCODINGS = ("utf-8", "latin-1")
_YES, _NO = ("yes", "true", "1"), ("no", "false", "0")

# The csv module's limit is process-wide; it is only ever raised, to MAX_FIELD.
csv.field_size_limit(max(csv.field_size_limit(), MAX_FIELD))


@dataclass(frozen=True)
class TableSpec:
    """A parsed task: the files, the columns and the reading options (module docstring)."""

    fmt: str
    train: str
    test: str | None = None
    text: tuple[str, ...] = ("text",)
    label: str = "label"
    header: bool = True
    delimiter: str = ","
    test_share: float = 0.2
    seed: int = 0
    skip_bad: bool = False
    encoding: str = "utf-8"

    @property
    def files(self) -> tuple[str, ...]:
        return (self.train,) if self.test is None else (self.train, self.test)

    def example(self, **changes) -> str:
        """How a user writes this task with ``changes`` to its options (for error messages)."""
        options = "&".join(f"{k}={v}" for k, v in changes.items())
        return f"{self.fmt}:{','.join(self.files)}?{options}"


def _choice(fmt: str, key: str, value: str, yes_no: bool = True) -> bool:
    if value.lower() in _YES:
        return True
    if value.lower() in _NO:
        return False
    raise InputError(f"{fmt}: {key}={value!r} is invalid; give {key}=yes or {key}=no")


def parse_spec(fmt: str, task: str | None) -> TableSpec:
    """``"data.csv?text=body&label=topic"`` -> a :class:`TableSpec` (a clear error otherwise)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown table format {fmt!r}; the formats are {', '.join(FORMATS)}")
    usage = f"--corpus {fmt}:PATH[,TEST_PATH][?text=COLUMN&label=COLUMN]"
    if task is None or not task.strip():
        raise InputError(f"{fmt} needs a file: {usage}")
    paths, query = task, ""
    if "?" in task and "=" in task.rpartition("?")[2]:
        paths, _, query = task.rpartition("?")
    parts = paths.split(",")
    if len(parts) > 2 or not all(p.strip() for p in parts):
        raise InputError(f"{fmt}:{task}: give one file, or a training and a test file separated by one "
                         f"comma ({usage})")
    spec = TableSpec(fmt, parts[0], parts[1] if len(parts) == 2 else None,
                     delimiter="\t" if fmt == "tsv" else ",")
    seen = set()
    for item in filter(None, query.split("&")):
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"{fmt}:{task}: option {item!r} is not KEY=VALUE (e.g. ?text=body&label=topic)")
        if key in seen:
            raise InputError(f"{fmt}:{task}: option {key} is given twice; give each option once")
        seen.add(key)
        spec = _option(spec, fmt, task, key, value)
    if spec.test is not None and "test" in seen:
        raise InputError(f"{fmt}:{task}: test= is the share held out of one file; with a test file "
                         "it does not apply: drop it")
    if "-" in spec.files and spec.test is not None:
        raise InputError(f"{fmt}:{task}: standard input (-) is one file; give it alone (the test rows "
                         "are then held out of it)")
    return spec


def _option(spec: TableSpec, fmt: str, task: str, key: str, value: str) -> TableSpec:
    tabular = fmt in ("csv", "tsv")
    if key == "text":
        columns = tuple(c.strip() for c in value.split(","))
        if not all(columns):
            raise InputError(f"{fmt}:{task}: text={value!r} names an empty column; give text=COLUMN or "
                             "text=COLUMN,COLUMN")
        return replace(spec, text=columns)
    if key == "label":
        if not value.strip():
            raise InputError(f"{fmt}:{task}: label= needs a column name")
        return replace(spec, label=value.strip())
    if key == "header" and tabular:
        return replace(spec, header=_choice(fmt, key, value))
    if key == "delimiter" and fmt == "csv":
        delimiter = "\t" if value.lower() == "tab" else value
        if len(delimiter) != 1 or delimiter in "\r\n\"":
            raise InputError(f"{fmt}:{task}: delimiter={value!r} is invalid; give one character "
                             "(e.g. delimiter=; or delimiter=|) or delimiter=tab")
        return replace(spec, delimiter=delimiter)
    if key == "test":
        try:
            share = float(value)
        except ValueError:
            share = -1.0
        if not 0.0 < share < 1.0:
            raise InputError(f"{fmt}:{task}: test={value!r} is invalid; give the share of rows held out "
                             "for testing, between 0 and 1 (e.g. test=0.2)")
        return replace(spec, test_share=share)
    if key == "seed":
        if not value.isdigit() or len(value) > 18:
            raise InputError(f"{fmt}:{task}: seed={value!r} is invalid; give a whole number >= 0")
        return replace(spec, seed=int(value))
    if key == "bad_rows":
        if value not in ("error", "skip"):
            raise InputError(f"{fmt}:{task}: bad_rows={value!r} is invalid; give bad_rows=error (stop at "
                             "the first bad row, the default) or bad_rows=skip (skip and count them)")
        return replace(spec, skip_bad=value == "skip")
    if key == "encoding" and fmt != "parquet":
        name = value.lower().replace("_", "-")
        name = {"utf8": "utf-8", "latin1": "latin-1", "iso-8859-1": "latin-1"}.get(name, name)
        if name not in ENCODINGS:
            raise InputError(f"{fmt}:{task}: encoding={value!r} is not supported; give encoding=utf-8 "
                             "or encoding=latin-1")
        return replace(spec, encoding=name)
    known = ["text", "label", "test", "seed", "bad_rows"] + (["header"] if tabular else []) + \
        (["delimiter"] if fmt == "csv" else []) + (["encoding"] if fmt != "parquet" else [])
    raise InputError(f"{fmt}:{task}: unknown option {key!r}; the options of {fmt} are {', '.join(known)}")


# ----------------------------------------------------------------------------- reading files
@dataclass(frozen=True)
class Position:
    """Where a row starts: byte ``offset`` (a row number for Parquet), its ``line`` (1-based, for
    messages) and its ``row`` number (from 0, after the header)."""

    offset: int
    line: int
    row: int


@dataclass
class Row:
    """One row of a table: where it is, its text and label, the row as read (a list of fields,
    a dict for JSON lines and Parquet) and, for a bad row, what is wrong with it."""

    line: int
    row: int
    text: str
    label: str | None
    raw: object
    problem: str | None = None


@functools.lru_cache(maxsize=1)
def _stdin_bytes() -> bytes:
    """Standard input, read once per process (a table is read more than once), bounded."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise InputError("standard input is closed; give a file instead of -")
    data = stream.read(MAX_STDIN_BYTES + 1)
    if len(data) > MAX_STDIN_BYTES:
        raise InputError(f"standard input holds more than {MAX_STDIN_BYTES:,} bytes, which are read "
                         "whole; save it to a file and give its path (with --stream for large files)")
    return data


def _name(path: str) -> str:
    return "standard input" if path == "-" else safe_text(path, limit=None)


def _open(path: str, once: bool = False):
    """A binary file object of ``path`` (``-``: standard input, whole in memory unless it is read
    ``once`` front to back); a regular file is required, so that it can be read again (a pipe or
    a device could block or give other bytes)."""
    if path == "-" and once:
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:
            raise InputError("standard input is closed; give a file instead of -")
        return stream
    if path == "-":
        return io.BytesIO(_stdin_bytes())
    try:
        info = os.stat(path)
    except OSError as exc:
        raise DataError(f"cannot read {_name(path)}: {exc.strerror or exc}; check the path") from None
    if not stat.S_ISREG(info.st_mode):
        raise DataError(f"{_name(path)} is not a regular file; give a file (or - for standard input)")
    try:
        return open(path, "rb")
    except OSError as exc:
        raise DataError(f"cannot read {_name(path)}: {exc.strerror or exc}; check its permissions") from None


def _stamp(path: str) -> tuple:
    if path == "-":
        data = _stdin_bytes()  # read once per process; a test may give another (bytes cache their hash)
        return ("-", len(data), hash(data))
    try:
        info = os.stat(path)
    except OSError:
        return (path, None)
    return (os.path.abspath(path), info.st_size, info.st_mtime_ns, info.st_ino)


class _Lines:
    """The decoded lines of a binary file from ``position``, read in blocks, with the byte offset
    at which any line (by its number) starts. Lines keep their line breaks (the csv module
    needs them inside quoted fields). A line that is not in the encoding is decoded with
    replacement characters and its number recorded in ``bad``."""

    def __init__(self, fh, position: Position, encoding: str, name: str):
        self.fh, self.encoding, self.name = fh, encoding, name
        if position.offset:  # standard input read once is never sought
            fh.seek(position.offset)
        self.next_offset = position.offset
        self.next_line = position.line  # number of the next line to be read
        self.block_offset, self.block_line, self.block_parts, self.block_ends = position.offset, position.line, [], None
        self.bad: dict[int, str] = {}
        self.at_start = position.offset == 0

    def _blocks(self) -> Iterator[list[str]]:
        pending = b""
        while True:
            data = self.fh.read(max(BLOCK_BYTES, len(pending)))
            raw, pending = pending + data, b""
            if data:  # a block ends after a line break (\r\n, \n or \r, never half a \r\n)
                end = len(raw) - 1 if raw.endswith(b"\r") else len(raw)
                cut = max(raw.rfind(b"\n", 0, end), raw.rfind(b"\r", 0, end)) + 1
                raw, pending = raw[:cut], raw[cut:]
                if len(pending) > MAX_LINE:
                    line = self.next_line + len(raw.splitlines())
                    raise DataError(f"{self.name} line {line}: a line longer than "
                                    f"{MAX_LINE:,} bytes; is this a {self.encoding} text file of rows?")
                if not raw:
                    continue
            if not raw:
                return
            if self.at_start and raw.startswith(codecs.BOM_UTF8) and self.encoding == "utf-8":
                raw = raw[len(codecs.BOM_UTF8):]
                self.next_offset += len(codecs.BOM_UTF8)
            self.at_start = False
            parts = raw.splitlines(keepends=True)
            self.block_offset, self.block_line, self.block_parts, self.block_ends = \
                self.next_offset, self.next_line, parts, None
            self.next_offset += len(raw)
            self.next_line += len(parts)
            try:
                yield [p.decode(self.encoding) for p in parts]
            except UnicodeDecodeError:
                yield [self._decode(p, self.block_line + k) for k, p in enumerate(parts)]

    def _decode(self, part: bytes, line: int) -> str:
        try:
            return part.decode(self.encoding)
        except UnicodeDecodeError as exc:
            self.bad[line] = (f"byte 0x{part[exc.start]:02x} at column {exc.start + 1} is not "
                              f"{self.encoding} text")
            return part.decode(self.encoding, errors="replace")

    def __iter__(self) -> Iterator[str]:
        return itertools.chain.from_iterable(self._blocks())

    def position_of(self, line: int, row: int) -> Position:
        """Where line number ``line`` starts (a line of the current block, or the next block)."""
        k = line - self.block_line
        if k >= len(self.block_parts):
            return Position(self.next_offset, self.next_line, row)
        if self.block_ends is None:
            self.block_ends = [0, *itertools.accumulate(map(len, self.block_parts))]
        return Position(self.block_offset + self.block_ends[k], line, row)

    def problem(self, first: int, last: int) -> str | None:
        """The encoding problem of lines ``first`` to ``last``, if any."""
        if self.bad:
            for line in range(first, last + 1):
                if line in self.bad:
                    return self.bad[line] + (f" (line {line})" if line != first else "")
        return None


@dataclass
class _Layout:
    """The columns of a table: the names, and where the text and label are."""

    names: list[str]
    text: list = field(default_factory=list)  # indices (CSV) or keys
    label: object = None  # index or key; None when labels are not needed and absent


def _missing_column(spec: TableSpec, path: str, column: str, names: list[str], what: str) -> DataError:
    shown = ", ".join(repr(n) for n in names[:20]) + (", ..." if len(names) > 20 else "")
    option = "text" if what == "text" else "label"
    return DataError(f"{_name(path)} has no column {column!r} (its columns: {shown or 'none'}); name the "
                     f"{what} column: {spec.example(**{option: 'COLUMN'})}")


def _layout(spec: TableSpec, path: str, names: list[str], need_label: bool) -> _Layout:
    index = {n: k for k, n in enumerate(names)}
    for column in spec.text:
        if column not in index:
            raise _missing_column(spec, path, column, names, "text")
    if spec.label not in index and need_label:
        raise _missing_column(spec, path, spec.label, names, "label")
    if spec.fmt in ("csv", "tsv"):
        return _Layout(names, [index[c] for c in spec.text], index[spec.label] if need_label else None)
    return _Layout(names, list(spec.text), spec.label if need_label else None)


def _label_checker():
    """:func:`_check_label` remembering its answers (a table repeats a few labels many times);
    bounded: past MAX_LABELS distinct values the count of labels stops the read anyway."""
    seen: dict = {}

    def check(value):
        answer = seen.get(value) if isinstance(value, str) else None
        if answer is None:
            answer = _check_label(value)
            if isinstance(value, str) and len(seen) <= MAX_LABELS:
                seen[value] = answer
        return answer

    return check


def _check_label(value) -> tuple[str | None, str | None]:
    """``(label, problem)`` for a label cell."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, "no label"
    if isinstance(value, (dict, list)) or isinstance(value, float) and not np.isfinite(value):
        return None, f"the label {safe_text(value, limit=40)} is not a name"
    label = value if isinstance(value, str) else ("true" if value is True else "false" if value is False
                                                  else str(value))
    bad = first_unprintable(label)
    if bad is not None:
        return None, f"the label has {unprintable_kind(bad)} (U+{ord(bad):04X}); labels are printed one per line"
    return label, None


class _Reader:
    """The rows of one file from a position: ``rows()`` yields :class:`Row`;
    ``position(row)`` is where the next row starts."""

    def __init__(self, spec: TableSpec, path: str, need_label: bool = True, once: bool = False):
        self.spec, self.path, self.need_label, self.once = spec, path, need_label, once
        self.name = _name(path)

    def open(self):
        return _open(self.path, self.once and self.spec.fmt != "parquet")

    # Each format: open at the start to learn the layout (and the first data row's position),
    # then rows from any position.
    def start(self) -> tuple[_Layout, Position]:
        raise NotImplementedError

    def rows(self, layout: _Layout, position: Position) -> Iterator[Row]:
        raise NotImplementedError

    def close(self) -> None:
        fh = getattr(self, "fh", None)
        if fh is not None and fh is not getattr(sys.stdin, "buffer", None):
            fh.close()


class _CsvReader(_Reader):
    def _reader(self, position: Position):
        self.close()
        self.fh = self.open()
        self.lines = _Lines(self.fh, position, self.spec.encoding, self.name)
        self.csv = csv.reader(iter(self.lines), delimiter=self.spec.delimiter)
        self.base_line, self.row = position.line, position.row

    def _next(self):
        try:
            return next(self.csv)
        except csv.Error as exc:
            raise DataError(f"{self.name} line {self.base_line + self.csv.line_num - 1}: {exc}; is it a "
                            f"{self.spec.fmt.upper()} file{' with delimiter ' + repr(self.spec.delimiter) if self.spec.fmt == 'csv' else ''}?") from None

    def start(self) -> tuple[_Layout, Position]:
        self._reader(Position(0, 1, 0))
        try:
            first = self._next()
        except StopIteration:
            raise DataError(f"{self.name} is empty; a table needs a header row and rows") from None
        self.pending = []  # read once (standard input): the rows already read, for rows()
        if self.spec.header:
            names = [n.strip() for n in first]
            layout = _layout(self.spec, self.path, names, self.need_label)
            start = self.lines.position_of(self.base_line + self.csv.line_num, 0)
        else:
            names = [str(k + 1) for k in range(len(first))]
            layout = _layout(self.spec, self.path, names, self.need_label)
            start = Position(0, 1, 0)
            self.pending = [first]
        if not self.once:
            self.close()
        return layout, start

    def rows(self, layout: _Layout, position: Position) -> Iterator[Row]:
        if self.once:  # go on from start(): the input cannot be read again
            pending = self.pending
        else:
            self._reader(position)
            pending = []
        n, text_at, label_at = len(layout.names), layout.text, layout.label
        single = len(text_at) == 1
        first_line, row = position.line, position.row
        csv_reader, lines = self.csv, self.lines
        base = self.base_line - 1
        check_label = _label_checker()
        try:
            for fields in itertools.chain(pending, csv_reader):
                last_line = base + csv_reader.line_num if not pending or fields is not pending[0] else 1
                if not fields:  # a blank line: no row
                    first_line = last_line + 1
                    continue
                problem = lines.problem(first_line, last_line) if lines.bad else None
                label = None
                if problem is None and len(fields) != n:
                    problem = f"{len(fields)} fields where the header has {n}" if self.spec.header else \
                        f"{len(fields)} fields where the first row has {n}"
                if problem is None:
                    text = fields[text_at[0]] if single else " ".join(fields[k] for k in text_at)
                    if label_at is not None:
                        label, problem = check_label(fields[label_at])
                else:
                    text = ""
                yield Row(first_line, row, text, label, fields, problem)
                row += 1
                first_line = last_line + 1
        except csv.Error as exc:
            delimiter = f" with delimiter {self.spec.delimiter!r}" if self.spec.fmt == "csv" else ""
            raise DataError(f"{self.name} line {base + csv_reader.line_num}: {exc}; is it a "
                            f"{self.spec.fmt.upper()} file{delimiter}?") from None
        finally:
            self.close()


class _JsonlReader(_Reader):
    def start(self) -> tuple[_Layout, Position]:
        return _Layout([*self.spec.text, self.spec.label], list(self.spec.text),
                       self.spec.label if self.need_label else None), Position(0, 1, 0)

    def rows(self, layout: _Layout, position: Position) -> Iterator[Row]:
        self.close()
        self.fh = self.open()
        self.lines = lines = _Lines(self.fh, position, self.spec.encoding, self.name)
        self.last_line, row = position.line - 1, position.row
        need_label, check_label = self.need_label, _label_checker()
        try:
            for line_no, text_line in enumerate(lines, start=position.line):
                self.last_line = line_no
                if not text_line.strip():
                    continue
                problem = lines.problem(line_no, line_no) if lines.bad else None
                obj, text, label = None, "", None
                if problem is None:
                    try:
                        obj = json.loads(text_line)
                    except (ValueError, RecursionError) as exc:
                        problem = f"not JSON ({str(exc).split(':')[0]})"
                if problem is None and not isinstance(obj, dict):
                    problem, obj = f"a JSON {type(obj).__name__}, not an object", None
                if problem is None:
                    text, problem = self._text(obj, layout)
                if problem is None and need_label:
                    if layout.label not in obj:
                        problem = f"no {layout.label!r} key (the label)"
                    else:
                        label, problem = check_label(obj[layout.label])
                yield Row(line_no, row, text, label, obj, problem)
                row += 1
        finally:
            self.close()

    @staticmethod
    def _text(obj: dict, layout: _Layout) -> tuple[str, str | None]:
        parts = []
        for key in layout.text:
            if key not in obj:
                return "", f"no {key!r} key (the text)"
            value = obj[key]
            if value is None:
                value = ""
            elif isinstance(value, (dict, list)):
                return "", f"the {key!r} value is a JSON {type(value).__name__}, not text"
            parts.append(value if isinstance(value, str) else str(value))
        return (parts[0] if len(parts) == 1 else " ".join(parts)), None

    def position_after(self, row: int) -> Position:
        return self.lines.position_of(self.last_line + 1, row)


def _pyarrow_parquet():
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("reading Parquet needs the parquet extra: pip install 'textcw[parquet]' "
                         "(pyarrow)") from None
    return pq


class _ParquetReader(_Reader):
    def _file(self):
        pq = _pyarrow_parquet()
        self.close()
        self.fh = self.open()
        try:
            return pq.ParquetFile(self.fh)
        except Exception as exc:  # pyarrow's errors: ArrowInvalid and its relatives
            raise DataError(f"{self.name} is not a Parquet file ({' '.join(str(exc).split())[:200]})") from None

    def start(self) -> tuple[_Layout, Position]:
        pf = self._file()
        names = list(pf.schema_arrow.names)
        self.close()
        return _layout(self.spec, self.path, names, self.need_label), Position(0, 1, 0)

    def rows(self, layout: _Layout, position: Position) -> Iterator[Row]:
        pf = self._file()
        columns = list(dict.fromkeys([*layout.text, *([layout.label] if layout.label is not None else [])]))
        first, row = 0, 0
        try:
            for group in range(pf.metadata.num_row_groups):
                size = pf.metadata.row_group(group).num_rows
                if first + size <= position.row:
                    first += size
                    continue
                row = first
                for batch in pf.iter_batches(batch_size=CHUNK, row_groups=[group], columns=columns):
                    data = {name: batch.column(name).to_pylist() for name in columns}
                    for k in range(batch.num_rows):
                        if row >= position.row:
                            yield self._row(layout, data, k, row)
                        row += 1
                first += size
        finally:
            self.close()

    @staticmethod
    def _row(layout: _Layout, data: dict, k: int, row: int) -> Row:
        raw = {name: values[k] for name, values in data.items()}
        problem, parts = None, []
        for key in layout.text:
            value = raw[key]
            if isinstance(value, (dict, list, bytes)):
                problem = f"the {key!r} value is not text"
                break
            parts.append("" if value is None else value if isinstance(value, str) else str(value))
        label = None
        if problem is None and layout.label is not None:
            label, problem = _check_label(raw[layout.label])
        return Row(row + 1, row, parts[0] if len(parts) == 1 else " ".join(parts), label, raw, problem)


_READERS = {"csv": _CsvReader, "tsv": _CsvReader, "jsonl": _JsonlReader, "parquet": _ParquetReader}


class _Rows:
    """The rows of a file from a position, and where the row after the last one read starts."""

    def __init__(self, spec: TableSpec, path: str, need_label: bool = True, once: bool = False):
        self.reader = _READERS[spec.fmt](spec, path, need_label, once)
        self.layout, self.start = self.reader.start()

    def read(self, position: Position | None = None) -> Iterator[Row]:
        return self.reader.rows(self.layout, position or self.start)

    def position_after(self, row: Row) -> Position:
        """Where the row after ``row`` starts (call right after ``row`` was yielded)."""
        reader = self.reader
        if isinstance(reader, _CsvReader):
            return reader.lines.position_of(reader.base_line + reader.csv.line_num, row.row + 1)
        if isinstance(reader, _JsonlReader):
            return reader.position_after(row.row + 1)
        return Position(row.row + 1, row.row + 2, row.row + 1)


def read_rows(spec: TableSpec, path: str, *, need_label: bool = False) -> tuple[list[str], Iterator[Row]]:
    """``(column names, rows)`` of one file, front to back, once, bad rows included
    (``Row.problem`` says why), for ``textcw predict``: the label column is read only if
    ``need_label``. Standard input (``-``) is read as it comes, except Parquet (read whole)."""
    rows = _Rows(spec, path, need_label, once=True)
    return rows.layout.names, rows.read()


# ----------------------------------------------------------------------------- the index
@functools.lru_cache(maxsize=64)
def _test_rows(seed: int, block: int, share: float) -> np.ndarray:
    """Which rows of ``[block * SPLIT_BLOCK, ...)`` are held out (module docstring)."""
    return np.random.default_rng([seed, 8191, block]).random(SPLIT_BLOCK) < share


def split_of(spec: TableSpec, row: int) -> str:
    """The split of row ``row`` of a single file."""
    return "test" if _test_rows(spec.seed, row // SPLIT_BLOCK, spec.test_share)[row % SPLIT_BLOCK] else "train"


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
        if len(self.labels) > MAX_LABELS:
            raise DataError(f"{_name(self.path)}: column {self.spec.label!r} has more than {MAX_LABELS:,} distinct "
                            f"values; is it the label column? Name it: {self.spec.example(label='COLUMN')}")

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
            if self.sizes[split] % STRIDE == 0:
                self.checkpoints[split].append(self.position)
            self.sizes[split] += 1
            if row.label not in self.labels:
                self.add_labels((row.label,))
        # Where the next row starts is needed only if it may start a run of STRIDE rows
        # (found right after this row: a reader knows only where it stands).
        if self.sizes[self.split_of_row(row.row + 1)] % STRIDE == 0:
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
            for j in rows[(-size) % STRIDE::STRIDE].tolist():  # the rows that start a run of STRIDE
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
    for k, path in enumerate(spec.files):
        rows = _Rows(spec, path, need_label=True)
        counts.start_file(k, path, rows.start)
        if isinstance(rows.reader, _CsvReader) and _size(path) >= SCAN_MIN_BYTES:
            from textcw.corpus import _table_scan  # (and numba, whose start costs what it saves below)

            if _table_scan.index_csv(counts, rows):
                continue
        for row in rows.read():
            counts.row(row, rows.position_after)
    return counts.index()


def _size(path: str) -> int:
    return len(_stdin_bytes()) if path == "-" else os.stat(path).st_size


def _index(spec: TableSpec) -> _Index:
    return _index_cached(spec, tuple(_stamp(p) for p in spec.files))


# ----------------------------------------------------------------------------- the corpus
class TableCorpus:
    """The loader, stream and size of one format, registered as the corpus ``fmt``.

    Instances are small and picklable, so shard and stream workers receive them by value and
    read their own range of rows (:mod:`textcw.scale.source`).
    """

    def __init__(self, fmt: str):
        if fmt not in FORMATS:
            raise InputError(f"unknown table format {fmt!r}; the formats are {', '.join(FORMATS)}")
        self.fmt = fmt

    def __repr__(self) -> str:
        return f"TableCorpus({self.fmt!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, TableCorpus) and other.fmt == self.fmt

    def __hash__(self) -> int:
        return hash(("TableCorpus", self.fmt))

    def check_task(self, task: str) -> bool:
        """The registry's check of a task name: the spelling and options (files are read later);
        ``True`` when they parse, an :class:`~textcw.errors.InputError` saying what is wrong
        otherwise (the ``task_check`` contract: only ``True`` accepts)."""
        parse_spec(self.fmt, task)
        return True

    def _spec(self, task: str | None, split: str) -> tuple[TableSpec, _Index]:
        check_split(split)
        spec = parse_spec(self.fmt, task)
        index = _index(spec)
        if not index.labels:
            raise DataError(f"{self.fmt}:{task} has no rows with a label; a table needs rows of text and "
                            "label")
        if index.sizes[split] == 0:
            how = "its test file has none" if spec.test is not None else \
                f"none of its {sum(index.sizes.values())} rows fell in it (test={spec.test_share}); add rows, " \
                "raise test= or give a test file"
            raise DataError(f"{self.fmt}:{task} has no rows in its {split} split: {how}")
        return spec, index

    def size(self, task: str | None = None, split: str = "train", **options) -> int:
        """Rows of ``split`` (the streaming protocol of :mod:`textcw.scale.source`)."""
        spec, index = self._spec(self._streamable(task), split)
        return index.sizes[split]

    def _streamable(self, task: str | None) -> str | None:
        if task is not None and "-" in parse_spec(self.fmt, task).files:
            raise InputError(f"{self.fmt}:- reads standard input whole, once, so it cannot be streamed or "
                             "sharded; save it to a file and give its path")
        return task

    def stream(self, task: str | None = None, split: str = "train", *, start: int = 0, stop: int | None = None,
               chunk_size: int = CHUNK, **options) -> Iterator[Dataset]:
        """Rows ``[start, stop)`` of ``split`` as consecutive :class:`Dataset` chunks."""
        self._streamable(task)
        yield from self._chunks(task, split, start, stop, chunk_size)

    def _chunks(self, task, split, start, stop, chunk_size) -> Iterator[Dataset]:
        spec, index = self._spec(task, split)
        total = index.sizes[split]
        stop = total if stop is None else stop
        if not (0 <= start <= stop <= total):
            raise InputError(f"{self.fmt}:{task} {split} has {total} rows; cannot read rows [{start}, {stop})")
        if not isinstance(chunk_size, int) or chunk_size < 1:
            raise InputError(f"chunk_size must be a whole number >= 1; got {chunk_size!r}")
        if start == stop:
            return
        path = spec.train if spec.test is None or split == "train" else spec.test
        single = spec.test is None
        names = index.labels
        code = {name: k for k, name in enumerate(names)}
        info = {"path": path, "skipped_rows": index.skipped[split]}
        name = f"{self.fmt}:{task}"
        k = (start // STRIDE) * STRIDE
        position = index.checkpoints[split][start // STRIDE]
        texts: list[str] = []
        target: list[int] = []
        block, held = -1, None
        rows = _Rows(spec, path, need_label=True)
        for row in rows.read(position):
            if row.problem is not None:
                continue
            if single:
                if row.row // SPLIT_BLOCK != block:
                    block = row.row // SPLIT_BLOCK
                    held = _test_rows(spec.seed, block, spec.test_share)
                if (split == "test") != bool(held[row.row % SPLIT_BLOCK]):
                    continue
            if k >= start:
                texts.append(row.text)
                target.append(code[row.label])
                if len(texts) == chunk_size:
                    yield Dataset(texts, np.asarray(target, dtype=np.int64), list(names), name, split, dict(info))
                    texts, target = [], []
            k += 1
            if k >= stop:
                break
        if k < stop:
            raise DataError(f"{_name(path)} changed while it was read ({k} of {stop} rows); read it again")
        if texts:
            yield Dataset(texts, np.asarray(target, dtype=np.int64), list(names), name, split, dict(info))

    def load(self, task: str | None = None, split: str = "train", *, download: bool = True,
             **options) -> Dataset:
        """The whole ``split`` in memory (``download`` is accepted and ignored: local files)."""
        spec, index = self._spec(task, split)
        n = index.sizes[split]
        if n > MAX_MATERIALISED:
            raise InputError(f"{self.fmt}:{task} has {n:,} {split} rows, more than the {MAX_MATERIALISED:,} "
                             "read into memory at once; train with --stream (or --shards) to read it in chunks")
        (data,) = self._chunks(task, split, 0, n, n)
        data.info.update({"rows": n, "test_share": None if spec.test else spec.test_share, "seed": spec.seed})
        return data


CSV, TSV, JSONL, PARQUET = (TableCorpus(fmt) for fmt in FORMATS)
