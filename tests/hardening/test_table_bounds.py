"""Hostile Parquet files are read within the bounds a CSV file is read by
(textcw.corpus.tabular.parquet): no page is decompressed, and no value decoded or made a Python
object, before its size is bounded; damaged pages end in one clear line."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.cli_run import one_line_error, run
from textcw.corpus.tabular import PARQUET, limits, parquet
from textcw.errors import DataError, TextcwError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def write(path, text, labels=None, **options):
    labels = labels if labels is not None else ["ham", "spam"] * (len(text) // 2) + ["ham"] * (len(text) % 2)
    pq.write_table(pa.table({"text": text, "label": labels}), path, **options)
    return str(path)


@pytest.fixture
def no_decoding(monkeypatch):
    """Fail if pyarrow is asked to decode any page: what must be refused before."""
    def refuse(*args, **kwargs):
        raise AssertionError("pyarrow was asked to decompress the pages")

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", refuse)


def test_a_small_file_of_one_huge_compressed_value_is_refused_before_it_is_decompressed(tmp_path, no_decoding):
    # the attack with the bounds as shipped: 32 MiB of one byte, zstd-compressed to a few kB, one
    # value in its page (the attacker's file had 1 GB: only the size of the test differs)
    path = tmp_path / "bomb.parquet"
    pq.write_table(pa.table({"text": ["a" * 2**25], "label": ["ham"]}), path, compression="zstd",
                   use_dictionary=False)
    assert path.stat().st_size < 10_000
    with pytest.raises(DataError, match=r"bomb.parquet row group 0, column 'text': a page of 33,554,4\d\d bytes "
                                        r"once uncompressed, more than the 16,842,756 it may have \(1 values"):
        PARQUET.load(str(path))


def test_a_page_larger_than_its_values_may_be_is_refused_before_it_is_decompressed(tmp_path, monkeypatch,
                                                                                    no_decoding):
    monkeypatch.setattr(limits, "MAX_FIELD", 1_000)
    path = write(tmp_path / "one.parquet", ["x" * 200_000], ["ham"], compression="zstd")
    with pytest.raises(DataError, match=r"one.parquet row group 0, column 'text': a page of 200,0\d\d bytes once "
                                        r"uncompressed, more than the 66,540 it may have \(1 values of at most 1,000 "
                                        r"bytes, no page over 1,073,741,824"):
        PARQUET.load(str(path))
    monkeypatch.setattr(limits, "MAX_FIELD", 16 * 2**20)
    monkeypatch.setattr(limits, "MAX_PAGE", 100_000)
    path = write(tmp_path / "many.parquet", ["y" * 1_000 + str(i) for i in range(200)], compression="zstd",
                 use_dictionary=False)
    with pytest.raises(DataError, match="many.parquet row group 0, column 'text': a page of .* no page over 100,000"):
        PARQUET.load(str(path))


@pytest.mark.parametrize("dictionary", [False, True])
def test_a_value_over_max_field_is_refused_before_python_holds_it(tmp_path, monkeypatch, dictionary):
    monkeypatch.setattr(limits, "MAX_FIELD", 5_000)
    texts = ["short text"] * 30
    texts[17] = "z" * 6_000
    path = write(tmp_path / "v.parquet", texts, use_dictionary=dictionary)
    made = []
    real = parquet._Shared.__call__  # given each batch's Python values
    monkeypatch.setattr(parquet._Shared, "__call__",
                        lambda self, values: made.append(len(values)) or real(self, values))
    with pytest.raises(DataError, match=r"v.parquet row 18: the 'text' value has 6,000 bytes, more than the 5,000 "
                                        r"a value may have; is 'text' a column of text\?"):
        PARQUET.load(str(path))
    assert not made  # refused from its length, before any value of its batch became a Python object


def test_rows_are_decoded_in_batches_bounded_by_their_largest_possible_value(tmp_path, monkeypatch):
    sizes = []
    real = pq.ParquetFile.iter_batches

    def spy(self, *args, batch_size, **kwargs):
        sizes.append(batch_size)
        return real(self, *args, batch_size=batch_size, **kwargs)

    monkeypatch.setattr(pq.ParquetFile, "iter_batches", spy)
    monkeypatch.setattr(limits, "MAX_BATCH_BYTES", 1_000_000)
    path = write(tmp_path / "b.parquet", [f"{i} " + "w" * 100_000 for i in range(40)], use_dictionary=False,
                 data_page_size=300_000)
    data = PARQUET.load(f"{path},{path}", "test")
    assert len(data) == 40 and data.data[39].startswith("39 ")
    assert max(sizes) <= 10  # 1 MB a batch, values of up to a page (about 300 kB) each
    small = write(tmp_path / "s.parquet", ["a b c"] * 50)
    sizes.clear()
    PARQUET.load(f"{small},{small}", "test")
    assert set(sizes) == {limits.CHUNK}  # short values: whole chunks


def test_a_repeated_dictionary_value_is_one_python_object(tmp_path):
    long = "word " * 10_000
    values = pa.DictionaryArray.from_arrays(pa.array([0, 1] * 500, pa.int32()), pa.array([long, "short"]))
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"text": values, "label": ["ham", "spam"] * 500}), path)
    data = PARQUET.load(f"{path},{path}", "test")
    assert len({id(t) for t in data.data if len(t) > 100}) == 1


def test_nested_columns_are_refused_up_front(tmp_path):
    path = tmp_path / "n.parquet"
    pq.write_table(pa.table({"text": [["a", "b"], ["c"]], "label": ["x", "y"]}), path)
    with pytest.raises(DataError, match=r"n.parquet: column 'text' holds list<element: string> values, not text"):
        PARQUET.load(str(path))


def test_two_columns_of_one_name_are_refused(tmp_path):
    path = tmp_path / "two.parquet"
    pq.write_table(pa.Table.from_arrays([pa.array(["a", "b"]), pa.array(["c", "d"]), pa.array(["x", "y"])],
                                        names=["text", "text", "label"]), path)
    with pytest.raises(DataError, match="two.parquet has 2 columns named 'text'; which one is meant cannot be told"):
        PARQUET.load(str(path))


def damaged(data: bytes, seed: int) -> bytes:
    """``data`` (a Parquet file) with one to three bytes of its pages (not its footer) changed."""
    rng = np.random.default_rng(seed)
    footer = struct.unpack("<i", data[-8:-4])[0]
    out = bytearray(data)
    for at in rng.integers(4, len(data) - 8 - footer, size=int(rng.integers(1, 4))):
        out[at] = int(rng.integers(256))
    return bytes(out)


@pytest.mark.parametrize("compression", ["none", "snappy", "zstd"])
@pytest.mark.parametrize("dictionary", [False, True])
def test_damaged_pages_end_in_a_clear_error_never_an_unexpected_one(tmp_path, compression, dictionary):
    path = tmp_path / "ok.parquet"
    write(path, [f"hello world {i}" for i in range(300)], compression=compression, use_dictionary=dictionary,
          row_group_size=120, data_page_size=400)
    good = path.read_bytes()
    for seed in range(60):
        path.write_bytes(damaged(good, seed))
        try:
            PARQUET.load(str(path))
        except TextcwError:
            pass  # anything else (ArrowInvalid, UnicodeDecodeError, OSError ...) fails the test


def test_the_cli_says_one_line(tmp_path, capsys):
    path = tmp_path / "bad.parquet"
    good = write(path, [f"hello world {i}" for i in range(300)], compression="snappy")
    data = open(good, "rb").read()
    for seed in range(40):
        path.write_bytes(damaged(data, seed))
        try:
            PARQUET.load(str(path))
        except DataError:
            break
    code, _, err = run(capsys, "train", "--corpus", f"parquet:{path}", "--learner", "pa1")
    assert code == 1 and one_line_error(err).startswith(f"error: {path}")


def test_page_headers_are_read_as_pyarrow_writes_them(tmp_path):
    path = write(tmp_path / "h.parquet", [f"text {i}" for i in range(5_000)], use_dictionary=True,
                 data_page_size=2_000)
    pf = pq.ParquetFile(path)
    chunk = pf.metadata.row_group(0).column(0)
    with open(path, "rb") as fh:
        pages = parquet.scan_pages(fh, chunk, "h")
    assert pages[0]["type"] == 2 and all(p["type"] == 0 for p in pages[1:])  # a dictionary page, then data
    assert sum(p["values"] for p in pages[1:]) == 5_000
    assert sum(p["uncompressed"] for p in pages) < chunk.total_uncompressed_size  # headers besides
