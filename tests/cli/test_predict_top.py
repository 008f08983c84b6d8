"""``textcw predict --top K`` and ``--explain``: the K best labels of each document, in text and
in table outputs, and the words behind each prediction."""

from __future__ import annotations

import csv
import io
import json
import warnings

import numpy as np
import pytest

import textcw
from tests.cli_run import one_line_error, run
from textcw.explain import explain

TOPICS = {"fruit": "apple banana cherry", "metal": "iron copper zinc", "sport": "tennis golf rugby"}


def docs_and_labels(n=90):
    names = sorted(TOPICS)
    docs = [f"{TOPICS[names[i % 3]]} item{i % 7} " + TOPICS[names[(i + 1) % 3]].split()[i % 3] for i in range(n)]
    return docs, [names[i % 3] for i in range(n)]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("predict-top")
    docs, labels = docs_and_labels()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # calibration on few documents warns
        calibrated = textcw.make_pipeline("tfidf", "arow").fit(docs, labels)
        plain = textcw.make_pipeline("binary-bow", "pa1", probability="raw").fit(docs, labels)
    paths = {"arow": folder / "arow.textcw-model", "pa1": folder / "pa1.textcw-model"}
    textcw.save(calibrated, paths["arow"])
    textcw.save(plain, paths["pa1"])
    return paths, {"arow": calibrated, "pa1": plain}


NEW = ["apple banana zinc", "tennis iron", "nothing known here"]


def test_top_k_lines_have_k_labels_with_probabilities_best_first(capsys, models):
    paths, fitted = models
    code, out, err = run(capsys, "predict", paths["arow"], "--top", "2", stdin="\n".join(NEW).encode())
    assert code == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[0] for r in rows] == list(fitted["arow"].predict(NEW))
    proba = fitted["arow"].predict_proba(NEW)
    classes = list(fitted["arow"].classes_)
    for r, p in zip(rows, proba):
        assert len(r) == 4 and r[0] != r[2]
        assert [float(r[1]), float(r[3])] == pytest.approx([p[classes.index(r[0])], p[classes.index(r[2])]], abs=1e-6)
        assert float(r[1]) >= float(r[3]) and float(r[3]) >= sorted(p)[-2] - 1e-6


def test_top_k_with_files_and_without_probabilities(capsys, models, tmp_path):
    paths, fitted = models
    doc = tmp_path / "doc.txt"
    doc.write_text(NEW[0])
    code, out, _ = run(capsys, "predict", paths["pa1"], doc, "--top", "3")
    assert code == 0 and out.split("\t")[0] == str(doc) and len(out.split("\t")) == 4
    assert out.rstrip("\n").split("\t")[1:] == list(np.asarray(fitted["pa1"].classes_)[
        np.argsort(-fitted["pa1"].decision_function([NEW[0]])[0], kind="stable")])


@pytest.mark.parametrize("k", ["4", "0", "-1"])
def test_k_outside_the_labels_is_a_usage_error(capsys, models, k):
    paths, _ = models
    code, out, err = run(capsys, "predict", paths["arow"], "--top", k, stdin=b"apple\n")
    assert code == 2 and out == ""
    assert one_line_error(err) == f"error: --top {k} is invalid: this model has 3 labels; give --top from 1 to 3"


def test_top_k_columns_in_csv_and_a_list_in_json_lines(capsys, models, tmp_path):
    paths, fitted = models
    path = tmp_path / "new.csv"
    path.write_text("id,body\n" + "".join(f'{i},"{doc}"\n' for i, doc in enumerate(NEW)))
    code, out, err = run(capsys, "predict", paths["arow"], "--input", f"csv:{path}?text=body", "--top", "2")
    assert code == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["id", "body", "predicted", "probability", "top1", "top1_probability", "top2",
                       "top2_probability"]
    assert [r[2] for r in rows[1:]] == [r[4] for r in rows[1:]] == list(fitted["arow"].predict(NEW))
    assert all(r[3] == r[5] for r in rows[1:])  # calibrated: the most probable label is the predicted one
    lines = "".join(json.dumps({"body": doc}) + "\n" for doc in NEW).encode()
    code, out, _ = run(capsys, "predict", paths["pa1"], "--input", "jsonl:-?text=body", "--top", "3", stdin=lines)
    records = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and all(len(r["top"]) == 3 and set(r["top"][0]) == {"label"} for r in records)
    assert [r["top"][0]["label"] for r in records] == [r["predicted"] for r in records]
    path.write_text("body,top1\napple,x\n")
    code, _, err = run(capsys, "predict", paths["arow"], "--input", f"csv:{path}?text=body", "--top", "1")
    assert code == 1 and "already has a column 'top1'" in one_line_error(err)


def test_explain_prints_the_words_after_each_line(capsys, models):
    paths, fitted = models
    code, out, err = run(capsys, "predict", paths["arow"], "--proba", "--explain", stdin="\n".join(NEW).encode())
    assert code == 0, err
    blocks = [block for block in out.split("\n") if block]
    heads = [k for k, line in enumerate(blocks) if not line.startswith(" ")]
    assert len(heads) == len(NEW)
    first = blocks[heads[0]:heads[1]]
    e = explain(fitted["arow"], NEW[0])
    assert first[0].split("\t")[0] == e.label
    assert first[1].startswith(f"  why {e.label}, not {e.runner_up}: score difference {e.margin:+.4f}  sd ")
    shown = [line.split() for line in first[2:]]
    assert [words[-1] for words in shown] == [t.name for t in e.terms]
    assert sum(float(words[0]) for words in shown) == pytest.approx(e.margin, abs=1e-3)  # printed to 4 places


def test_explain_and_top_together_and_their_refusals(capsys, models, tmp_path):
    paths, _ = models
    code, out, _ = run(capsys, "predict", paths["pa1"], "--top", "2", "--explain", stdin=b"iron copper\n")
    lines = out.splitlines()
    assert code == 0 and len(lines[0].split("\t")) == 2 and lines[1].startswith("  why metal, not ")
    assert " sd " not in out  # pa1 keeps no variances
    path = tmp_path / "t.csv"
    path.write_text("text\napple\n")
    for argv, message in [(["--input", f"csv:{path}", "--explain"], "--explain explains documents"),
                          (["--url", "http://127.0.0.1:9", "--explain"], "--explain explains documents"),
                          (["--url", "http://127.0.0.1:9", "--top", "2"], "--top needs a MODEL file")]:
        code, _, err = run(capsys, "predict", paths["pa1"], *argv)
        assert code == 2 and message in one_line_error(err), (argv, err)
