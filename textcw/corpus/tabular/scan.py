"""The first pass over a CSV or TSV file from the compiled scanner's records.

:func:`index_csv` tells the row counts of :mod:`textcw.corpus.tabular.index` what
:func:`textcw.corpus._table_scan.scan_file` found (row boundaries, fields per row, label bytes),
and leaves to the csv module (:class:`~textcw.corpus.tabular.readers._CsvReader`) every record
the scanner cannot vouch for, so that every answer and error is the csv module's. The scanner
itself reads bytes only and imports nothing of this package; this driver, which needs the
package's readers, limits and label check, is a part of it (importing the package from the
scanner made an import circle through the package's ``__init__``). Importing this module
starts numba: :mod:`~textcw.corpus.tabular.index` imports it only for a file of
``SCAN_MIN_BYTES`` or more.
"""

from __future__ import annotations

import codecs
import io

import numpy as np

from textcw import _limits
from textcw.corpus import _table_scan
from textcw.corpus.tabular import limits
from textcw.corpus.tabular.files import Position, _open
from textcw.corpus.tabular.readers import _check_label, _CsvReader
from textcw.corpus.tabular.spec import TableSpec

__all__ = ["Window", "WindowReader", "index_csv"]


class Window(io.BytesIO):
    """Bytes of a file read from byte ``offset``, sought by the file's offsets."""

    def __init__(self, data: bytes | bytearray, offset: int):
        super().__init__(data)
        self.offset = offset

    def seek(self, pos: int, whence: int = 0) -> int:
        return super().seek(pos - self.offset if whence == 0 else pos, whence)


class WindowReader(_CsvReader):
    """The csv module's reading of bytes already read (a :class:`Window`)."""

    def __init__(self, spec: TableSpec, path: str, window: Window):
        super().__init__(spec, path)
        self.window = window

    def open(self):
        return self.window


def index_csv(counts, rows) -> bool:
    """Tell ``counts`` (``tabular.index._Counts``) the rows of ``rows`` (``tabular.readers._Rows``
    of a CSV or TSV file) from :func:`~textcw.corpus._table_scan.scan_file`'s records; what they
    cannot vouch for is read by the csv module (the rows of a batch not in the encoding, a record with a wrong number of
    fields or a label to unquote or refuse; the rest of the file after a field or line over the
    limit), so that every answer and error is the csv module's. ``False`` (nothing read) if the scanner
    does not read this delimiter and encoding."""
    spec, layout, start = counts.spec, rows.layout, rows.start
    if not _table_scan.usable(spec.delimiter, spec.encoding):
        return False
    known: dict[bytes, str] = {}  # label bytes -> label, for up to MAX_LABELS + 1 good labels
    ncols = len(layout.names)
    fh = _open(rows.reader.path)
    try:
        bom = start.offset == 0 and spec.encoding == "utf-8" and fh.read(3) == codecs.BOM_UTF8
        row_no = 0
        for batch in _table_scan.scan_file(fh, start.offset, start.line, delimiter=spec.delimiter, label_col=layout.label,
                               max_field=limits.MAX_FIELD, skip=3 if bom else 0):
            if isinstance(batch, _table_scan.Fallback):
                for row in rows.read(Position(batch.offset, batch.line, row_no)):
                    counts.row(row, rows.position_after)
                break
            row_no = _count_batch(counts, rows, batch, row_no, ncols, known)
    finally:
        fh.close()
    return True


def _value_labels(values: list[bytes], known: dict, encoding: str) -> tuple[dict[int, str], list[int]]:
    """``(labels, refused)`` of the distinct label cells ``values``: the label of each value that is
    one, by position, and the positions of those that are not. ``known`` (value -> label) saves
    checking a value seen before and learns the new ones, up to :data:`_limits.MAX_LABELS`."""
    labels, refused = {}, []
    for k, value in enumerate(values):
        label = known.get(value)
        if label is None:
            label, problem = _check_label(value.decode(encoding))
            if problem is not None:
                refused.append(k)
                continue
            if len(known) <= _limits.MAX_LABELS:
                known[value] = label
        labels[k] = label
    return labels, refused


def _count_batch(counts, rows, batch: _table_scan.Batch, first: int, ncols: int, known: dict) -> int:
    """Count the records of ``batch``, rows ``first, ...``; the next row's number."""
    spec, data, n = counts.spec, batch.data, len(batch.ends)
    begins = np.concatenate([[batch.start], batch.ends[:-1]])  # where each record's reading starts
    ends, lines = batch.offset + batch.ends, batch.line + batch.end_lines

    def slow(j: int, stop: int) -> None:  # records j..stop - 1 read by the csv module
        window = Window(data[begins[j]:batch.ends[stop - 1]], batch.offset + int(begins[j]))
        reader = WindowReader(spec, rows.reader.path, window)
        line = batch.line + (int(batch.end_lines[j - 1]) if j else 0)
        for row in reader.rows(rows.layout, Position(window.offset, line, first + j)):
            counts.row(row, lambda row: reader.lines.position_of(reader.base_line + reader.csv.line_num,
                                                                 row.row + 1))
        counts.position = Position(int(ends[stop - 1]), int(lines[stop - 1]), first + stop)

    if spec.encoding == "utf-8" and not data.isascii() and not data[batch.start:batch.ends[-1]].isascii():
        try:  # (the whole buffer is checked first: no copy)
            data[batch.start:batch.ends[-1]].decode("utf-8")
        except UnicodeDecodeError:
            slow(0, n)
            return first + n
    _, first_of, group = np.unique(batch.label_hash, return_index=True, return_inverse=True)
    if not _table_scan.same_labels(batch.view, batch.label_from, batch.label_to, first_of[group]):
        slow(0, n)  # two labels of one hash: let the csv module read them
        return first + n
    values = [bytes(data[batch.label_from[k]:batch.label_to[k]]) for k in first_of.tolist()]
    labels, refused = _value_labels(values, known, spec.encoding)
    good = (batch.fields_of == ncols) & (batch.flags == 0)
    if refused:
        good &= ~np.isin(group, refused)
    j = 0
    for bad in [*np.flatnonzero(~good).tolist(), n]:
        if bad > j:
            counts.run(first + j, ends[j:bad], lines[j:bad])
            new = {labels[k] for k in np.unique(group[j:bad]).tolist()}
            if not new <= counts.labels:
                counts.add_labels(new)
        if bad < n:
            slow(bad, bad + 1)
        j = bad + 1
    return first + n
