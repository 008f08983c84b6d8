"""textcw.suggest and ``textcw suggest``: documents ranked by how informative their labels are,
checked against the formulas on models whose weights and variances are set by hand."""

from __future__ import annotations

import csv
import json
import warnings

import numpy as np
import pytest
from scipy.special import ndtr

import textcw
from tests.cli_run import one_line_error, run
from textcw.errors import ParameterError, UnknownNameError
from textcw.suggest import Ranker, rank

WORDS = ["good", "bad", "fine", "poor", "great", "awful"]


def fit(learner: str, docs, labels, probability: str = "raw", **params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # calibration on few documents warns
        return textcw.make_pipeline("binary-bow", learner, probability=probability, **params).fit(docs, labels)


@pytest.fixture(scope="module")
def binary_model():
    """CW-var over the six words with mu = (good 1, bad -1, fine 0.1, poor -0.1) and every
    variance 1: a document's score is ``N(m, v)`` with ``v`` its number of words."""
    docs = ["good great", "bad awful", "fine", "poor", "great good fine", "awful poor bad"] * 4
    model = fit("cw-var", docs, ["pos", "neg"] * 12)
    learner, vocab = model[-1], model[0].vocabulary_
    mu = np.zeros(len(vocab))
    for word, value in {"good": 1.0, "bad": -1.0, "fine": 0.1, "poor": -0.1}.items():
        mu[vocab[word]] = value
    learner.load_state_dict({**learner.state_dict(), "arrays": {"mu": mu, "s": np.ones(len(vocab))}})
    return model


POOL = ["good", "good bad", "fine", "good fine", "poor bad", "bad", "fine poor"]
# m, v of each: (1, 1), (0, 2), (0.1, 1), (1.1, 2), (-1.1, 2), (-1, 1), (0, 2)


def test_mistake_is_the_probability_that_a_drawn_weight_vector_disagrees(binary_model):
    got = rank(binary_model, POOL, "mistake", n=len(POOL))
    expected = [ndtr(-1.0), 0.5, ndtr(-0.1), ndtr(-1.1 / np.sqrt(2)), ndtr(-1.1 / np.sqrt(2)), ndtr(-1.0), 0.5]
    assert [s.index for s in got] == [1, 6, 2, 3, 4, 0, 5]  # ties by position
    assert [s.score for s in got] == pytest.approx([expected[s.index] for s in got], abs=1e-15)
    assert [s.item for s in got[:2]] == ["good bad", "fine poor"]
    assert [s.index for s in rank(binary_model, POOL, "mistake", n=2)] == [1, 6]


def test_margin_of_raw_gaussian_probabilities_agrees_with_mistake_for_two_labels(binary_model):
    mistake = {s.index: s.score for s in rank(binary_model, POOL, "mistake", n=len(POOL))}
    margin = rank(binary_model, POOL, "margin", n=len(POOL))
    assert [s.index for s in margin] == [1, 6, 2, 3, 4, 0, 5]
    for s in margin:  # |P(pos) - P(neg)| = 1 - 2 P(mistake)
        assert s.score == pytest.approx(1 - 2 * mistake[s.index], abs=1e-12)


def test_multiclass_mistake_uses_the_top_two_labels_mean_and_variance():
    docs = [f"w{k}a w{k}b s{i % 3}" for i in range(60) for k in [i % 3]]
    labels = [f"c{i % 3}" for i in range(60)]
    model = fit("arow", docs, labels, fit_intercept=True)
    pool = ["w0a s1", "w0a w1b", "w2a w2b w1a", "s0 s1 s2", "unknown", "w1a w1b w0a w2a"]
    got = rank(model, pool, "mistake", n=len(pool))
    X = model[0].transform(pool)
    means, var = model[-1].decision_function(X), model[-1].margin_variance(X)
    expected = []
    for m, v in zip(means, var):
        y, r = np.argsort(-m, kind="stable")[:2]
        expected.append(ndtr(-(m[y] - m[r]) / np.sqrt(v[y] + v[r])))
    assert [s.index for s in got] == sorted(range(len(pool)), key=lambda i: (-expected[i], i))
    assert [s.score for s in got] == pytest.approx([expected[s.index] for s in got], rel=1e-12)


def test_margin_for_a_model_without_probabilities_is_the_distance_from_the_threshold():
    model = fit("pa1", ["good great", "bad awful"] * 10, ["pos", "neg"] * 10)
    assert not hasattr(model, "predict_proba")
    scores = model.decision_function(POOL)
    got = rank(model, POOL, "margin", n=3)
    assert [s.index for s in got] == sorted(range(len(POOL)), key=lambda i: (abs(scores[i]), i))[:3]
    assert [s.score for s in got] == [abs(scores[s.index]) for s in got]


def test_random_is_seeded_and_the_same_in_chunks(binary_model):
    first = rank(binary_model, POOL, "random", n=4, seed=3)
    assert first == rank(binary_model, POOL, "random", n=4, seed=3)
    assert [s.index for s in first] != [s.index for s in rank(binary_model, POOL, "random", n=4, seed=4)]
    assert [s.score for s in first] == sorted(np.random.default_rng(3).random(len(POOL)), reverse=True)[:4]
    for strategy in ("random", "mistake", "margin"):
        ranker = Ranker(binary_model, strategy, 3, seed=3)
        for start in range(0, len(POOL), 2):
            ranker.add(POOL[start:start + 2])
        assert ranker.result() == rank(binary_model, POOL, strategy, n=3, seed=3)


def test_refusals():
    model = fit("pa1", ["good great", "bad awful"] * 10, ["pos", "neg"] * 10)
    with pytest.raises(ParameterError, match="strategy 'mistake' needs a learner with a distribution over weights"):
        rank(model, POOL, "mistake")
    with pytest.raises(UnknownNameError, match="did you mean 'margin'"):
        rank(model, POOL, "margn")
    for n in (0, -1, True):
        with pytest.raises(ParameterError, match="how many documents"):
            rank(model, POOL, "margin", n=n)
    assert rank(model, [], "margin") == [] and len(rank(model, POOL, "margin", n=50)) == len(POOL)


@pytest.fixture(scope="module")
def saved(tmp_path_factory, binary_model):
    folder = tmp_path_factory.mktemp("suggest")
    path = folder / "m.textcw-model"
    textcw.save(binary_model, path)
    pool = folder / "pool.csv"
    with open(pool, "w", newline="") as fh:
        csv.writer(fh).writerows([("id", "body"), *((str(i), doc) for i, doc in enumerate(POOL))])
    return path, pool


def test_the_command_prints_row_score_and_excerpt(capsys, saved):
    model, pool = saved
    code, out, err = run(capsys, "suggest", model, "--input", f"csv:{pool}?text=body", "--top", "3")
    assert code == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    assert [(r[0], r[2]) for r in rows] == [("2", "good bad"), ("7", "fine poor"), ("3", "fine")]  # data rows from 1
    assert [float(r[1]) for r in rows] == pytest.approx([0.5, 0.5, ndtr(-0.1)], abs=1e-6)
    code, out, _ = run(capsys, "suggest", model, "--input", f"csv:{pool}?text=body", "--top", "2", "--json",
                       "--strategy", "margin")
    result = json.loads(out)
    assert code == 0 and result["strategy"] == "margin" and result["documents"] == len(POOL)
    assert [(s["rank"], s["row"], s["text"]) for s in result["suggestions"]] == [(1, 2, "good bad"),
                                                                                  (2, 7, "fine poor")]


def test_the_command_reads_stdin_and_prints_unsafe_text_escaped(capsys, saved):
    model, _ = saved
    code, out, err = run(capsys, "suggest", model, "--top", "1", stdin=b"good\n\x1b[31m fine\t" + b"x" * 200 + b"\n")
    assert code == 0, err
    row, score, text = out.rstrip("\n").split("\t")
    assert row == "2" and "\x1b" not in out and text.startswith("\\x1b[31m fine x") and text.endswith("...")
    assert len(text) == 80


def test_the_command_refuses_in_one_line(capsys, saved, tmp_path):
    model, pool = saved
    for argv, message in [
        (["--strategy", "mistak"], "unknown strategy 'mistak'"),
        (["--top", "0"], "--top 0 is invalid"),
        (["--input", f"xls:{pool}"], "format among csv, tsv, jsonl, parquet"),
        (["--input", f"csv:{pool}?text=body", str(pool)], "give no document files"),
    ]:
        code, _, err = run(capsys, "suggest", model, *argv)
        assert code == 2 and message in one_line_error(err), (argv, err)
    pa1 = tmp_path / "pa1.textcw-model"
    textcw.save(fit("pa1", ["good great", "bad awful"] * 10, ["pos", "neg"] * 10), pa1)
    code, _, err = run(capsys, "suggest", pa1, "--input", f"csv:{pool}?text=body")
    assert code == 2 and "use strategy 'margin' or 'random'" in one_line_error(err)
    bad = tmp_path / "bad.csv"
    bad.write_text("body,note\ngood,1\nbad\nfine poor,3\n")
    code, _, err = run(capsys, "suggest", model, "--input", f"csv:{bad}?text=body")
    assert code == 1 and "bad.csv line 3" in one_line_error(err)
    code, out, err = run(capsys, "suggest", model, "--input", f"csv:{bad}?text=body&bad_rows=skip")
    assert code == 0 and [line.split("\t")[0] for line in out.splitlines()] == ["3", "1"]
    assert "skipped 1 bad row" in err
