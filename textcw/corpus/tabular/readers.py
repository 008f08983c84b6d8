"""The rows of one table file, format by format: the CSV and TSV reader (the ``csv`` module's C
parser over blocks of lines), the JSON-lines reader and the Parquet reader (pyarrow, the
``parquet`` extra). Each finds the text and label columns, then yields a :class:`Row` per row
from any :class:`~textcw.corpus.tabular.files.Position`, a bad row included with what is wrong
with it (:mod:`textcw.corpus.tabular`: "A bad row ...").
"""

from __future__ import annotations

import csv
import itertools
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field

from textcw.corpus.tabular import limits, parquet
from textcw.corpus.tabular.files import Position, _Lines, _name, _open
from textcw.corpus.labels import DuplicateKey, LabelCheck, check_label, no_duplicate_keys
from textcw.corpus.tabular.multilabel import MultiLabelCheck
from textcw.corpus.tabular.spec import TableSpec
from textcw.errors import DataError, InputError, SpecError
from textcw.untrusted import safe_text

__all__ = ["Row", "read_rows"]

# The csv module's limit is process-wide; it is only ever raised, to MAX_FIELD.
csv.field_size_limit(max(csv.field_size_limit(), limits.MAX_FIELD))


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


@dataclass
class _Layout:
    """The columns of a table: the names, and where the text and label are."""

    names: list[str]
    text: list = field(default_factory=list)  # indices (CSV) or keys
    label: object = None  # index or key; None when labels are not needed and absent


def _missing_column(spec: TableSpec, path: str, column: str, names: list[str], what: str) -> SpecError:
    """A column the spec names that the file does not have: a mistake in what was typed (exit 2)."""
    shown = ", ".join(repr(n) for n in names[:20]) + (", ..." if len(names) > 20 else "")
    where = f"{_name(path)} has no column {column!r} (its columns: {shown or 'none'})"
    delimiter = _header_delimiter(spec, names)
    if delimiter is not None:
        used = _DELIMITER_NAMES.get(spec.delimiter, repr(spec.delimiter))
        return SpecError(f"{where}: its header is split by {_DELIMITER_NAMES[delimiter]}, not by {used}; "
                         f"read it with {_with_delimiter(spec, delimiter)}")
    option = "text" if what == "text" else "label"
    return SpecError(f"{where}; name the {what} column: {spec.example(**{option: 'COLUMN'})}")


# The delimiters a header row is tried with when the columns asked for are not in it.
_DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "bars"}


def _header_delimiter(spec: TableSpec, names: list[str]) -> str | None:
    """The delimiter the header row of a CSV or TSV file seems to be written with, when it is not
    the one it was read with: a header "text;label" read with commas is one column named
    'text;label', and the hint "name the text column" would send the user the wrong way. The
    header is split again by each usual delimiter; one that finds the columns asked for wins,
    else, when the header read as one column, the one that finds the most columns (a name
    holding a "|" in a header of several columns is only a name)."""
    if spec.fmt not in ("csv", "tsv") or not spec.header:
        return None
    header = spec.delimiter.join(names)  # the header row as written, but for its quotes
    wanted = {*spec.text, spec.label}
    best, best_key = None, (False, 1)
    for delimiter in _DELIMITER_NAMES:
        if delimiter == spec.delimiter or delimiter not in header:
            continue
        columns = [c.strip() for c in next(csv.reader([header], delimiter=delimiter))]
        key = (wanted <= set(columns), len(columns))
        if (key[0] or len(names) == 1) and key > best_key:
            best, best_key = delimiter, key
    return best


def _with_delimiter(spec: TableSpec, delimiter: str) -> str:
    """The task of ``spec`` read with ``delimiter``: ``csv:`` for commas, ``tsv:`` for tabs, else
    ``csv:...?delimiter=X``, with the text and label columns it names kept."""
    fmt = {",": "csv", "\t": "tsv"}.get(delimiter, "csv")
    options = {"delimiter": delimiter} if fmt == "csv" and delimiter != "," else {}
    if spec.text != ("text",):
        options["text"] = ",".join(spec.text)
    if spec.label != "label":
        options["label"] = spec.label
    if spec.encoding != "utf-8":
        options["encoding"] = spec.encoding
    return TableSpec(fmt, spec.train, spec.test).example(**options).rstrip("?")


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


# The label check of one cell, for the compiled scanner (textcw.corpus._table_scan): CSV labels
# are text, so the kind of a label (textcw.corpus.labels) never changes there.
_check_label = check_label


class _Reader:
    """The rows of one file from a position: ``rows()`` yields :class:`Row`;
    ``position(row)`` is where the next row starts."""

    def __init__(self, spec: TableSpec, path: str, need_label: bool = True, once: bool = False,
                 labels: LabelCheck | None = None):
        self.spec, self.path, self.need_label, self.once = spec, path, need_label, once
        self.name = _name(path)
        self.check_label = labels if labels is not None else LabelCheck()
        if spec.multilabel:  # several labels a cell (textcw.corpus.tabular.multilabel)
            self.check_label = MultiLabelCheck(self.check_label, spec.label_sep, lists=spec.fmt == "jsonl")

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
    """The csv module's reading of a file's lines. One empty line is fed after the last: a blank
    line (no record) to the csv module, unless the file ended inside a quoted field, where the
    csv module (not strict) would end the field, and the row, at the end of the file without a
    word: the rows after an unclosed quote would be lost. A record that takes in that empty line
    is therefore an error, naming the line where the quote opened (:meth:`_unclosed`)."""

    def _reader(self, position: Position):
        self.close()
        self.fh = self.open()
        self.lines = _Lines(self.fh, position, self.spec.encoding, self.name)
        self.ended = False
        self.csv = csv.reader(itertools.chain(self.lines, self._end()), delimiter=self.spec.delimiter)
        self.base_line, self.row = position.line, position.row

    def _end(self) -> Iterator[str]:
        self.ended = True
        yield ""

    def _unclosed(self, fields: list[str], first: int, last: int) -> DataError:
        """The error of a record starting on line ``first`` that took in every line up to the
        last, ``last``: its last field opened a quote that is never closed."""
        opened = first + sum(f.count("\n") + f.count("\r") - f.count("\r\n") for f in fields[:-1])
        taken = last - opened + 1
        return DataError(f"{self.name} line {opened}: the quote opening a field on line {opened} is never closed, so "
                         f"the {taken:,} line{'s' if taken != 1 else ''} from there to the end of the file would be "
                         f"one field and their rows lost; close the quote (a quote inside a quoted field is "
                         f"written twice: \"\")")

    def _next(self):
        try:
            fields = next(self.csv)
        except csv.Error as exc:
            raise DataError(f"{self.name} line {self.base_line + self.csv.line_num - 1}: {exc}; is it a "
                            f"{self.spec.fmt.upper()} file{' with delimiter ' + repr(self.spec.delimiter) if self.spec.fmt == 'csv' else ''}?") from None
        if self.ended and fields:
            raise self._unclosed(fields, self.base_line, self.base_line + self.csv.line_num - 2)
        return fields

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
        check_label = self.check_label
        try:
            for fields in itertools.chain(pending, csv_reader):
                last_line = base + csv_reader.line_num if not pending or fields is not pending[0] else 1
                if not fields:  # a blank line: no row
                    first_line = last_line + 1
                    continue
                if self.ended:
                    raise self._unclosed(fields, first_line, last_line - 1)
                problem = lines.problem(first_line, last_line) if lines.bad else None
                label = None
                if problem is None and len(fields) != n:
                    problem = f"{len(fields)} fields where the header has {n}" if self.spec.header else \
                        f"{len(fields)} fields where the first row has {n}"
                if problem is None:
                    text = fields[text_at[0]] if single else " ".join(fields[k] for k in text_at)
                    if label_at is not None:
                        label, problem = check_label(fields[label_at], lambda: f"{self.name} line {first_line}")
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
        need_label, check_label = self.need_label, self.check_label
        try:
            for line_no, text_line in enumerate(lines, start=position.line):
                self.last_line = line_no
                if not text_line.strip():
                    continue
                problem = lines.problem(line_no, line_no) if lines.bad else None
                obj, text, label = None, "", None
                if problem is None:
                    try:
                        obj = json.loads(text_line, object_pairs_hook=no_duplicate_keys)
                    except DuplicateKey as exc:
                        problem = (f"the key {safe_text(repr(exc.args[0]), limit=40)} appears twice in one object, "
                                   "so which value is meant is unknown")
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
                        label, problem = check_label(obj[layout.label], lambda: f"{self.name} line {line_no}")
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
    """The rows of a Parquet file, decoded within the bounds of :mod:`textcw.corpus.tabular.parquet`."""

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
        layout = _layout(self.spec, self.path, names, self.need_label)
        parquet.check_columns(pf.schema_arrow, self._columns(layout), self.name)
        return layout, Position(0, 1, 0)

    @staticmethod
    def _columns(layout: _Layout) -> list[str]:
        return list(dict.fromkeys([*layout.text, *([layout.label] if layout.label is not None else [])]))

    def rows(self, layout: _Layout, position: Position) -> Iterator[Row]:
        pf = self._file()
        columns = self._columns(layout)
        first, row, shared = 0, 0, {}
        scan = self.open()  # the page headers are read apart from pyarrow's reading
        try:
            for group in range(pf.metadata.num_row_groups):
                size = pf.metadata.row_group(group).num_rows
                if first + size <= position.row:
                    first += size
                    continue
                row = first
                for batch in parquet.bounded_batches(pf, scan, group, columns, self.name):
                    data = parquet.columns_of(batch, columns, row, self.name, shared)
                    for k in range(batch.num_rows):
                        if row >= position.row:
                            yield self._row(layout, data, k, row)
                        row += 1
                first += size
        finally:
            scan.close()
            self.close()

    def _row(self, layout: _Layout, data: dict, k: int, row: int) -> Row:
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
            label, problem = self.check_label(raw[layout.label], lambda: f"{self.name} row {row + 1}")
        return Row(row + 1, row, parts[0] if len(parts) == 1 else " ".join(parts), label, raw, problem)


_READERS = {"csv": _CsvReader, "tsv": _CsvReader, "jsonl": _JsonlReader, "parquet": _ParquetReader}


class _Rows:
    """The rows of a file from a position, and where the row after the last one read starts."""

    def __init__(self, spec: TableSpec, path: str, need_label: bool = True, once: bool = False,
                 labels: LabelCheck | None = None):
        self.reader = _READERS[spec.fmt](spec, path, need_label, once, labels)
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
