"""textcw.model_words and ``textcw inspect --top-words``: the words a model weighs most for
each label, with their standard deviations, against the weights read directly."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import textcw
from textcw.errors import InputError, ParameterError
from textcw.model_words import top_words
from tests.cli_run import one_line_error, run
from tests.test_explain import corpus


def fitted(learner: str, n_classes: int, featurizer: str = "binary-bow", **params):
    docs, labels = corpus(n_classes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # calibration on few documents warns
        return textcw.make_pipeline(featurizer, learner, probability="raw", **params).fit(docs, labels)


def expected(model, n: int) -> dict:
    """``{label: [(word, weight, sd)]}`` from coef_, sigma_ and the vocabulary, one label at a time."""
    featurizer, learner = model.steps[0][1], model.steps[-1][1]
    words = {column: word for word, column in featurizer.vocabulary_.items()}
    coef = np.asarray(learner.coef_)
    sigma = getattr(learner, "sigma_", None)
    rows = {learner.classes_[1]: (coef[0], 0), learner.classes_[0]: (-coef[0], 0)} if coef.shape[0] == 1 \
        else {label: (coef[k], k) for k, label in enumerate(learner.classes_)}
    out = {}
    for label in learner.classes_:
        weights, block = rows[label]
        ranked = sorted(range(len(words)), key=lambda j: (-weights[j], j))
        out[label] = [(words[j], weights[j], None if sigma is None else np.sqrt(sigma[block, j]))
                      for j in ranked[:n] if weights[j] > 0]
    return out


@pytest.mark.parametrize("learner, n_classes", [("arow", 2), ("cw-stdev", 3), ("pa1", 2), ("scw1", 4)])
def test_the_top_words_are_the_largest_weights_of_each_label(learner, n_classes):
    model = fitted(learner, n_classes)
    got = {lw.label: [(w.word, w.weight, w.sd) for w in lw.words] for lw in top_words(model, 5)}
    want = expected(model, 5)
    assert list(got) == list(model.classes_)
    assert got.keys() == want.keys()
    for label in got:
        assert len(got[label]) == len(want[label]) > 0
        for (word, weight, sd), (word2, weight2, sd2) in zip(got[label], want[label]):
            assert word == word2 and weight == pytest.approx(weight2, abs=0, rel=1e-15)
            assert (sd is None) == (sd2 is None) and (sd is None or sd == pytest.approx(sd2, rel=1e-15))
    # the class-specific words lead their own label: the corpus is built from w<k>x<j> words
    for k in range(n_classes):
        assert got[f"c{k}"][0][0].startswith(f"w{k}x")


def test_hashed_models_are_refused_with_a_pointer_to_explain():
    model = fitted("arow", 2, featurizer="hashing")
    with pytest.raises(InputError, match="keeps no vocabulary.*--explain"):
        top_words(model, 3)


@pytest.mark.parametrize("n", [0, -1, 2.5, True, "3"])
def test_a_bad_count_is_refused(n):
    with pytest.raises(ParameterError, match="how many words"):
        top_words(fitted("arow", 2), n)


def test_inspect_top_words_prints_them_and_their_json(tmp_path, capsys):
    model = fitted("arow", 3)
    path = tmp_path / "m.textcw-model"
    textcw.save(model, path)
    want = expected(model, 2)
    code, out, err = run(capsys, "inspect", path, "--top-words", 2)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "c0: the 2 words weighing most towards it (weight, its standard deviation, and the weight in deviations)"
    word, weight, sd = want["c0"][0]
    assert lines[1] == f"  {weight:+9.4f}  sd {sd:.4f}  z {weight / sd:5.1f}  {word}"
    code, out, err = run(capsys, "inspect", path, "--top-words", 2, "--json")
    reply = json.loads(out)
    assert [entry["label"] for entry in reply["labels"]] == ["c0", "c1", "c2"]
    assert [(w["word"], w["weight"], w["sd"]) for w in reply["labels"][1]["words"]] == \
        [(word, float(weight), float(sd)) for word, weight, sd in want["c1"]]
    # an exported model (arrays and JSON) lists the same words
    export = tmp_path / "m.textcw"
    assert run(capsys, "export", path, export)[0] == 0
    code, out, err = run(capsys, "inspect", export, "--top-words", 2, "--json")
    assert code == 0 and json.loads(out) == reply


def test_inspect_top_words_of_a_hashed_model_says_what_to_do_instead(tmp_path, capsys):
    path = tmp_path / "h.textcw-model"
    textcw.save(fitted("arow", 2, featurizer="hashing"), path)
    code, out, err = run(capsys, "inspect", path, "--top-words", 3)
    assert code == 1 and "--explain" in one_line_error(err)
