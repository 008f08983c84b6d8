"""Reading a Parquet file's columns within the bounds a CSV file is read by.

Why: Parquet is compressed, page by page, and a page is decompressed whole before any value in
it can be seen; pyarrow allocates what a page header asks for. A 31 KB file can hold a page of
a gigabyte of one repeated byte, and a dictionary-encoded column can repeat one long value in
every row for a few bits a row. So nothing is decoded before it is bounded, in this order:

1. :func:`check_columns`: the text and label columns are of scalar types (a list or struct
   column holds no text, and its elements are not bounded by the row count).
2. :func:`scan_pages`: the header of every page of the column chunks to be read is parsed here
   (Thrift's compact protocol, :class:`_Thrift`) from the chunk's place in the footer
   (``data_page_offset``, ``dictionary_page_offset``, ``total_compressed_size``), before pyarrow
   reads the chunk: a page larger once uncompressed than its values may be (``MAX_FIELD``
   bytes each) or than ``limits.MAX_PAGE``, or a header that does not parse or overruns its
   chunk, is an error naming the row group and the column. (pyarrow writes up to 1,024 values a
   page, so a legitimate page of long texts can be far over its 1 MB default.)
3. :func:`batch_rows`: every value of a chunk lies within one page (a dictionary-encoded value
   within the dictionary page), so a chunk's largest page bounds its values, and the rows
   pyarrow decodes at once are as many as fit in ``limits.MAX_BATCH_BYTES`` (at least one, at
   most ``limits.CHUNK``).
4. :func:`columns_of`: the byte length of every text value of a batch is measured with
   ``pyarrow.compute`` before it becomes a Python object: one over ``MAX_FIELD`` is an error,
   as for a CSV field; repeated long values become one Python object (:class:`_Shared`), so a
   repeated dictionary value costs a reference a row, as it costs a few bits in the file.

Damaged pages found by pyarrow itself end in a one-line :class:`~textcw.errors.DataError` too.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from textcw.corpus.tabular import limits
from textcw.errors import DataError
from textcw.untrusted import safe_text

__all__ = ["MAX_HEADER", "batch_rows", "bounded_batches", "check_columns", "columns_of", "scan_pages", "value_bound"]

MAX_HEADER = 2**20  # a page header's bytes (it holds a few numbers, and statistics of a few kB)
_PAGE_SLACK = 2**16  # a page's bytes besides its values' (levels, lengths), in the bound of a page
_SHARE_FROM = 4096  # values of this many characters or more are shared when repeated
_DICTIONARY_PAGE, _DICTIONARY_ENCODINGS = 2, (2, 8)  # PLAIN_DICTIONARY, RLE_DICTIONARY


def check_columns(schema, columns: list[str], name: str) -> None:
    """Refuse a text or label column of nested values (lists, structs, maps, unions), or a name
    that two columns have."""
    import pyarrow as pa

    for column in columns:
        if len(schema.get_all_field_indices(column)) != 1:
            raise DataError(f"{name} has {len(schema.get_all_field_indices(column))} columns named {column!r}; "
                            "which one is meant cannot be told: give the columns distinct names")
        kind = _plain_type(schema.field(column).type)
        if pa.types.is_nested(kind):
            raise DataError(f"{name}: column {column!r} holds {safe_text(kind, limit=80)} values, not text or "
                            "labels; name another column (text=COLUMN, label=COLUMN)")


class _Short(Exception):
    """The bytes read so far end inside a page header."""


class _Thrift:
    """Just enough of Thrift's compact protocol to read a page header's numbers and skip the
    rest (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md)."""

    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def byte(self) -> int:
        if self.at >= len(self.data):
            raise _Short
        self.at += 1
        return self.data[self.at - 1]

    def varint(self) -> int:
        value = shift = 0
        while True:
            b = self.byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ValueError("a number of more than 64 bits")

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def skip(self, kind: int, depth: int = 0) -> None:
        if depth > 16:
            raise ValueError("values nested too deeply")
        if kind in (1, 2):  # booleans: in the type
            return
        if kind == 3:
            self.byte()
        elif kind in (4, 5, 6):
            self.varint()
        elif kind in (7, 8):
            size = 8 if kind == 7 else self.varint()
            if self.at + size > len(self.data):
                raise _Short
            self.at += size
        elif kind in (9, 10):
            head = self.byte()
            size = head >> 4 if head >> 4 != 15 else self.varint()
            for _ in range(size):
                self.skip(head & 0x0F if head & 0x0F not in (1, 2) else 3, depth + 1)
        elif kind == 11:
            size = self.varint()
            if size:
                types = self.byte()
                for _ in range(size):
                    self.skip(types >> 4 if types >> 4 not in (1, 2) else 3, depth + 1)
                    self.skip(types & 0x0F if types & 0x0F not in (1, 2) else 3, depth + 1)
        elif kind == 12:
            self.struct(depth + 1)
        else:
            raise ValueError(f"unknown field type {kind}")

    def struct(self, depth: int = 0, want: dict | None = None) -> dict:
        """The fields of a struct: the integer fields in ``want`` (id -> name; nested structs
        as (id, sub-want)), the rest skipped."""
        found, last = {}, 0
        while True:
            head = self.byte()
            if head == 0:
                return found
            kind = head & 0x0F
            last = last + (head >> 4) if head >> 4 else self.zigzag()
            target = (want or {}).get(last)
            if isinstance(target, str) and kind in (4, 5, 6):
                found[target] = self.zigzag()
            elif isinstance(target, dict) and kind == 12:
                found.update(self.struct(depth + 1, target))
            else:
                self.skip(kind, depth)


# PageHeader: type, sizes, and each kind of page's header for its value count and encoding
_PAGE = {1: "type", 2: "uncompressed", 3: "compressed", 5: {1: "values", 2: "encoding"},
         7: {1: "values", 2: "encoding"}, 8: {1: "values", 4: "encoding"}}


def _chunk_range(chunk) -> tuple[int, int]:
    """Where a column chunk's pages lie, as the reader finds them (Arrow's rule: the dictionary
    page, when there is one and it comes first, else the first data page)."""
    start = chunk.data_page_offset
    dictionary = chunk.dictionary_page_offset
    if chunk.has_dictionary_page and dictionary is not None and 0 < dictionary < start:
        start = dictionary
    return start, start + chunk.total_compressed_size


def scan_pages(fh, chunk, where: str) -> list[dict]:
    """The headers of the pages of column chunk ``chunk`` (``ColumnChunkMetaData``) of the
    binary file ``fh``, each checked (module docstring, 2); ``where`` names the chunk."""
    start, end = _chunk_range(chunk)
    if start < 0 or end < start:
        raise DataError(f"{where}: the footer gives the column chunk an impossible place; the file is damaged")
    pages, at = [], start
    while at < end:
        want = min(4096, end - at)
        while True:
            fh.seek(at)
            data = fh.read(want)
            try:
                reader = _Thrift(data)
                page = reader.struct(want=_PAGE)
                break
            except _Short:
                if len(data) < want or want >= min(MAX_HEADER, end - at):
                    raise DataError(f"{where}: a page header at byte {at:,} is cut short; the file is damaged "
                                    "or truncated") from None
                want = min(4 * want, MAX_HEADER, end - at)
            except (ValueError, RecursionError) as exc:
                raise DataError(f"{where}: the page header at byte {at:,} is damaged ({exc})") from None
        size, packed = page.get("uncompressed", -1), page.get("compressed", -1)
        if size < 0 or packed < 0 or "type" not in page:
            raise DataError(f"{where}: the page header at byte {at:,} is damaged (no page type or size)")
        most = min(limits.MAX_PAGE, max(1, page.get("values", 1)) * (limits.MAX_FIELD + 4) + _PAGE_SLACK)
        if size > most:
            raise DataError(f"{where}: a page of {size:,} bytes once uncompressed, more than the {most:,} it may have "
                            f"({page.get('values', 1):,} values of at most {limits.MAX_FIELD:,} bytes, no page over "
                            f"{limits.MAX_PAGE:,}: a page is decompressed whole); the file is damaged or hostile, or "
                            "write it with smaller pages")
        at += reader.at + packed
        if at > end:
            raise DataError(f"{where}: a page runs past the end of its column chunk; the file is damaged")
        pages.append(page)
    return pages


def _plain_type(kind):
    """The type of the values of an Arrow type: an extension type's storage, a dictionary's values."""
    import pyarrow as pa

    kind = getattr(kind, "storage_type", kind)
    return kind.value_type if pa.types.is_dictionary(kind) else kind


def _is_text(kind) -> bool:
    """Whether values of Arrow type ``kind`` have a length of their own (text, bytes)."""
    import pyarrow as pa

    kind = _plain_type(kind)
    return any(test(kind) for test in (pa.types.is_string, pa.types.is_large_string, pa.types.is_binary,
                                       pa.types.is_large_binary, pa.types.is_fixed_size_binary,
                                       pa.types.is_string_view, pa.types.is_binary_view))


def value_bound(kind, pages: list[dict]) -> int:
    """The most bytes one value of a column chunk of Arrow type ``kind`` can take once decoded."""
    if not _is_text(kind):
        try:
            return max(1, _plain_type(kind).bit_width // 8)
        except ValueError:  # no fixed width (null values): bounded by the pages below
            pass
    dictionary = max((p["uncompressed"] for p in pages if p["type"] == _DICTIONARY_PAGE), default=0)
    bound = 0
    for page in pages:
        if page["type"] != _DICTIONARY_PAGE:
            bound = max(bound, dictionary if page.get("encoding") in _DICTIONARY_ENCODINGS else page["uncompressed"])
    return bound


def batch_rows(bounds: list[int]) -> int:
    """Rows decoded at once when one row's values take at most ``sum(bounds)`` bytes."""
    return int(min(limits.CHUNK, max(1, limits.MAX_BATCH_BYTES // max(1, sum(bounds)))))


class _Shared:
    """One Python object per distinct long value of a column (a dictionary-encoded value repeated
    in every row stays one string), bounded: past ``limits.MAX_LINE`` characters it starts afresh."""

    def __init__(self):
        self.values: dict = {}
        self.size = 0

    def __call__(self, values: list) -> list:
        out = []
        for value in values:
            if isinstance(value, (str, bytes)) and len(value) >= _SHARE_FROM:
                kept = self.values.get(value)
                if kept is None:
                    if self.size + len(value) > limits.MAX_LINE:
                        self.values, self.size = {}, 0
                    self.values[value] = kept = value
                    self.size += len(value)
                value = kept
            out.append(value)
        return out


def columns_of(batch, columns: list[str], first_row: int, name: str, shared: dict) -> dict[str, list]:
    """The values of ``columns`` of a record batch as Python lists, after checking every text
    value's byte length (module docstring, 4); ``first_row`` is the batch's first row number."""
    import pyarrow as pa
    import pyarrow.compute as pc

    data = {}
    for column in columns:
        array = batch.column(column)
        array = getattr(array, "storage", array)  # an extension type's values
        values = array.dictionary if pa.types.is_dictionary(array.type) else array
        if _is_text(values.type) and len(values):
            if pa.types.is_string_view(values.type) or pa.types.is_binary_view(values.type):
                values = values.cast(pa.large_binary())
            lengths = pc.binary_length(values)
            longest = pc.max(lengths).as_py() or 0
            if longest > limits.MAX_FIELD:
                over = pc.greater(lengths, limits.MAX_FIELD)
                if values is not array:  # a dictionary: the first row using a long value
                    over = pc.take(over, array.indices)
                row = first_row + int(np.flatnonzero(over.fill_null(False).to_numpy(zero_copy_only=False))[0])
                raise DataError(f"{name} row {row + 1}: the {column!r} value has {longest:,} bytes, more than the "
                                f"{limits.MAX_FIELD:,} a value may have; is {column!r} a column of text?")
        try:
            values = array.to_pylist()
        except UnicodeDecodeError:  # a text column (not bytes) holding bytes that are not UTF-8
            raise DataError(f"{name} row {first_row + _first_not_utf8(array) + 1}: the {column!r} value is not "
                            "UTF-8 text, as its column's type says; the file is damaged") from None
        data[column] = shared.setdefault(column, _Shared())(values)
    return data


def _first_not_utf8(array) -> int:
    """The index of the first value of a text array whose bytes are not UTF-8."""
    import pyarrow as pa

    array = array.dictionary.take(array.indices) if pa.types.is_dictionary(array.type) else array
    for k, value in enumerate(array.cast(pa.large_binary()).to_pylist()):
        try:
            value is None or value.decode("utf-8")
        except UnicodeDecodeError:
            return k
    return 0


def bounded_batches(pf, fh, group: int, columns: list[str], name: str) -> Iterator:
    """The record batches of row group ``group`` of ``pf`` (a ``pyarrow.parquet.ParquetFile`` of
    the binary file ``fh``), read in bounded batches once every page of ``columns`` was checked."""
    meta = pf.metadata.row_group(group)
    chunks = {meta.column(k).path_in_schema: meta.column(k) for k in range(meta.num_columns)}
    bounds = []
    for column in columns:
        chunk = chunks.get(column)
        if chunk is None:
            raise DataError(f"{name}: row group {group} has no column chunk {column!r}; the file is damaged")
        pages = scan_pages(fh, chunk, f"{name} row group {group}, column {column!r}")
        bounds.append(value_bound(pf.schema_arrow.field(column).type, pages))
    try:
        yield from pf.iter_batches(batch_size=batch_rows(bounds), row_groups=[group], columns=columns,
                                   use_threads=False)
    except Exception as exc:  # pyarrow's errors: ArrowInvalid, OSError, ArrowMemoryError ...
        raise DataError(f"{name} row group {group} is damaged ({type(exc).__name__}: "
                        f"{safe_text(' '.join(str(exc).split()), limit=200)})") from None
