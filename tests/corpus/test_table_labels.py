"""What a table's label cell may be (textcw.corpus.labels), an unclosed CSV quote, and
file names with a comma or ``?`` in a table's task (textcw.corpus.tabular.spec)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import textcw
from tests.cli_run import one_line_error, run
from textcw._limits import MAX_LABEL_CHARS
from textcw.corpus.base import Dataset
from textcw.corpus.tabular import CSV, JSONL, PARQUET, limits, parse_spec
from textcw.corpus.tabular.spec import escape_path, unescape_path
from textcw.errors import DataError, InputError


def jsonl(path, labels, texts=None):
    texts = texts or [f"{'good great' if i % 2 else 'bad awful'} {i}" for i in range(len(labels))]
    path.write_text("".join(json.dumps({"text": t, "label": v}) + "\n" for t, v in zip(texts, labels)))
    return path


def labelled(n, first, second):
    """``n`` labels alternating ``first`` and ``second`` (the text tells them apart)."""
    return [second if i % 2 else first for i in range(n)]


# ------------------------------------------------------------- 1. a label's length: one bound
def test_a_label_at_the_bound_round_trips_train_export_import_and_one_past_it_is_refused(tmp_path, capsys):
    at = "x" * MAX_LABEL_CHARS
    data = jsonl(tmp_path / "at.jsonl", labelled(200, at, "short"))
    model, export, back = tmp_path / "m.model", tmp_path / "m.textcw", tmp_path / "back.model"
    code, _, err = run(capsys, "train", "--corpus", f"jsonl:{data}", "--learner", "pa1", "--out", model)
    assert code == 0, err
    code, _, err = run(capsys, "export", model, export)
    assert code == 0, err
    code, _, err = run(capsys, "import", export, back)
    assert code == 0, err
    assert at in textcw.load(back)[-1].classes_.tolist()
    past = jsonl(tmp_path / "past.jsonl", labelled(200, at + "x", "short"))
    code, _, err = run(capsys, "train", "--corpus", f"jsonl:{past}", "--learner", "pa1")
    assert code == 1 and "past.jsonl line 1: the label has 1,001 characters, more than the 1,000 a label may " \
        "have" in one_line_error(err)


@pytest.mark.parametrize("scanner", [False, True])
def test_a_long_label_is_a_bad_row_as_it_is_read(tmp_path, monkeypatch, scanner):
    if scanner:  # the compiled first pass leaves the refused label to the csv module: the same error
        monkeypatch.setattr(limits, "SCAN_MIN_BYTES", 0)
    rows = "".join(f"text {i},{'a' if i % 2 else 'b'}\n" for i in range(20))
    path = tmp_path / "long.csv"
    path.write_text("text,label\n" + rows + "long one," + "y" * 2_000_000 + "\n" + rows)
    with pytest.raises(DataError, match=r"long.csv line 22: the label has 2,000,000 characters, more than the "
                                        r"1,000 a label may have \(is this the label column\?\); fix the row"):
        CSV.load(str(path))
    data = CSV.load(f"{path},{path}?bad_rows=skip", "test")
    assert data.target_names == ["a", "b"] and data.info["skipped_rows"] == 1


def test_fit_and_export_hold_the_same_bound(tmp_path, monkeypatch):
    long = "z" * (MAX_LABEL_CHARS + 1)
    texts, labels = ["good", "bad"] * 10, [long, "short"] * 10
    with pytest.raises(InputError, match="holds a label of 1,001 characters .* more than the 1,000 a label may have"):
        textcw.make_pipeline("binary-bow", "pa1").fit(texts, labels)
    # a model fitted before labels were bounded: export refuses what import would
    import textcw.learners.inputs as inputs

    monkeypatch.setattr(inputs, "MAX_LABEL_CHARS", 10**9)
    path = jsonl(tmp_path / "ok.jsonl", labelled(100, "other", "short"))
    model = textcw.pipeline.train(f"jsonl:{path}", "pa1", featurizer="binary-bow", probability="raw",
                                  cache=False).model
    model[-1].fit(model[0].transform(texts), labels)
    with pytest.raises(InputError, match=r"holds a label of 1,001 characters \('zzz.*more than the 1,000 that "
                                         "textcw import accepts"):
        textcw.export_model(model, tmp_path / "m.textcw")


# ----------------------------------------------------- 4. labels are not stringified silently
@pytest.mark.parametrize(("first", "second", "message"), [
    (1, "1", r"line 2: the label '1' is text, but the labels before it are a number \(.*line 1: 1\)"),
    (True, 1, r"line 2: the label 1 is a number, but the labels before it are a boolean"),
    ("ham", False, r"line 2: the label False is a boolean, but the labels before it are text"),
])
def test_a_column_of_mixed_label_types_stops_the_read_naming_both_rows(tmp_path, first, second, message):
    path = jsonl(tmp_path / "mixed.jsonl", labelled(10, first, second))
    for task in (str(path), f"{path}?bad_rows=skip"):
        with pytest.raises(DataError, match="mixed.jsonl " + message):
            JSONL.load(task)


def test_the_kind_of_label_is_the_same_in_the_test_file(tmp_path):
    train = jsonl(tmp_path / "train.jsonl", labelled(10, 0, 1))
    test = jsonl(tmp_path / "test.jsonl", labelled(10, "0", "1"))
    with pytest.raises(DataError, match=r"test.jsonl line 1: the label '0' is text, but the labels before it are "
                                        r"a number \(.*train.jsonl line 1: 0\)"):
        JSONL.load(f"{train},{test}")


@pytest.mark.parametrize(("cell", "problem"), [
    (None, "no label"),
    ([1], r"the label \[1\] is a list, not one label"),
    ({"a": 1}, r"the label \{'a': 1\} is a dict, not one label"),
    (2.5, "the label 2.5 is a real number, a regression target"),
])
def test_a_label_scikit_learn_would_refuse_is_a_bad_row(tmp_path, cell, problem):
    path = jsonl(tmp_path / "odd.jsonl", [0, 1, cell, 1, 0, 1, 0, 1])
    with pytest.raises(DataError, match=f"odd.jsonl line 3: {problem}"):
        JSONL.load(str(path))
    assert JSONL.load(f"{path},{path}?bad_rows=skip", "test").info["skipped_rows"] == 1


def test_whole_numbers_are_one_class_whatever_their_spelling(tmp_path):
    path = jsonl(tmp_path / "n.jsonl", [1, 2.0, 1.0, 2, 1, 2])
    assert JSONL.load(f"{path},{path}", "test").target_names == ["1", "2"]


def test_json_objects_naming_a_key_twice_are_bad_rows(tmp_path):
    path = tmp_path / "dup.jsonl"
    path.write_text('{"text": "a", "label": "x"}\n{"text": "b", "label": "x", "label": "y"}\n'
                    '{"text": "c", "label": "y"}\n')
    with pytest.raises(DataError, match=r"dup.jsonl line 2: the key 'label' appears twice in one object"):
        JSONL.load(str(path))
    assert JSONL.load(f"{path},{path}?bad_rows=skip", "test").data == ["a", "c"]


def test_binary_parquet_labels_are_utf8_text(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "b.parquet"
    pq.write_table(pa.table({"text": ["good", "bad"] * 10, "label": [b"ham", b"spam"] * 10}), path)
    assert PARQUET.load(f"{path},{path}", "test").target_names == ["ham", "spam"]
    pq.write_table(pa.table({"text": ["good", "bad"], "label": [b"ham", b"sp\xffam"]}), path)
    with pytest.raises(DataError, match=r"b.parquet row 2: the label is binary, and byte 0xff is not UTF-8 text"):
        PARQUET.load(str(path))


def test_pandas_missing_values_are_missing_labels_not_a_class():
    pd = pytest.importorskip("pandas")
    for missing in (pd.NA, pd.NaT, None, float("nan")):
        with pytest.raises(InputError, match="label 1 is missing"):
            Dataset.from_columns(["a", "b"], pd.Series(["x", missing], dtype=object))


def test_dataset_from_columns_refuses_what_fit_refuses():
    class NAType:  # pandas' pd.NA, told by its type's name (pandas is not imported)
        def __str__(self):
            return "<NA>"

    with pytest.raises(InputError, match="label 1 is missing"):
        Dataset.from_columns(["a", "b"], ["x", NAType()])
    with pytest.raises(InputError, match=r"label 1: the label '1' is text, but the labels before it are a number"):
        Dataset.from_columns(["a", "b"], [1, "1"])
    with pytest.raises(InputError, match=r"label 1: the label 1 is a number, but the labels before it are a boolean"):
        Dataset.from_columns(["a", "b", "c", "d"], [True, 1, "True", "1"])
    with pytest.raises(InputError, match=r"labels of shape \(2, 1\): give one label per text"):
        Dataset.from_columns(["a", "b"], np.array([[1], [0]]))
    with pytest.raises(InputError, match=r"label 0: the label \[1\] is a list, not one label"):
        Dataset.from_columns(["a", "b"], [[1], [0]])
    data = Dataset.from_columns(["a", "b", "c"], [b"ham", "spam", b"ham"])
    assert data.target_names == ["ham", "spam"]
    assert Dataset.from_columns(["a", "b"], [True, False]).target_names == ["False", "True"]


# ------------------------------------------------------------------- 3. an unclosed quote
@pytest.mark.parametrize("scanner", [False, True])
def test_an_unclosed_quote_is_an_error_naming_where_it_opened(tmp_path, monkeypatch, scanner):
    if scanner:
        monkeypatch.setattr(limits, "SCAN_MIN_BYTES", 0)
    path = tmp_path / "q.csv"
    rows = "".join(f"row {i},{'a' if i % 2 else 'b'}\n" for i in range(100))
    path.write_text("text,label\n" + "first,a\nsecond,b\n" + 'swallowed,"b\n' + rows)
    message = r"q.csv line 4: the quote opening a field on line 4 is never closed, so the 101 lines from there " \
              r"to the end of the file would be one field and their rows lost; close the quote"
    for task in (str(path), f"{path}?bad_rows=skip"):
        with pytest.raises(DataError, match=message):
            CSV.load(task)
    path.write_text('text,label\n"a, ""quoted"" one\nline",x\nok,"\n\nmore text')  # a quoted line break first
    with pytest.raises(DataError, match=r"q.csv line 4: the quote opening a field on line 4 is never closed, so "
                                        "the 3 lines"):
        CSV.load(str(path))


def test_predict_stops_at_an_unclosed_quote_instead_of_labelling_part_of_the_table(tmp_path, capsys):
    train = tmp_path / "t.csv"
    train.write_text("text,label\n" + "".join(f"{'good' if i % 2 else 'bad'} {i},{i % 2}\n" for i in range(60)))
    model = tmp_path / "m.model"
    assert run(capsys, "train", "--corpus", f"csv:{train}", "--learner", "pa1", "--out", model)[0] == 0
    new = tmp_path / "new.csv"
    new.write_text('text\ngood one\n"bad one\ngood two\nbad two\ngood three\n')
    code, _, err = run(capsys, "predict", model, "--input", f"csv:{new}", "--out", tmp_path / "out.csv")
    assert code == 1 and "new.csv line 3: the quote opening a field on line 3 is never closed, so the 4 lines" \
        in one_line_error(err)
    new.write_text('"text\ngood one\n')  # in the header row
    code, _, err = run(capsys, "predict", model, "--input", f"csv:{new}", "--out", tmp_path / "out.csv")
    assert code == 1 and "new.csv line 1: the quote opening a field on line 1 is never closed, so the 2 lines" \
        in one_line_error(err)


# --------------------------------------------------- 5. a comma or ? in a file name: escaped
def test_a_file_name_with_a_comma_or_a_question_mark_is_written_percent_escaped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    body = "text,label\n" + "".join(f"{'good' if i % 2 else 'bad'} {i},{i % 2}\n" for i in range(40))
    for name in ("sales, 2024.csv", "what?x=1.csv", "100%.csv", "a%2Cb.csv"):
        (tmp_path / name).write_text(body)
    assert parse_spec("csv", "sales%2C 2024.csv?label=label").train == "sales, 2024.csv"
    assert parse_spec("csv", "what%3Fx=1.csv,100%25.csv").files == ("what?x=1.csv", "100%.csv")
    assert parse_spec("csv", "100%.csv").train == "100%.csv"  # any other % is itself
    assert parse_spec("csv", "a%252Cb.csv").train == "a%2Cb.csv"
    for name in ("sales, 2024.csv", "what?x=1.csv", "100%.csv", "a%2Cb.csv"):
        assert unescape_path(escape_path(name)) == name
        assert len(CSV.load(f"{escape_path(name)},{escape_path(name)}", "test")) == 40
    spec = parse_spec("csv", "sales%2C 2024.csv")
    assert spec.example(bad_rows="skip") == "csv:sales%2C 2024.csv?bad_rows=skip"  # errors show it as written
