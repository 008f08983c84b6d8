"""The hints of table corpora: a header read with the wrong delimiter names the right one (not
"name the text column"), and ``test=0`` is a table without a test split."""

from __future__ import annotations

import pytest

import textcw
from tests.cli_run import one_line_error, run
from textcw.corpus.tabular import CSV, TSV, parse_spec
from textcw.corpus.tabular.readers import read_rows
from textcw.corpus.tabular.spec import every_row_task
from textcw.errors import DataError

ROWS = ["good great fine;pos", "bad awful poor;neg"] * 20


def write(path, header, rows, delimiter):
    path.write_text("\n".join([header.replace(";", delimiter), *(r.replace(";", delimiter) for r in rows)]) + "\n")
    return path


def test_a_semicolon_header_read_with_commas_names_delimiter_semicolon(capsys, tmp_path):
    news = write(tmp_path / "news.csv", "text;label", ROWS, ";")
    with pytest.raises(DataError, match=r"news.csv has no column 'text' \(its columns: 'text;label'\): its header "
                                        r"is split by semicolons, not by commas; read it with "
                                        r"csv:.*news.csv\?delimiter=;$"):
        CSV.load(str(news))
    code, _, err = run(capsys, "train", "--corpus", f"csv:{news}", "--learner", "pa1")
    line = one_line_error(err)
    assert code == 2 and "name the text column" not in line and line.endswith(f"read it with csv:{news}?delimiter=;")
    # the hint is the fix
    code, out, err = run(capsys, "train", "--corpus", f"csv:{news}?delimiter=;", "--learner", "pa1")
    assert code == 0 and "accuracy" in out, err


def test_a_comma_file_given_as_tsv_names_csv_with_the_columns_kept(capsys, tmp_path):
    data = write(tmp_path / "data.csv", "body;topic", ROWS, ",")
    code, _, err = run(capsys, "train", "--corpus", f"tsv:{data}?text=body&label=topic", "--learner", "pa1")
    line = one_line_error(err)
    assert code == 2 and "split by commas, not by tabs" in line
    assert line.endswith(f"read it with csv:{data}?text=body&label=topic")
    assert len(CSV.load(f"{data}?text=body&label=topic")) > 0
    # textcw predict reads its input with the same hint
    with pytest.raises(DataError, match=r"read it with csv:.*data.csv\?text=body$"):
        read_rows(parse_spec("tsv", f"{data}?text=body"), str(data))


def test_a_tab_file_given_as_csv_names_tsv_and_bars_name_delimiter_bar(tmp_path):
    tabs = write(tmp_path / "tabs.csv", "text;label", ROWS, "\t")
    with pytest.raises(DataError, match=r"split by tabs, not by commas; read it with tsv:.*tabs.csv$"):
        CSV.load(str(tabs))
    assert len(TSV.load(str(tabs))) > 0
    bars = write(tmp_path / "bars.csv", "text;label", ROWS, "|")
    with pytest.raises(DataError, match=r"split by bars, not by commas; read it with csv:.*bars.csv\?delimiter=\|$"):
        CSV.load(str(bars))
    assert len(CSV.load(f"{bars}?delimiter=|")) > 0


def test_a_header_of_several_columns_still_asks_for_the_column(tmp_path):
    # a "|" inside one of several column names is a name, not a delimiter
    path = write(tmp_path / "cols.csv", "id;body|raw;label", ["1;good;pos", "2;bad;neg"], ",")
    with pytest.raises(DataError, match=r"has no column 'text' \(its columns: 'id', 'body\|raw', 'label'\); "
                                        r"name the text column: csv:.*cols.csv\?text=COLUMN$"):
        CSV.load(str(path))


def test_test_0_is_a_table_without_a_test_split(tmp_path):
    news = write(tmp_path / "news.csv", "text;label", ROWS, ",")
    assert parse_spec("csv", f"{news}?test=0").test_share == 0.0
    train = textcw.load_corpus(f"csv:{news}?test=0")
    test = textcw.load_corpus(f"csv:{news}?test=0", "test")
    assert train.data == [r.split(";")[0] for r in ROWS] and len(test) == 0 and test.target_names == ["neg", "pos"]
    assert CSV.size(f"{news}?test=0", "test") == 0 and list(CSV.stream(f"{news}?test=0", "test")) == []
    # a split empty by accident is still an error
    with pytest.raises(DataError, match="has no rows in its test split"):
        CSV.load(f"{news}?test=0.0001", "test")


@pytest.mark.parametrize("task, every", [
    ("a.csv", "a.csv?test=0"),
    ("a.csv?text=body", "a.csv?text=body&test=0"),
    ("what?.csv", "what?.csv?test=0"),  # a "?" in the name stays in it
    ("a.csv?test=0.3", None),
    ("a.csv?test=0", None),
    ("a.csv,b.csv", None),
])
def test_every_row_task_adds_test_0_only_where_no_test_split_is_named(task, every):
    assert every_row_task("csv", task) == every
    if every is not None:
        spec = parse_spec("csv", every)
        assert spec.test_share == 0.0 and spec.files == parse_spec("csv", task).files
