"""Table corpora with several labels a row: label_sep= (any format), multilabel=yes (JSON lines)."""

from __future__ import annotations

import json

import pytest

import textcw
from textcw.corpus.multilabel import MultiLabelDataset
from textcw.corpus.tabular.corpus import JSONL
from textcw.corpus.tabular.spec import parse_spec
from textcw.errors import DataError, InputError

ROWS = [("buy shares now", "acq|earn"), ("profits rose", "earn"), ("merger talk", " acq "),
        ("wheat prices", "grain|wheat|grain"), ("crude up", "crude")]


def write_csv(path, rows, delimiter=","):
    path.write_text("text{0}label\n".format(delimiter) + "".join(f"{t}{delimiter}{lab}\n" for t, lab in rows))
    return path


def test_csv_and_tsv_label_cells_split_at_the_separator(tmp_path):
    for fmt, delimiter in (("csv", ","), ("tsv", "\t")):
        path = write_csv(tmp_path / f"t.{fmt}", ROWS, delimiter)
        data = textcw.load_corpus(f"{fmt}:{path}?label_sep=|&test=0", "train")
        assert isinstance(data, MultiLabelDataset)
        assert data.target_names == ["acq", "crude", "earn", "grain", "wheat"]
        assert data.labels == [("acq", "earn"), ("earn",), ("acq",), ("grain", "wheat"), ("crude",)]
        assert data.target.sum() == 7


def test_jsonl_lists_and_train_test_files_share_the_labels(tmp_path):
    train, test = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    train.write_text("".join(json.dumps({"text": t, "label": lab.split("|")}) + "\n" for t, lab in ROWS))
    test.write_text(json.dumps({"text": "oil", "label": ["crude", "ship"]}) + "\n")
    task = f"jsonl:{train},{test}?multilabel=yes"
    a, b = textcw.load_corpus(task, "train"), textcw.load_corpus(task, "test")
    assert a.target_names == b.target_names == ["acq", "crude", "earn", "grain", "ship", "wheat"]
    assert b.labels == [("crude", "ship")] and a.labels[3] == ("grain", "wheat")
    # a chunked stream gives the same rows, over every label of the table
    chunks = list(JSONL.stream(task.partition(":")[2], "train", chunk_size=2))
    assert [len(c) for c in chunks] == [2, 2, 1]
    assert all(c.target_names == a.target_names for c in chunks)
    assert [labels for c in chunks for labels in c.labels] == a.labels


def test_empty_label_sets_are_bad_rows(tmp_path):
    path = write_csv(tmp_path / "t.csv", [*ROWS, ("nothing", "|"), ("more", "acq")])
    with pytest.raises(DataError, match=r"t.csv line 7: an empty label set \('\|'\); a row needs at least one label; "
                                        r"fix the row, or skip bad rows"):
        textcw.load_corpus(f"csv:{path}?label_sep=|&test=0", "train")
    data = textcw.load_corpus(f"csv:{path}?label_sep=|&test=0&bad_rows=skip", "train")
    assert len(data) == 6 and data.info["skipped_rows"] == 1
    jsonl = tmp_path / "t.jsonl"
    jsonl.write_text('{"text": "a", "label": ["x"]}\n{"text": "b", "label": []}\n')
    with pytest.raises(DataError, match=r"line 2: an empty label set \(\[\]\)"):
        textcw.load_corpus(f"jsonl:{jsonl}?multilabel=yes&test=0", "train")
    jsonl.write_text('{"text": "a", "label": "x"}\n')
    with pytest.raises(DataError, match="is not a list; with multilabel=yes every label cell is a JSON list"):
        textcw.load_corpus(f"jsonl:{jsonl}?multilabel=yes&test=0", "train")


@pytest.mark.parametrize("option, message", [
    ("label_sep=,", "label_sep=',' is the file's delimiter"),
    ("label_sep=", "label_sep='' is invalid; give the one character between the labels"),
    ("label_sep=ab", "label_sep='ab' is invalid"),
    ("multilabel=yes", "unknown option 'multilabel'; the options of csv are text, label, label_sep"),
])
def test_bad_separators_are_usage_errors(option, message):
    with pytest.raises(InputError, match=message):
        parse_spec("csv", f"t.csv?{option}")


def test_separator_options_parse():
    assert parse_spec("csv", "t.csv?label_sep=tab").label_sep == "\t"
    assert parse_spec("csv", "t.csv?label_sep=;").multilabel
    assert parse_spec("jsonl", "t.jsonl?multilabel=yes").label_lists
    assert not parse_spec("csv", "t.csv").multilabel
    with pytest.raises(InputError, match="label_sep='\\\\t' is the file's delimiter"):
        parse_spec("tsv", "t.tsv?label_sep=tab")


def test_parquet_text_cells_split_and_list_columns_are_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"text": [t for t, _ in ROWS], "label": [lab for _, lab in ROWS]}), path)
    data = textcw.load_corpus(f"parquet:{path}?label_sep=|&test=0", "train")
    assert data.labels == [("acq", "earn"), ("earn",), ("acq",), ("grain", "wheat"), ("crude",)]
    lists = tmp_path / "lists.parquet"
    pq.write_table(pa.table({"text": ["a"], "label": [["x", "y"]]}), lists)
    with pytest.raises(DataError, match="column 'label' holds list"):
        textcw.load_corpus(f"parquet:{lists}?label_sep=|&test=0", "train")


def test_multilabel_task_is_decided_from_the_name():
    from textcw.corpus.multilabel import multilabel_task

    assert multilabel_task("reuters:modapte") and not multilabel_task("reuters:r8")
    assert multilabel_task("csv:a.csv?label_sep=;") and multilabel_task("jsonl:a.jsonl?multilabel=yes")
    assert not multilabel_task("csv:a.csv") and not multilabel_task("newsgroups")
