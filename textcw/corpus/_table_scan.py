"""The first pass over a CSV or TSV file without parsing its rows into Python objects.

Why it exists: before a table can be streamed (``--stream``, ``--shards``), a first pass must
learn how many rows each split has, the set of labels, which rows are bad, and where every
STRIDE-th row of a split starts (:mod:`textcw.corpus.tabular.index`). Done with the ``csv`` module,
that pass builds a list of every field of every row and costs about as much as reading the
rows for training (9 s of CPU for a 1 GB file of 10**6 rows). Yet it needs only the row
boundaries, the number of fields of each row and the bytes of its label field. :func:`scan_records` finds these with a byte-level twin of the
``csv`` module's parser (``Modules/_csv.c``: the default dialect, ``"`` quotes, doubled quotes,
not strict) over large blocks of the raw file, in compiled code.

What it measures, per record (a row, or a bad row; blank lines are not records): where it ends
(the byte after its line break) and on which line, its number of fields, and where its label's
text lies (equal labels are grouped by a hash, then compared byte for byte: a hash is never
trusted). The first pass's driver, :func:`textcw.corpus.tabular.scan.index_csv`, counts the
records; it leaves a record to the ``csv`` module itself whenever they cannot vouch for the
answer: a wrong number of fields, a label with escaped quotes or text after its closing quote, a quote never closed (an error), bytes that are not in
the encoding, a label that :func:`~textcw.corpus.tabular.readers._check_label` refuses. When a
field or line is longer than ``MAX_FIELD`` bytes, or a record does not fit in
:data:`MAX_BUFFER` bytes, the rest of the file is read by the ``csv`` module, so its errors (a
field over the limit, a line too long) stay exactly what they are. Both encodings read (UTF-8
and Latin-1) keep ASCII bytes as they are, so the delimiter, the quote and the line breaks can
be found in the bytes (the delimiter must then be ASCII; :func:`usable` says when this scanner
applies). This module reads bytes only and imports nothing of :mod:`textcw.corpus.tabular`,
whose driver imports it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from textcw._jit import kernel

__all__ = ["MAX_BUFFER", "READ_BYTES", "Batch", "Fallback", "same_labels", "scan_file", "scan_records", "skip_text",
           "usable"]

READ_BYTES = 8 * 2**20  # the file is read in blocks of this size
MAX_BUFFER = 64 * 2**20  # the most held at once; a longer record, and the rest, go to the csv module
MAX_RECORDS = 2**16  # records per call of scan_records: its output arrays are bounded

# scan_records' status; scan_record's and in_quotes' also GOES_ON: the record goes on in the next block
OK, TOO_LONG, GOES_ON = 0, 1, 2
# states of the csv module's parser (Modules/_csv.c), those reachable with its default dialect
START_FIELD, IN_FIELD, IN_QUOTED_FIELD, QUOTE_IN_QUOTED_FIELD = 0, 1, 2, 3
QUOTE, CR, LF = 34, 13, 10
COMPLEX_LABEL = 1  # the label field needs the csv module to be unquoted
UNCLOSED = 2  # the file ends inside a quoted field: the csv module's reader says so (an error)


def usable(delimiter: str, encoding: str) -> bool:
    """Whether :func:`scan_records` reads a file of this delimiter and encoding."""
    return len(delimiter) == 1 and ord(delimiter) < 128 and encoding in ("utf-8", "latin-1")


def stop_tables(delimiter: str) -> np.ndarray:
    """``tables[0][c]``: byte ``c`` ends a run of plain text in an unquoted field (the delimiter,
    a line break); ``tables[1][c]``: in a quoted field (a quote, a line break)."""
    tables = np.zeros((2, 256), np.bool_)
    tables[0, [ord(delimiter), CR, LF]] = True
    tables[1, [QUOTE, CR, LF]] = True
    return tables


ONES, HIGHS = np.uint64(0x0101010101010101), np.uint64(0x8080808080808080)


@kernel
def skip_text(data, words, i, n, table, a, b, c):
    """The first index from ``i`` whose byte is marked in ``table`` (``n`` if none): bytes
    ``a``, ``b`` and ``c`` (repeated in each byte of a word). Eight bytes at a time where
    ``words`` (``data`` as 64-bit words) allows: a word holds one of them when ``word ^ a`` has
    a zero byte, told by ``(x - 0x01..01) & ~x & 0x80..80`` (Hacker's Delight, 6-1)."""
    while i < n and i & 7:
        if table[data[i]]:
            return i
        i += 1
    k, whole = i >> 3, words.shape[0]
    while k < whole:
        w = words[k]
        x, y, z = w ^ a, w ^ b, w ^ c
        if (((x - ONES) & ~x) | ((y - ONES) & ~y) | ((z - ONES) & ~z)) & HIGHS:
            break
        k += 1
    i = max(i, k << 3)
    while i < n and not table[data[i]]:
        i += 1
    return i


@kernel
def scan_records(data, words, pos, final, delimiter, tables, label_col, max_field, ends, end_lines, fields_of,
                 label_from, label_to, label_hash, flags):
    """Records of ``data[pos:]`` as the csv module would split them (module docstring).

    Fills, for record ``k``: ``ends[k]`` (the index after its line break), ``end_lines[k]`` (lines
    ended from ``pos`` up to there), ``fields_of[k]``, ``label_from[k]:label_to[k]`` (the label's
    text, quotes removed; empty if the record has no field ``label_col``), ``label_hash[k]``
    (FNV-1a of that text, to group equal labels) and ``flags[k]`` (:data:`COMPLEX_LABEL`,
    :data:`UNCLOSED`: left to the csv module, which reports it).
    ``words``: ``data`` as 64-bit words (:func:`skip_text`); ``tables``: :func:`stop_tables`. Stops at ``len(ends)`` records, or at the last complete
    record unless ``final`` (``data`` then ends the file, and a last line without a line break
    or an unclosed quote ends the last record, as in the csv module, flagged :data:`UNCLOSED`).

    Returns ``(records, end, lines, status)``: the index and line count after the last record
    (blank lines after it included), and :data:`TOO_LONG` when a field or a line of more than
    ``max_field`` bytes was met (the records before it are returned).
    """
    n, cap = data.shape[0], ends.shape[0]
    # the stop bytes repeated in each byte of a word, for skip_text
    masks = (np.uint64(delimiter) * ONES, np.uint64(QUOTE) * ONES, np.uint64(CR) * ONES, np.uint64(LF) * ONES)
    records, lines, i = 0, 0, pos
    done, done_lines = pos, 0
    while records < cap and i < n:
        c = data[i]
        if c == CR or c == LF:  # a blank line: no record
            if c == CR and i + 1 == n and not final:
                break  # a \r\n may be split between this block and the next
            i = after_line_break(data, i, n)
            lines += 1
            done, done_lines = i, lines
            continue
        fate, i, ended, fields, lab_from, lab_to, flag = scan_record(data, words, i, final, delimiter, tables, masks,
                                                                     label_col, max_field)
        if fate == TOO_LONG:
            return records, done, done_lines, TOO_LONG
        if fate == GOES_ON:
            break  # the record goes on in the next block
        lines += ended
        lab_from, lab_to, label_flag = label_text(data, lab_from, lab_to)
        ends[records], end_lines[records], fields_of[records] = i, lines, fields
        label_from[records], label_to[records] = lab_from, lab_to
        label_hash[records] = fnv1a(data, lab_from, lab_to)
        flags[records] = flag | label_flag
        records += 1
        done, done_lines = i, lines
    return records, done, done_lines, OK


@kernel
def scan_record(data, words, i, final, delimiter, tables, masks, label_col, max_field):
    """The record that starts at ``data[i]`` (not a line break), as the csv module splits it:
    ``(fate, end, lines, fields, label_from, label_to, flag)``. ``fate`` is :data:`OK` (it ends at
    ``end``, after ``lines`` line breaks), :data:`GOES_ON` (it goes on in the next block) or
    :data:`TOO_LONG`; ``flag`` is :data:`UNCLOSED` for a last record that ends inside quotes.
    ``masks``: the delimiter, quote, CR and LF repeated in each byte of a word (:func:`skip_text`)."""
    n = data.shape[0]
    delimiters, quotes, crs, lfs = masks
    state, fields, lines = START_FIELD, 0, 0
    field_start = line_start = lab_from = lab_to = i
    while i < n:
        c = data[i]
        if state == IN_QUOTED_FIELD:
            fate, state, i, line_start, ended = in_quotes(data, words, i, final, tables[1], masks, line_start,
                                                          max_field)
            if fate != OK:
                return fate, i, lines, fields, lab_from, lab_to, 0
            lines += ended
            continue
        end_of_record = c == CR or c == LF
        if c == delimiter or end_of_record:
            if end_of_record and c == CR and i + 1 == n and not final:
                return GOES_ON, i, lines, fields, lab_from, lab_to, 0
            if i - field_start > max_field:
                return TOO_LONG, i, lines, fields, lab_from, lab_to, 0
            if fields == label_col:
                lab_from, lab_to = field_start, i
            fields += 1
            if end_of_record:
                i = after_line_break(data, i, n)
                return TOO_LONG if i - line_start > max_field else OK, i, lines + 1, fields, lab_from, lab_to, 0
            state = START_FIELD
            field_start = i + 1
            i += 1
            continue
        if state == START_FIELD or state == QUOTE_IN_QUOTED_FIELD:
            # a quote opens a field; after a closing quote, "" is a quote and anything
            # else goes on unquoted
            state = IN_QUOTED_FIELD if c == QUOTE else IN_FIELD
            i += 1
            if state == IN_QUOTED_FIELD:
                i = skip_text(data, words, i, n, tables[1], quotes, crs, lfs)
                continue
        else:
            i += 1
        i = skip_text(data, words, i, n, tables[0], delimiters, crs, lfs)  # the text of an unquoted field
    if not final:
        return GOES_ON, i, lines, fields, lab_from, lab_to, 0
    return at_end_of_file(n, i, state, lines, fields, field_start, line_start, lab_from, lab_to, label_col,
                          max_field)


@kernel
def at_end_of_file(n, i, state, lines, fields, field_start, line_start, lab_from, lab_to, label_col, max_field):
    """:func:`scan_record`'s answer when the end of the file ends the record (a last line without
    a line break, or an unclosed quote: flagged :data:`UNCLOSED`)."""
    if n - field_start > max_field or n - line_start > max_field:
        return TOO_LONG, i, lines, fields, lab_from, lab_to, 0
    if fields == label_col:
        lab_from, lab_to = field_start, n
    return (OK, i, lines + 1 if line_start < n else lines, fields + 1, lab_from, lab_to,
            UNCLOSED if state == IN_QUOTED_FIELD else 0)


@kernel
def in_quotes(data, words, i, final, quoted, masks, line_start, max_field):
    """Past the byte ``data[i]`` of a quoted field, and the plain text after it:
    ``(fate, state, i, line_start, lines)``. A quote may close the field; a line break is part of
    it and ends a line (``fate``: :data:`GOES_ON` when a ``\\r\\n`` may be split at the block's
    end, :data:`TOO_LONG` for a line of more than ``max_field`` bytes, else :data:`OK`)."""
    n = data.shape[0]
    c = data[i]
    state, lines = IN_QUOTED_FIELD, 0
    if c == QUOTE:
        state = QUOTE_IN_QUOTED_FIELD
    elif c == CR or c == LF:  # a line break inside quotes: part of the field
        if c == CR and i + 1 == n and not final:
            return GOES_ON, state, i, line_start, 0
        if c == CR and i + 1 < n and data[i + 1] == LF:
            i += 1
        if i + 1 - line_start > max_field:
            return TOO_LONG, state, i, line_start, 0
        lines = 1
        line_start = i + 1
    i += 1
    if state == IN_QUOTED_FIELD:  # the text of a quoted field
        i = skip_text(data, words, i, n, quoted, masks[1], masks[2], masks[3])
    return OK, state, i, line_start, lines


@kernel
def after_line_break(data, i, n):
    """The index after the line break at ``data[i]`` (``\\r\\n`` is one line break)."""
    return i + 2 if data[i] == CR and i + 1 < n and data[i + 1] == LF else i + 1


@kernel
def label_text(data, lab_from, lab_to):
    """``(from, to, flag)``: a quoted label's text between its quotes, or the field as it is
    with :data:`COMPLEX_LABEL` when another quote is in it (the csv module unquotes it)."""
    if lab_to > lab_from and data[lab_from] == QUOTE:
        # "label": the text between the quotes, if no other quote is in the field
        simple = lab_to - lab_from >= 2 and data[lab_to - 1] == QUOTE
        for k in range(lab_from + 1, lab_to - 1):
            if data[k] == QUOTE:
                simple = False
        if simple:
            return lab_from + 1, lab_to - 1, 0
        return lab_from, lab_to, COMPLEX_LABEL
    return lab_from, lab_to, 0


@kernel
def fnv1a(data, start, stop):
    """FNV-1a (64 bits) of ``data[start:stop]``: groups equal labels (which are then compared)."""
    h = np.uint64(14695981039346656037)
    for k in range(start, stop):
        h = (h ^ np.uint64(data[k])) * np.uint64(1099511628211)
    return h


@kernel
def same_labels(data, label_from, label_to, first):
    """Whether the label of every record ``k`` has the bytes of the label of record
    ``first[k]`` (equal hashes are checked, never trusted)."""
    for k in range(label_from.shape[0]):
        a, b = label_from[k], label_from[first[k]]
        size = label_to[k] - a
        if size != label_to[first[k]] - b:
            return False
        for m in range(size):
            if data[a + m] != data[b + m]:
                return False
    return True


@dataclass
class Batch:
    """Consecutive records of ``data``, whose byte 0 is at byte ``offset`` of the file: the
    first starts at ``data[start]`` (blank lines before it included), on line ``line``; the
    other fields are :func:`scan_records`' arrays (indices within ``data``, lines from ``line``)."""

    data: bytearray
    view: np.ndarray  # data as bytes
    offset: int
    line: int
    start: int
    ends: np.ndarray
    end_lines: np.ndarray
    fields_of: np.ndarray
    label_from: np.ndarray
    label_to: np.ndarray
    label_hash: np.ndarray
    flags: np.ndarray


@dataclass
class Fallback:
    """From byte ``offset`` (line ``line``) on, the file must be read by the csv module."""

    offset: int
    line: int


def scan_file(fh, offset: int, line: int, *, delimiter: str, label_col: int, max_field: int,
              skip: int = 0) -> Iterator[Batch | Fallback]:
    """The records of the binary file ``fh`` (a regular file or a BytesIO: a short read is its
    end) from byte ``offset``, which starts line ``line``, in batches; ends with a
    :class:`Fallback` when the rest must be read by the csv module. ``skip`` bytes at ``offset``
    (a byte-order mark) belong to no record. A batch's ``data`` is reused by the next one."""
    fh.seek(offset)
    delim = np.uint8(ord(delimiter))
    tables = stop_tables(delimiter)
    arrays = [np.empty(MAX_RECORDS, np.int64) for _ in range(5)] + [np.empty(MAX_RECORDS, np.uint64),
                                                                     np.empty(MAX_RECORDS, np.uint8)]
    buffer, size, start = bytearray(READ_BYTES), 0, 0
    while True:
        rest = size - start  # the start of a record that goes on: moved to the front
        want = min(max(READ_BYTES, rest), MAX_BUFFER - rest)  # a long record doubles the block
        if len(buffer) < rest + want:  # a new buffer: the last batch may still view the old one
            grown = bytearray(rest + want)
            grown[:rest] = buffer[start:size]
            buffer = grown
        else:
            buffer[:rest] = buffer[start:size]
        with memoryview(buffer) as whole, whole[rest:rest + want] as free:
            got = fh.readinto(free)
        final = got < want
        offset, size = offset + start, rest + got
        start, skip = min(skip, size), 0
        view = np.frombuffer(buffer, np.uint8, size)
        words = np.frombuffer(buffer, np.uint64, size // 8)
        while True:
            records, end, lines, status = scan_records(view, words, start, final, delim, tables, label_col,
                                                       max_field, *arrays)
            if records:
                yield Batch(buffer, view, offset, line, start, *(a[:records].copy() for a in arrays))
            line += lines
            start = end
            if status == TOO_LONG:
                yield Fallback(offset + start, line)
                return
            if records < MAX_RECORDS or start == size:
                break
        if final:
            return
        if size - start >= MAX_BUFFER:  # no record ends within MAX_BUFFER bytes
            yield Fallback(offset + start, line)
            return
