"""``textcw train --init-model M``: every new row is learned unless a test split is named, and
``test=0`` (a table without a test split) trains on every row and measures nothing."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

import textcw
from tests.cli_run import run

CHUNK = 7  # one partial_fit call per chunk: the learner's per-call counters count the chunks


def write(path, n, seed):
    rng = np.random.default_rng(seed)
    words = {"neg": "bad awful hate poor", "pos": "good great love fine"}
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["text", "label"])
        for i in range(n):
            label = ("neg", "pos")[int(rng.integers(2))]
            writer.writerow([f"{words[label]} word{int(rng.integers(500))} fix{seed}x{i}", label])
    return path


def rows_of(path):
    """Every row of a CSV file, read with the csv module (not with textcw's split)."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))[1:]
    return [r[0] for r in rows], np.array([r[1] for r in rows])


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    folder = tmp_path_factory.mktemp("every-row")
    data = write(folder / "old.csv", 200, 0)
    from textcw.cli import main

    try:
        main(["train", "--corpus", f"csv:{data}", "--learner", "arow", "--featurizer", "hashing",
              "--featurizer-param", "n_features=4096", "--out", str(folder / "first.textcw-model")])
    except SystemExit as exc:
        assert exc.code in (0, None)
    return folder / "first.textcw-model"


def replay(model_path, texts, labels):
    """The first model, continued with partial_fit on ``texts`` in chunks of CHUNK, by hand."""
    model = textcw.load(model_path)
    for lo in range(0, len(texts), CHUNK):
        model[-1].partial_fit(model[:-1].transform(texts[lo:lo + CHUNK]), labels[lo:lo + CHUNK])
    return model


def test_a_continued_model_learns_all_300_corrections(capsys, first, tmp_path):
    new = write(tmp_path / "corrections.csv", 300, 1)
    code, out, err = run(capsys, "train", "--init-model", first, "--corpus", f"csv:{new}", "--chunk-size", CHUNK,
                         "--out", tmp_path / "next.textcw-model", "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["n_train"] == 300 and summary["n_test"] == 0 and summary["accuracy"] is None
    assert summary["metrics"]["macro_f1"] is None
    assert "names no test split: all 300 new documents were learned" in err and "?test=0.2" in err
    got = textcw.load(tmp_path / "next.textcw-model")
    before = textcw.load(first)[-1]
    # one partial_fit per chunk of the 300 rows (240-odd rows would make fewer chunks) ...
    assert len(got[-1].mistakes_) - len(before.mistakes_) == math.ceil(300 / CHUNK)
    assert len(got[-1].n_updates_) - len(before.n_updates_) == math.ceil(300 / CHUNK)
    # ... and the weights are those of every row learned in file order
    texts, labels = rows_of(new)
    np.testing.assert_array_equal(got[-1].coef_, replay(first, texts, labels)[-1].coef_)
    # what the model file records: trained on 300, measured on nothing
    code, out, _ = run(capsys, "inspect", tmp_path / "next.textcw-model", "--json")
    card = json.loads(out)
    assert code == 0 and card["n_train"] == 300 and card["n_test"] == 0 and card["accuracy"] is None
    code, out, _ = run(capsys, "inspect", tmp_path / "next.textcw-model")
    assert "accuracy: none: no test split\n" in out and "n test: 0\n" in out


def test_a_named_test_split_is_still_held_out_and_scored(capsys, first, tmp_path):
    new = write(tmp_path / "corrections.csv", 300, 1)
    code, out, err = run(capsys, "train", "--init-model", first, "--corpus", f"csv:{new}?test=0.2",
                         "--chunk-size", CHUNK, "--out", tmp_path / "next.textcw-model", "--json")
    assert code == 0, err
    summary = json.loads(out)
    train = textcw.load_corpus(f"csv:{new}?test=0.2")
    test = textcw.load_corpus(f"csv:{new}?test=0.2", "test")
    assert summary["n_train"] == len(train) and summary["n_test"] == len(test) == 300 - len(train) > 30
    got = textcw.load(tmp_path / "next.textcw-model")
    assert summary["accuracy"] == pytest.approx(np.mean(got.predict(test.data) == test.labels))
    assert len(got[-1].mistakes_) - len(textcw.load(first)[-1].mistakes_) == math.ceil(len(train) / CHUNK)
    assert "names no test split" not in err
    # a test file after a comma is a named test split too: scored on it, every training row learned
    other = write(tmp_path / "held.csv", 50, 2)
    code, out, err = run(capsys, "train", "--init-model", first, "--corpus", f"csv:{new},{other}", "--json")
    assert code == 0, err
    assert json.loads(out)["n_train"] == 300 and json.loads(out)["n_test"] == 50


def test_a_vw_file_is_continued_on_every_line_in_its_order(capsys, first, tmp_path):
    source = write(tmp_path / "corrections.csv", 120, 3)
    texts, labels = rows_of(source)
    new = tmp_path / "corrections.vw"
    new.write_text("".join(f"{label} | {text}\n" for text, label in zip(texts, labels)))
    code, out, err = run(capsys, "train", "--init-model", first, "--corpus", f"vw:{new}", "--chunk-size", CHUNK,
                         "--out", tmp_path / "next.textcw-model", "--json")
    assert code == 0, err
    assert json.loads(out)["n_train"] == 120 and json.loads(out)["accuracy"] is None
    got = textcw.load(tmp_path / "next.textcw-model")
    np.testing.assert_array_equal(got[-1].coef_, replay(first, texts, labels)[-1].coef_)


@pytest.mark.parametrize("how", [[], ["--stream"]])
def test_train_with_test_0_learns_every_row_and_says_no_test_split_was_given(capsys, tmp_path, how):
    data = write(tmp_path / "all.csv", 150, 4)
    code, out, err = run(capsys, "train", "--corpus", f"csv:{data}?test=0", "--learner", "arow", "--featurizer",
                         "hashing", *how, "--out", tmp_path / "m.textcw-model")
    assert code == 0, err
    assert "no accuracy: no test split was given" in out and "(train 150 docs, test 0," in out
    code, out, err = run(capsys, "train", "--corpus", f"csv:{data}?test=0", "--learner", "arow", "--featurizer",
                         "hashing", *how, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["n_train"] == 150 and summary["n_test"] == 0 and summary["accuracy"] is None
    assert summary["macro_f1"] is None
    card = json.loads(run(capsys, "inspect", tmp_path / "m.textcw-model", "--json")[1])
    assert card["accuracy"] is None and card["n_train"] == 150 and card["n_test"] == 0
