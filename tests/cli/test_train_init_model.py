"""``textcw train --init-model M``: a saved model continued with partial_fit on new data."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import textcw
from tests.cli_run import one_line_error, run


def write(path, n, seed, labels=("neg", "pos")):
    rng = np.random.default_rng(seed)
    words = {"neg": "bad awful hate poor", "pos": "good great love fine", "meh": "so so fine"}
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["text", "label"])
        for i in range(n):
            label = labels[int(rng.integers(len(labels)))]
            writer.writerow([f"{words[label]} word{int(rng.integers(500))} new{seed}x{i % 40}", label])
    return path


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    folder = tmp_path_factory.mktemp("init-model")
    data = write(folder / "old.csv", 300, 0)
    code = main_code("train", "--corpus", f"csv:{data}", "--learner", "arow", "--featurizer", "hashing",
                     "--out", folder / "first.textcw-model")
    assert code == 0
    return folder


def main_code(*argv):
    from textcw.cli import main

    try:
        main([str(a) for a in argv])
    except SystemExit as exc:
        return exc.code
    return 0


def test_the_saved_model_goes_on_learning_exactly_as_partial_fit_would(capsys, first, tmp_path):
    new = write(tmp_path / "new.csv", 400, 1)
    code, out, err = run(capsys, "train", "--init-model", first / "first.textcw-model", "--corpus",
                         f"csv:{new}?test=0.2", "--epochs", "2", "--chunk-size", "64", "--out",
                         tmp_path / "next.textcw-model", "--json")  # a test split named: held out, scored
    assert code == 0, err
    summary = json.loads(out)
    assert summary["learner"] == "arow" and summary["epochs"] == 2 and summary["n_train"] == textcw.load_corpus(
        f"csv:{new}").__len__()
    expected = textcw.load(first / "first.textcw-model")
    train = textcw.load_corpus(f"csv:{new}")
    for _ in range(2):
        for lo in range(0, len(train), 64):
            expected[-1].partial_fit(expected[:-1].transform(train.data[lo:lo + 64]), train.labels[lo:lo + 64])
    got = textcw.load(tmp_path / "next.textcw-model")
    np.testing.assert_array_equal(got[-1].coef_, expected[-1].coef_)
    before = textcw.load(first / "first.textcw-model")[-1].coef_
    assert not np.array_equal(before, got[-1].coef_)
    test = textcw.load_corpus(f"csv:{new}", "test")
    assert summary["accuracy"] == pytest.approx(np.mean(got.predict(test.data) == test.labels))


def test_what_cannot_continue_is_refused_with_the_reason(capsys, first, tmp_path):
    model = first / "first.textcw-model"
    new = write(tmp_path / "three.csv", 100, 2, labels=("neg", "pos", "meh"))
    code, _, err = run(capsys, "train", "--init-model", model, "--corpus", f"csv:{new}")
    assert code == 1 and "has labels" in err and "'meh'" in err and "train a new model" in one_line_error(err)
    code, _, err = run(capsys, "train", "--init-model", model, "--corpus", "synthetic")
    assert code == 1 and "labels text and synthetic holds feature vectors" in one_line_error(err)
    code, _, err = run(capsys, "train", "--init-model", model, "--corpus", f"csv:{new}", "--param", "r=2")
    assert code == 2 and "--param does not apply with --init-model" in one_line_error(err)
    code, _, err = run(capsys, "train", "--init-model", model, "--corpus", f"csv:{new}", "--learner", "pa1")
    assert code == 2 and "does not match the model's learner arow" in one_line_error(err)
    old = write(tmp_path / "old.csv", 100, 3)
    assert main_code("train", "--corpus", f"csv:{old}", "--learner", "svm", "--out", tmp_path / "svm.textcw-model") == 0
    capsys.readouterr()
    code, _, err = run(capsys, "train", "--init-model", tmp_path / "svm.textcw-model", "--corpus", f"csv:{old}")
    assert code == 1 and "its learner svm has no partial_fit" in one_line_error(err)
    code, out, err = run(capsys, "train", "--corpus", f"csv:{old}")  # no --learner: the default, scw1
    assert code == 0 and f"csv:{old}  scw1 (the default)  accuracy" in out


def test_a_fixed_vocabulary_is_said_once_at_the_start(capsys, tmp_path):
    old = write(tmp_path / "old.csv", 100, 4)
    assert main_code("train", "--corpus", f"csv:{old}", "--learner", "pa1", "--out", tmp_path / "bow.textcw-model") == 0
    capsys.readouterr()
    code, _, err = run(capsys, "train", "--init-model", tmp_path / "bow.textcw-model", "--corpus", f"csv:{old}")
    assert code == 0
    assert err.count("fixed vocabulary of") == 1 and "--featurizer hashing learns new words" in err
