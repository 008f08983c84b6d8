"""Your labelled text in a table: ``csv:``, ``tsv:``, ``jsonl:`` and ``parquet:`` corpora.

A task names the file(s) and, after ``?``, options joined by ``&`` (as in a URL)::

    csv:reviews.csv                          columns "text" and "label", 80/20 split
    csv:train.csv,test.csv                   the split given by two files
    csv:news.csv?text=title,body&label=topic several text columns, joined by a space
    tsv:data.tsv?header=no&text=2&label=1    no header row: columns are numbered from 1
    jsonl:posts.jsonl?text=body&label=tag    one JSON object per line
    parquet:data.parquet                     the `parquet` extra (pyarrow)
    csv:-                                    standard input (read whole; not with --stream)
    csv:sales%2C 2024.csv                    the file "sales, 2024.csv"

A comma or ``?`` in a file name is written ``%2C`` or ``%3F`` (``%`` itself ``%25``), as in a
URL; any other ``%`` is the character itself (:mod:`textcw.corpus.tabular.spec`).

Options: ``text`` (column(s), default ``text``), ``label`` (default ``label``), ``header``
(``yes``/``no``, CSV and TSV), ``delimiter`` (CSV: one character, or ``tab``), ``test`` (the
share of rows held out when no test file is given, default 0.2; ``0``: none, every row trains
and the test split reads as empty instead of failing), ``seed`` (of that split,
default 0), ``bad_rows`` (``error``, the default, or ``skip``) and ``encoding`` (``utf-8``, the
default, or ``latin-1``). Several labels a row (:mod:`textcw.corpus.tabular.multilabel`):
``label_sep`` (one character between the labels of a cell, e.g. ``label_sep=|``; any format)
and ``multilabel=yes`` (JSON lines: the label is a JSON list); such a table loads as a
:class:`~textcw.corpus.multilabel_data.MultiLabelDataset`, and a row without a label is a bad row.

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
that is not an object or names a key twice) stops the read with an error naming the file and
line, unless ``bad_rows=skip``: then it is skipped, counted (``Dataset.info["skipped_rows"]``)
and the count is logged. A label is text, a whole number or a boolean of at most
``MAX_LABEL_CHARS`` characters (:mod:`textcw.corpus.labels`: what is refused and why); a
column mixing kinds of label, and a CSV quote never closed, stop the read whatever ``bad_rows``
says: skipping would lose rows without a count that means anything. Every size is bounded
before it is used: a line or field larger than :data:`MAX_FIELD` bytes (a Parquet value too,
measured before it is decoded: :mod:`textcw.corpus.tabular.parquet`), more than
:data:`MAX_LABELS` distinct labels (the label column is probably not the label), standard input
over :data:`MAX_STDIN_BYTES`, or more than :data:`MAX_MATERIALISED` rows loaded at once (use
``--stream``) are errors.
"""

from __future__ import annotations

from textcw.corpus.tabular.corpus import CSV, JSONL, PARQUET, TSV, TableCorpus
from textcw.corpus.tabular.files import Position
from textcw._limits import MAX_LABELS
from textcw.corpus.tabular.limits import MAX_FIELD, MAX_MATERIALISED, MAX_STDIN_BYTES, STRIDE
from textcw.corpus.tabular.readers import Row, read_rows
from textcw.corpus.tabular.spec import FORMATS, TASK_PATTERNS, TableSpec, parse_spec
from textcw.corpus.tabular.split import split_of

# In reading order, which the reference page follows (docs/reference/corpora.md).
__all__ = [
    "FORMATS", "TASK_PATTERNS", "STRIDE", "MAX_FIELD", "MAX_LABELS", "MAX_STDIN_BYTES", "MAX_MATERIALISED",
    "TableSpec", "parse_spec", "Position", "Row", "read_rows", "split_of", "TableCorpus", "CSV", "TSV", "JSONL",
    "PARQUET",
]
