"""CSV, TSV, JSON-lines and Parquet files as corpora (textcw.corpus.tabular)."""

from __future__ import annotations

import csv
import json
import sys

import numpy as np
import pytest

import textcw
from tests.cli_run import one_line_error, run
from textcw.corpus import tabular
from textcw.corpus.tabular import CSV, JSONL, PARQUET, TSV, parse_spec
from textcw.corpus.tabular.files import _stdin_bytes
from textcw.errors import DataError, InputError


def write_csv(path, rows, header=("id", "title", "text", "label"), delimiter=","):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, delimiter=delimiter)
        if header:
            writer.writerow(header)
        writer.writerows(rows)
    return path


def table(n, seed=0):
    """``n`` rows ``(id, title, text, label)`` whose words tell the label; some texts hold quoted
    commas and line breaks."""
    rng = np.random.default_rng(seed)
    words = {"pos": "good great fine love excellent".split(), "neg": "bad awful poor hate terrible".split()}
    rows = []
    for i in range(n):
        label = ["neg", "pos"][int(rng.integers(2))]
        text = " ".join(rng.choice(words[label] + ["the", "plot", "film"], size=8))
        if i % 7 == 0:
            text = f'{text}, "quoted"\nsecond line'
        rows.append((str(i), f"title {i}", text, label))
    return rows


@pytest.fixture
def reviews(tmp_path):
    return write_csv(tmp_path / "reviews.csv", table(2_500))


def ids(data):
    return [doc for doc in data.data]


def test_one_file_is_split_by_seeded_rows_in_file_order(reviews):
    train = textcw.load_corpus(f"csv:{reviews}")
    test = textcw.load_corpus(f"csv:{reviews}", "test")
    rows = table(2_500)
    expected = {"train": [], "test": []}
    for i, row in enumerate(rows):
        expected[tabular.split_of(parse_spec("csv", str(reviews)), i)].append(row)
    assert train.data == [r[2] for r in expected["train"]] and test.data == [r[2] for r in expected["test"]]
    assert list(train.labels) == [r[3] for r in expected["train"]]
    assert train.target_names == test.target_names == ["neg", "pos"]
    assert len(train) + len(test) == 2_500 and 0.17 < len(test) / 2_500 < 0.23
    assert train.info["skipped_rows"] == 0 and train.info["test_share"] == 0.2
    other = textcw.load_corpus(f"csv:{reviews}?seed=1&test=0.5", "test")
    assert 0.45 < len(other) / 2_500 < 0.55 and other.data != test.data


def test_a_test_file_gives_the_split_and_text_columns_are_joined(tmp_path):
    train = write_csv(tmp_path / "a.csv", table(30))
    test = write_csv(tmp_path / "b.csv", table(10, seed=1))
    data = textcw.load_corpus(f"csv:{train},{test}?text=title,text", "test")
    assert data.data == [f"{r[1]} {r[2]}" for r in table(10, seed=1)]
    assert len(textcw.load_corpus(f"csv:{train},{test}")) == 30


@pytest.mark.parametrize(("start", "stop", "chunk"), [(0, None, 10_000), (999, 1_001, 1), (5, 1_800, 333),
                                                      (1_000, 1_999, 1_000), (1_998, None, 7)])
def test_any_range_of_the_stream_is_the_loaded_split_s_rows(reviews, start, stop, chunk):
    for split in ("train", "test"):
        whole = CSV.load(str(reviews), split)
        end = len(whole) if stop is None else min(stop, len(whole))
        parts = list(CSV.stream(str(reviews), split, start=min(start, end), stop=end, chunk_size=chunk))
        assert all(len(p) == chunk for p in parts[:-1])
        assert [d for p in parts for d in p.data] == whole.data[min(start, end):end]
        got = np.concatenate([p.target for p in parts]) if parts else np.array([], dtype=np.int64)
        np.testing.assert_array_equal(got, whole.target[min(start, end):end])
        assert CSV.size(str(reviews), split) == len(whole)


def test_tsv_without_a_header_numbers_its_columns(tmp_path):
    path = write_csv(tmp_path / "d.tsv", [(r[3], r[2].replace("\n", " ")) for r in table(40)], header=None,
                     delimiter="\t")
    data = TSV.load(f"{path}?header=no&text=2&label=1&test=0.25")
    assert set(data.target_names) == {"neg", "pos"} and all("\t" not in d for d in data.data)
    assert len(data) + len(TSV.load(f"{path}?header=no&text=2&label=1&test=0.25", "test")) == 40


def test_csv_with_another_delimiter_and_a_byte_order_mark(tmp_path):
    path = tmp_path / "semi.csv"
    path.write_bytes("\ufefftext;label\nhello world;a\nbye now;b\nhi;a\nno;b\n".encode())
    data = CSV.load(f"{path},{path}?delimiter=;", "test")
    assert data.data == ["hello world", "bye now", "hi", "no"] and list(data.labels) == ["a", "b", "a", "b"]


def test_json_lines(tmp_path):
    path = tmp_path / "posts.jsonl"
    rows = [{"body": f"text {i} " + ("good" if i % 2 else "bad"), "tag": ["x", "y"][i % 2], "n": i} for i in range(50)]
    path.write_text("\n".join(json.dumps(r) for r in rows[:25]) + "\n\n" + "\n".join(json.dumps(r) for r in rows[25:]))
    spec = f"{path},{path}?text=body,n&label=tag"
    data = JSONL.load(spec, "test")
    assert data.data == [f"{r['body']} {r['n']}" for r in rows] and list(data.labels) == [r["tag"] for r in rows]
    assert [d for c in JSONL.stream(spec, "test", start=20, stop=30, chunk_size=4) for d in c.data] == data.data[20:30]


def test_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rows = table(3_000)
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"text": [r[2] for r in rows], "label": [r[3] for r in rows],
                             "id": [int(r[0]) for r in rows]}), path, row_group_size=700)
    train = PARQUET.load(str(path))
    expected = [r[2] for i, r in enumerate(rows) if tabular.split_of(parse_spec("parquet", str(path)), i) == "train"]
    assert train.data == expected
    assert [d for c in PARQUET.stream(str(path), start=1_200, stop=1_500, chunk_size=64) for d in c.data] == \
        expected[1_200:1_500]
    ints = PARQUET.load(f"{path}?label=id&test=0.5")  # numeric labels become their text
    assert all(name.isdigit() for name in ints.target_names)


def test_parquet_without_pyarrow_names_the_extra(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(InputError, match=r"needs the parquet extra: pip install 'textcw\[parquet\]'"):
        PARQUET.load(str(path))


def test_bad_rows_are_errors_naming_file_and_line_or_skipped_and_counted(tmp_path, caplog):
    path = tmp_path / "bad.csv"
    path.write_bytes(b"text,label\nfine,a\nalso fine,b\nmissing label,\none,two,three\n"
                     b"caf\xe9,a\n\"two\nlines\",b\nlast,a\n")
    with pytest.raises(DataError, match=r"bad.csv line 4: no label; fix the row, or skip bad rows .*bad_rows=skip"):
        CSV.load(str(path))
    data = CSV.load(f"{path},{path}?bad_rows=skip", "test")
    assert data.data == ["fine", "also fine", "two\nlines", "last"] and data.info["skipped_rows"] == 3
    assert "skipped 3 bad rows of the test split (first: " in caplog.text
    path.write_bytes(b"text,label\nfine,a\none,two,three\n")
    with pytest.raises(DataError, match=r"line 3: 3 fields where the header has 2"):
        CSV.load(str(path))
    path.write_bytes(b"text,label\nfine,a\ncaf\xe9,b\n")
    with pytest.raises(DataError, match=r"line 3: byte 0xe9 at column 4 is not utf-8 text"):
        CSV.load(str(path))
    assert CSV.load(f"{path},{path}?encoding=latin-1", "test").data == ["fine", "café"]


def test_bad_json_lines(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_text('{"text": "a", "label": "x"}\n[1, 2]\n{"text": "b"}\nnot json\n{"text": "c", "label": "y"}\n')
    with pytest.raises(DataError, match=r"p.jsonl line 2: a JSON list, not an object"):
        JSONL.load(str(path))
    data = JSONL.load(f"{path},{path}?bad_rows=skip", "test")
    assert data.data == ["a", "c"] and data.info["skipped_rows"] == 3


def test_columns_and_options_are_checked_with_the_fix_in_the_message(reviews, tmp_path):
    with pytest.raises(DataError, match=r"has no column 'body' \(its columns: 'id', 'title', 'text', 'label'\); "
                       r"name the text column: csv:.*reviews.csv\?text=COLUMN"):
        CSV.load(f"{reviews}?text=body")
    with pytest.raises(InputError, match="unknown option 'txt'; the options of csv are text, label"):
        parse_spec("csv", "x.csv?txt=a")
    with pytest.raises(InputError, match=r"test='2' is invalid; give the share"):
        parse_spec("csv", "x.csv?test=2")
    with pytest.raises(InputError, match="test= is the share held out of one file"):
        parse_spec("csv", "a.csv,b.csv?test=0.3")
    with pytest.raises(InputError, match="delimiter"):
        parse_spec("jsonl", "a.jsonl?delimiter=;")
    with pytest.raises(DataError, match="cannot read .*nope.csv: No such file"):
        CSV.load(str(tmp_path / "nope.csv"))
    with pytest.raises(DataError, match="is not a regular file"):
        CSV.load(str(tmp_path))
    many = write_csv(tmp_path / "ids.csv", [(str(i), "t", "x", str(i)) for i in range(tabular.MAX_LABELS + 5)])
    with pytest.raises(DataError, match="column 'label' has more than 10,000 distinct values; is it the label"):
        CSV.load(str(many))


def test_a_tiny_file_without_test_rows_says_what_to_do(tmp_path):
    path = write_csv(tmp_path / "tiny.csv", [("1", "t", "good", "a"), ("2", "t", "bad", "b")])
    with pytest.raises(DataError, match=r"has no rows in its test split: none of its 2 rows fell in it"):
        CSV.load(f"{path}?seed=3", "test")


def test_standard_input_trains_but_is_not_streamed(capsys, monkeypatch):
    _stdin_bytes.cache_clear()
    rows = "".join(f"{r[2].splitlines()[0].split(',')[0]},{r[3]}\n" for r in table(300))
    code, out, err = run(capsys, "train", "--corpus", "csv:-", "--learner", "pa1",
                         stdin=("text,label\n" + rows).encode())
    _stdin_bytes.cache_clear()
    assert code == 0, err
    assert out.startswith("csv:-  pa1  accuracy 1.0000")
    code, _, err = run(capsys, "train", "--corpus", "csv:-", "--learner", "pa1", "--stream", stdin=b"text,label\n")
    _stdin_bytes.cache_clear()
    assert code == 1 and "cannot be streamed or sharded; save it to a file" in one_line_error(err)


def test_stream_and_shards_train_on_a_csv_file(capsys, reviews):
    code, out, err = run(capsys, "train", "--corpus", f"csv:{reviews}", "--learner", "pa1", "--stream",
                         "--chunk-size", "300", "--json")
    assert code == 0, err
    streamed = json.loads(out)
    n_train = CSV.size(str(reviews))
    assert streamed["n_train"] == n_train and streamed["n_test"] == 2_500 - n_train and streamed["accuracy"] > 0.95
    code, out, err = run(capsys, "train", "--corpus", f"csv:{reviews}", "--learner", "pa1", "--shards", "2",
                         "--combine", "uniform", "--workers", "2", "--stream", "--json")
    assert code == 0, err
    assert json.loads(out)["shard_documents"] == [n_train // 2, n_train - n_train // 2]


def test_corpora_are_listed_as_text_with_their_pattern(capsys):
    code, out, _ = run(capsys, "list", "corpora", "--no-sizes")
    rows = {line.split("\t")[0]: line.split("\t") for line in out.splitlines()}
    for fmt in ("csv", "tsv", "jsonl", "parquet"):
        assert rows[f"{fmt}:PATH[,TEST_PATH][?OPTIONS]"][1] == "text"


# --------------------------------------------------------------------------- Dataset from Python
def test_dataset_from_columns_trains_like_the_same_rows_from_a_file(tmp_path):
    from textcw.corpus.base import Dataset

    rows = table(300)
    data = Dataset.from_columns([r[2] for r in rows], [r[3] for r in rows], name="mine")
    assert data.target_names == ["neg", "pos"] and list(data.labels) == [r[3] for r in rows]
    numeric = Dataset.from_columns(["a", "b", "c"], [1, 0, 1], target_names=[0, 1, 2])
    assert numeric.target_names == ["0", "1", "2"] and numeric.target.tolist() == [1, 0, 1]
    model = textcw.make_pipeline("binary-bow", "pa1", probability="raw").fit(data.data, data.labels)
    path = write_csv(tmp_path / "same.csv", rows)
    model_file = textcw.make_pipeline("binary-bow", "pa1", probability="raw").fit(
        *(lambda d: (d.data, d.labels))(CSV.load(f"{path},{path}", "test")))
    np.testing.assert_array_equal(model[-1].coef_, model_file[-1].coef_)
    with pytest.raises(InputError, match="3 texts and 2 labels"):
        Dataset.from_columns(["a", "b", "c"], ["x", "y"])
    with pytest.raises(InputError, match="label 1 is missing"):
        Dataset.from_columns(["a", "b"], ["x", float("nan")])
    with pytest.raises(InputError, match="text 0 is a NoneType"):
        Dataset.from_columns([None], ["x"])


def test_dataset_from_a_table_of_columns():
    from textcw.corpus.base import Dataset

    frame = {"title": ["Good", "Bad"], "body": ["great film", "awful"], "y": ["pos", "neg"]}
    data = Dataset.from_frame(frame, text=["title", "body"], label="y")
    assert data.data == ["Good great film", "Bad awful"] and list(data.labels) == ["pos", "neg"]
    pa = pytest.importorskip("pyarrow")
    assert Dataset.from_frame(pa.table(frame), text="body", label="y").data == ["great film", "awful"]
    with pytest.raises(InputError, match=r"no column 'text' \(its columns: 'title', 'body', 'y'\)"):
        Dataset.from_frame(frame)
    with pytest.raises(InputError, match="row 1 has no text in column 'body'"):
        Dataset.from_frame({"body": ["x", None], "y": ["a", "b"]}, text="body", label="y")
