"""``textcw predict MODEL --input FORMAT:PATH``: the table's rows with the predicted label and its
probability, streamed."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.cli_run import one_line_error, run


def rows(n):
    words = {"pos": "good great love", "neg": "bad awful hate"}
    return [(str(i), words[["neg", "pos"][i % 2]] + f" item{i}", ["neg", "pos"][i % 2]) for i in range(n)]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("predict-table")
    path = folder / "train.csv"
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows([("id", "body", "topic"), *rows(200)])
    from textcw.cli import main

    try:
        main(["train", "--corpus", f"csv:{path}?text=body&label=topic", "--learner", "pa1", "--out",
              str(folder / "m.textcw-model")])
    except SystemExit as exc:
        assert exc.code in (0, None)
    return folder / "m.textcw-model"


def test_csv_rows_come_back_with_label_and_probability_in_order(capsys, model, tmp_path):
    path = tmp_path / "new.csv"
    path.write_text('id,body\n1,"good, great\nlove"\n2,awful hate\n3,bad\n')
    code, out, err = run(capsys, "predict", model, "--input", f"csv:{path}?text=body", "--chunk-size", "2")
    assert code == 0, err
    got = list(csv.reader(io.StringIO(out)))
    assert got[0] == ["id", "body", "predicted", "probability"]
    assert [r[:3] for r in got[1:]] == [["1", "good, great\nlove", "pos"], ["2", "awful hate", "neg"],
                                        ["3", "bad", "neg"]]
    assert all(0.5 <= float(r[3]) <= 1.0 for r in got[1:])
    out_file = tmp_path / "out.csv"
    code, stdout, err = run(capsys, "predict", model, "--input", f"csv:{path}?text=body", "--out", out_file)
    assert code == 0 and stdout == "" and out_file.read_text() == out


def test_tsv_without_header_and_json_lines_from_stdin(capsys, model, tmp_path):
    path = tmp_path / "new.tsv"
    path.write_text("good love\tx\nhate\ty\n")
    code, out, _ = run(capsys, "predict", model, "--input", f"tsv:{path}?header=no&text=1")
    assert code == 0 and [line.split("\t")[:3] for line in out.splitlines()] == [["good love", "x", "pos"],
                                                                                 ["hate", "y", "neg"]]
    lines = b'{"body": "good great", "k": [1]}\n\n{"body": "bad awful"}\n'
    code, out, _ = run(capsys, "predict", model, "--input", "jsonl:-?text=body", stdin=lines)
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [r["predicted"] for r in records] == ["pos", "neg"] and records[0]["k"] == [1]
    assert all(set(r) >= {"body", "predicted", "probability"} for r in records)


def test_bad_rows_and_columns(capsys, model, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("body,note\ngood,1\nbad\nlove,3\n")
    code, _, err = run(capsys, "predict", model, "--input", f"csv:{path}?text=body")
    assert code == 1 and "bad.csv line 3: 1 fields where the header has 2" in one_line_error(err)
    code, out, err = run(capsys, "predict", model, "--input", f"csv:{path}?text=body&bad_rows=skip")
    assert code == 0 and len(out.splitlines()) == 3 and "skipped 1 bad row of" in err
    code, _, err = run(capsys, "predict", model, "--input", f"csv:{path}")
    assert code == 2 and "has no column 'text' (its columns: 'body', 'note')" in one_line_error(err)
    path.write_text("body,predicted\ngood,x\n")
    code, _, err = run(capsys, "predict", model, "--input", f"csv:{path}?text=body")
    assert "already has a column 'predicted'" in one_line_error(err)
    code, _, err = run(capsys, "predict", model, "--input", f"xls:{path}")
    assert "format among csv, tsv, jsonl, parquet" in one_line_error(err)
    code, _, err = run(capsys, "predict", model, "--out", tmp_path / "o.csv")
    assert "--out applies to --input" in one_line_error(err)
