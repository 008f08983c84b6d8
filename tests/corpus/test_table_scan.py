"""The compiled first pass over CSV and TSV files (textcw.corpus._table_scan) gives exactly the
csv module's answers: the same index (rows per split, labels, checkpoints, bad rows) or the same
error, on hand-made and on random files full of quotes, line breaks and bad rows."""

from __future__ import annotations

import codecs

import numpy as np
import pytest

from textcw import _limits
from textcw.corpus import _table_scan, tabular
from textcw.corpus.tabular import CSV, Position, limits, parse_spec
from textcw.corpus.tabular.index import _index_cached
from textcw.corpus.tabular.readers import _Rows
from textcw.errors import DataError, InputError


def index_or_error(spec):
    try:
        return _index_cached.__wrapped__(spec, ())
    except (DataError, InputError) as exc:
        return f"{type(exc).__name__}: {exc}"


def both_ways(task: str, monkeypatch, fmt: str = "csv"):
    """``(index by the scanner, index by the csv module alone)`` of a task, or their errors."""
    spec = parse_spec(fmt, task)
    assert _table_scan.usable(spec.delimiter, spec.encoding)
    calls = []
    real = _table_scan.scan_file

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(_table_scan, "scan_file", counted)
        m.setattr(limits, "SCAN_MIN_BYTES", 0)  # small files too
        fast = index_or_error(spec)
    with monkeypatch.context() as m:
        m.setattr(_table_scan, "usable", lambda *args: False)
        slow = index_or_error(spec)
    # the scanner ran, unless the header row itself was refused
    assert calls or isinstance(fast, str)
    return fast, slow


def small_blocks(monkeypatch, read=64, records=3, block=16):
    """Tiny reads and batches, so that records, quotes and \\r\\n straddle their boundaries."""
    monkeypatch.setattr(_table_scan, "READ_BYTES", read)
    monkeypatch.setattr(_table_scan, "MAX_RECORDS", records)
    monkeypatch.setattr(limits, "BLOCK_BYTES", block)


TRICKY = (
    b'id,text,label\n'
    b'1,plain,pos\n'
    b'2,"quoted, with comma",neg\r\n'
    b'\n'
    b'3,"two\nlines",pos\n'
    b'4,"crlf\r\ninside",\"neg\"\n'
    b'5,"a ""quote"" in it","pos"\r'
    b'6,text,"po""s"\n'
    b'7,text,"pos"x\n'
    b'8,text, pos\n'
    b'9,too,many,fields\n'
    b'10,few\n'
    b'11,text,\n'
    b'12,text,"  "\n'
    b'13,text,b\x07d\n'
    b'14,lit"eral,neg\n'
    b'\r\n'
    b'15,text,"multi\nline label"\n'
    b'16,last,pos'
)


@pytest.mark.parametrize("tiny", [False, True])
@pytest.mark.parametrize("skip", [False, True])
def test_tricky_rows_give_the_csv_module_s_index_or_error(tmp_path, monkeypatch, tiny, skip):
    path = tmp_path / "tricky.csv"
    path.write_bytes(TRICKY)
    if tiny:
        small_blocks(monkeypatch)
    task = f"{path},{path}" + ("?bad_rows=skip" if skip else "")
    fast, slow = both_ways(task, monkeypatch)
    assert fast == slow
    if skip:
        # rows 9, 10, 11, 12, 13, 15 (the multi-line label) are bad; the rest are good
        assert fast.skipped == {"train": 6, "test": 6} and fast.sizes == {"train": 10, "test": 10}
        assert fast.labels == [" pos", "neg", "po\"s", "pos", "posx"]
    else:
        assert fast == f"DataError: {path} line 13: 4 fields where the header has 3; fix the row, or skip " \
                       f"bad rows (counted) with csv:{path},{path}?bad_rows=skip"


def test_checkpoints_split_and_positions_match_over_many_batches(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    lines = [b"text,label"]
    for i in range(7_000):
        text = b'"a, b\r\nc"' if i % 5 == 0 else b"word %d" % i
        lines.append(text + b"," + [b"x", b'"y"', b"z"][int(rng.integers(3))])
        if i % 97 == 0:
            lines.append(b"")
    path = tmp_path / "many.csv"
    path.write_bytes(b"\r\n".join(lines))
    monkeypatch.setattr(_table_scan, "READ_BYTES", 4096)
    monkeypatch.setattr(_table_scan, "MAX_RECORDS", 100)
    fast, slow = both_ways(f"{path}?test=0.3&seed=4", monkeypatch)
    assert fast == slow
    assert fast.sizes["train"] + fast.sizes["test"] == 7_000 and len(fast.checkpoints["test"]) == 3
    spec = parse_spec("csv", f"{path}?test=0.3&seed=4")
    first = tabular.split_of(spec, 0)
    assert fast.checkpoints[first][0] == Position(12, 2, 0)  # after the header's \r\n
    # the splits, and any range of them read from the scanner's checkpoints, are the rows written
    monkeypatch.setattr(limits, "SCAN_MIN_BYTES", 0)
    texts = ["a, b\r\nc" if i % 5 == 0 else f"word {i}" for i in range(7_000)]
    for split in ("train", "test"):
        expected = [t for i, t in enumerate(texts) if tabular.split_of(spec, i) == split]
        assert CSV.load(f"{path}?test=0.3&seed=4", split).data == expected
        chunks = CSV.stream(f"{path}?test=0.3&seed=4", split, start=1_234, stop=2_034, chunk_size=300)
        assert [t for chunk in chunks for t in chunk.data] == expected[1_234:2_034]


PIECES = [b"a", b"bc", b",", b",", b'"', b'""', b"\n", b"\r\n", b"\r", b" ", b"\xc3\xa9", b"\xff", b"\x07",
          b"\t", b";", b"\x00", b"pos", b"neg"]


@pytest.mark.parametrize("seed", range(40))
def test_random_files_give_the_csv_module_s_index_or_error(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    fmt, delimiter, encoding = [("csv", ",", "utf-8"), ("tsv", "\t", "utf-8"), ("csv", ";", "latin-1"),
                                ("csv", ",", "latin-1")][seed % 4]
    header = ["h", "text", "label"]
    rows = []
    for _ in range(int(rng.integers(1, 60))):
        if rng.random() < 0.7:  # a well-formed row, maybe quoted
            label = [b"pos", b"neg", b"\"pos\"", b"n\xc3\xa9g"][int(rng.integers(4))]
            text = b"".join(rng.choice(PIECES[:2] + PIECES[9:11], size=int(rng.integers(0, 30))))
            rows.append(delimiter.encode().join([b"1", b'"' + text.replace(b'"', b'""') + b',\n"', label]))
        else:  # anything
            rows.append(b"".join(rng.choice(PIECES, size=int(rng.integers(0, 40)))))
    ending = [b"\n", b"\r\n", b"\r"][int(rng.integers(3))]
    body = delimiter.encode().join(h.encode() for h in header) + ending + ending.join(rows)
    if rng.random() < 0.5:
        body += ending
    if seed % 5 == 0:
        body = codecs.BOM_UTF8 + body
    path = tmp_path / f"random.{fmt}"
    path.write_bytes(body)
    small_blocks(monkeypatch, read=int(rng.integers(8, 200)), records=int(rng.integers(1, 20)),
                 block=int(rng.integers(4, 64)))
    monkeypatch.setattr(limits, "STRIDE", int(rng.integers(1, 6)))  # many checkpoints, some after bad rows
    options = [f"encoding={encoding}"] + ([f"delimiter={delimiter}"] if fmt == "csv" else []) + \
        (["header=no", "text=2", "label=3"] if seed % 3 == 0 else [])  # the header row is then a row
    for skip in ("error", "skip"):
        task = f"{path}?test=0.5&bad_rows={skip}&" + "&".join(options)
        fast, slow = both_ways(task, monkeypatch, fmt)
        assert fast == slow


def test_without_a_header_and_with_a_byte_order_mark(tmp_path, monkeypatch):
    path = tmp_path / "bom.csv"
    path.write_bytes(codecs.BOM_UTF8 + b"pos,first\nneg,second\n\xef\xbb\xbfpos,third\n")
    fast, slow = both_ways(f"{path},{path}?header=no&text=2&label=1", monkeypatch)
    assert fast == slow and fast.checkpoints["train"] == [Position(0, 1, 0)]
    assert fast.labels == ["neg", "pos", "\ufeffpos"]


@pytest.mark.parametrize("limit", ["field", "buffer"])
def test_a_field_or_record_over_the_scanner_s_limits_is_left_to_the_csv_module(tmp_path, monkeypatch, limit):
    path = tmp_path / "long.csv"
    long = "x" * 300
    path.write_text("text,label\n" + "".join(f'"{long if i == 40 else i}\n{i}",{"ab"[i % 2]}\n' for i in range(80)))
    calls = []
    if limit == "field":
        monkeypatch.setattr(limits, "MAX_FIELD", 200)  # the scanner's limit; the csv module's is unchanged
    else:
        monkeypatch.setattr(_table_scan, "READ_BYTES", 64)
        monkeypatch.setattr(_table_scan, "MAX_BUFFER", 256)
    real_read = _Rows.read

    def read(self, position=None):
        calls.append(position)
        return real_read(self, position)

    monkeypatch.setattr(_Rows, "read", read)
    fast, slow = both_ways(f"{path},{path}", monkeypatch)
    assert fast == slow and fast.sizes == {"train": 80, "test": 80}
    # the scanner counted rows 0-39 and handed row 40 on to the csv module
    assert [p and p.row for p in calls] == [40, 40, None, None]  # two files: by the scanner, then alone


def test_too_many_labels_and_bad_bytes_are_the_same_errors(tmp_path, monkeypatch):
    path = tmp_path / "labels.csv"
    path.write_text("text,label\n" + "".join(f"t,l{i}\n" for i in range(30)))
    monkeypatch.setattr(_limits, "MAX_LABELS", 12)
    fast, slow = both_ways(str(path), monkeypatch)
    assert fast == slow == f"DataError: {path}: column 'label' has more than 12 distinct values; is it the " \
                           f"label column? Name it: csv:{path}?label=COLUMN"
    bad = tmp_path / "bytes.csv"
    bad.write_bytes(b"text,label\nfine,a\nb\xe9d,b\n")
    fast, slow = both_ways(str(bad), monkeypatch)
    assert fast == slow == f"DataError: {bad} line 3: byte 0xe9 at column 2 is not utf-8 text; fix the row, or " \
                           f"skip bad rows (counted) with csv:{bad}?bad_rows=skip"


def test_a_crlf_split_between_two_reads_is_one_line_break(tmp_path, monkeypatch):
    path = tmp_path / "crlf.csv"
    path.write_bytes(b"text,label\r\nabcd,x\r\nbad\r\n")  # block 1 ends with \r, block 2 starts with \n
    monkeypatch.setattr(limits, "BLOCK_BYTES", 19)
    with pytest.raises(DataError, match="crlf.csv line 3: 1 fields where the header has 2"):
        CSV.load(str(path))


def test_only_a_file_of_scan_min_bytes_or_more_is_scanned(tmp_path, monkeypatch):
    path = tmp_path / "small.csv"
    path.write_text("text,label\n" + "".join(f"t{i},{'ab'[i % 2]}\n" for i in range(500)))
    calls = []
    real = _table_scan.scan_file
    monkeypatch.setattr(_table_scan, "scan_file", lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    monkeypatch.setattr(limits, "SCAN_MIN_BYTES", path.stat().st_size + 1)
    small = index_or_error(parse_spec("csv", f"{path},{path}"))
    assert calls == [] and small.sizes == {"train": 500, "test": 500}
    monkeypatch.setattr(limits, "SCAN_MIN_BYTES", path.stat().st_size)
    assert index_or_error(parse_spec("csv", f"{path},{path}")) == small and calls == [1, 1]


def test_skip_text_finds_the_first_marked_byte_eight_at_a_time_or_one_by_one():
    rng = np.random.default_rng(3)
    buffer = bytearray(rng.choice([0, 9, 10, 13, 34, 44, 97, 128, 255], size=4_000,
                                  p=[.01, .01, .01, .01, .01, .01, .9, .02, .02]).astype(np.uint8).tobytes())
    for size in (0, 1, 7, 8, 9, 63, 64, 65, 4_000):
        data = np.frombuffer(buffer, np.uint8, size)
        words = np.frombuffer(buffer, np.uint64, size // 8)
        for marked in ((44, 13, 10), (34, 13, 10), (9, 9, 9), (0, 128, 255)):
            table = np.zeros(256, np.bool_)
            table[list(marked)] = True
            hits = np.flatnonzero(table[data])
            for start in range(0, size + 1, max(1, size // 97)):
                after = hits[hits >= start]
                expected = int(after[0]) if after.size else size
                got = _table_scan.skip_text(data, words, start, size, table,
                                            *(np.uint64(m) * _table_scan.ONES for m in marked))
                assert got == expected, (size, marked, start)


def test_a_line_longer_than_max_line_is_an_error_but_a_file_of_cr_line_breaks_is_not(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "MAX_LINE", 100)
    monkeypatch.setattr(limits, "BLOCK_BYTES", 16)
    long = tmp_path / "long.csv"
    long.write_text("text,label\nshort,a\n" + "x" * 300 + ",b\nlast,a\n")
    with pytest.raises(DataError, match=r"long.csv line 3: a line longer than 100 bytes; is this a utf-8 text "
                                        r"file of rows\?"):
        CSV.load(f"{long},{long}")
    # lines ended by \r alone: each is short, though the file is longer than MAX_LINE
    cr = tmp_path / "cr.csv"
    cr.write_bytes(b"text,label\r" + b"".join(b"t%d,%s\r" % (i, b"ab"[i % 2:i % 2 + 1]) for i in range(100)))
    data = CSV.load(f"{cr},{cr}")
    assert data.data == [f"t{i}" for i in range(100)] and list(data.labels[:3]) == ["a", "b", "a"]
