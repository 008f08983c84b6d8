"""Piped output is plain tab-separated text; corpora say whether they hold text or vectors."""

import json

from tests.cli_run import run
from textcw.cli.output import table_lines


def test_list_corpora_in_a_pipe_is_one_tab_separated_line_per_row(capsys):
    code, out, _ = run(capsys, "list", "corpora", "--no-sizes")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "corpus / task\tinput\ttrain\ttest\tclasses\tsummary [provider]"
    assert all(line.count("\t") == 5 for line in lines), [ln for ln in lines if ln.count("\t") != 5]
    assert not any(c in out for c in "│┃━─")  # no box drawing
    rows = {line.split("\t")[0]: line.split("\t") for line in lines[1:]}
    assert rows["newsgroups:comp"][1:5] == ["text", "-", "-", "-"]
    assert rows["spam:u00"][1] == "vectors" and rows["amazon:books"][1] == "vectors"
    assert rows["synthetic-text:N"][1] == "text" and rows["svmlight:PATH[,TEST_PATH]"][1] == "vectors"
    assert max(map(len, lines)) < 200  # nothing padded to a terminal's width


def test_list_corpora_json_says_text_or_vectors(capsys):
    code, out, _ = run(capsys, "list", "corpora", "--no-sizes", "--json")
    kinds = {c["name"]: c["input"] for c in json.loads(out)}
    assert code == 0 and kinds["newsgroups"] == "text" and kinds["spam"] == "vectors"
    assert kinds["synthetic"] == "vectors" and kinds["folder"] == "text"


def test_table_lines_flatten_markup_tabs_and_line_breaks():
    lines = table_lines(["a", "b [c]"], [["  x", "[bold]two[/bold]\tcols\nand lines"]], title="T [u]")
    assert lines == ["# T [u]", "a\tb [c]", "x\ttwo cols and lines"]


def test_list_learners_in_a_pipe(capsys):
    code, out, _ = run(capsys, "list", "learners")
    header, *rows = out.splitlines()
    assert code == 0 and header == "name\tsummary\tprovider"
    assert any(r.startswith("cw-stdev\t") and r.endswith("\ttextcw") for r in rows)


def test_train_out_on_vectors_says_at_once_that_the_model_cannot_label_text(capsys, tmp_path):
    code, _, err = run(capsys, "train", "--corpus", "synthetic", "--learner", "pa1",
                       "--out", tmp_path / "m.textcw-model")
    assert code == 0
    first = err.splitlines()[0]
    assert first.startswith("warning: synthetic is a corpus of feature vectors") and "not text" in first
    code, _, err = run(capsys, "predict", tmp_path / "m.textcw-model", stdin=b"some words\n")
    assert code == 1 and "cannot label text" in err
