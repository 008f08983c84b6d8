"""A document with no known feature gets the labels of the held-out documents that had none
(``textcw.learners.unknown_documents``), the same way in every path that labels it: the
pipeline, ``Calibrated``, ``textcw train``'s test, ``top_k``, ``explain`` and an export."""

from __future__ import annotations

import pickle
from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp

import textcw
from csv_corpus import csv_corpus
from textcw.errors import ModelFileError, ParameterError
from textcw.explain import explain, format_explanation, top_k
from textcw.features.native import KernelRows
from textcw.learners.calibrated import fit_calibration
from textcw.learners.temperature import TemperatureScaling, fit_temperature
from textcw.learners.unknown_documents import (
    chosen_unknown,
    leave_one_out_log_loss,
    no_known_feature,
    unknown_probabilities,
)
from textcw.pipeline import train

WORDS = {"english": "the cat sat on a mat and ran home", "german": "der hund lief nach haus und schlief ein",
         "french": "le chat est sur un tapis et dort bien"}


def _task(n: int, seed: int):
    """Short sentences of three languages (``english`` 40%, the two others 20% each) and, 20%,
    ``zh``: one token that no other document has, as a sentence without spaces is to the
    tokenizer. So the documents with no known word are ``zh``, not the most frequent label."""
    rng = np.random.default_rng(seed)
    docs, y = [], []
    for i in range(n):
        label = ("english", "english", "german", "french", "zh")[i % 5]
        if label == "zh":
            docs.append("".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz"), size=12)) + str(seed * n + i))
        else:
            docs.append(" ".join(rng.choice(WORDS[label].split(), size=int(rng.integers(3, 7)))))
        y.append(label)
    return docs, np.array(y, dtype=object)


def test_rows_with_no_non_zero_value_in_each_form():
    X = sp.csr_matrix(np.array([[0.0, 1.0], [0.0, 0.0], [2.0, 0.0]]))
    X.data[X.indices == 0] = 0.0  # an explicit zero: still no known feature
    assert no_known_feature(X).tolist() == [False, True, True]
    assert no_known_feature(X.tocsc()).tolist() == [False, True, True]
    assert no_known_feature(X.toarray()).tolist() == [False, True, True]
    rows = KernelRows(X.indptr, X.indices, X.data, X.shape)  # the service's compressed rows
    assert no_known_feature(rows).tolist() == [False, True, True]


def test_the_estimate_and_its_leave_one_out_log_loss_against_a_direct_computation():
    counts, frequencies = np.array([5.0, 0.0, 2.0]), np.array([0.2, 0.5, 0.3])
    q = unknown_probabilities(counts, frequencies)
    np.testing.assert_allclose(q, [(5 + 0.6) / 10, 1.5 / 10, (2 + 0.9) / 10], rtol=1e-15)
    losses = []
    for label, c in enumerate(counts):  # each empty row under the estimate of the others
        others = counts.copy()
        others[label] -= 1
        losses += [-np.log(unknown_probabilities(others, frequencies)[label])] * int(c)
    assert leave_one_out_log_loss(counts, frequencies) == pytest.approx(np.mean(losses), rel=1e-14)


def test_the_estimate_is_kept_only_where_it_predicts_the_empty_rows_better():
    target = np.array([0, 0, 0, 1, 2, 2, 0, 1])
    empty = np.array([True, True, True, False, False, False, False, False])
    # the temperature gave the three empty rows (label 0) 1/3 each: the estimate does better
    q = chosen_unknown(target, empty, np.full((3, 3), 1 / 3), 3)
    np.testing.assert_allclose(q, unknown_probabilities(np.array([3.0, 0, 0]), np.array([4, 2, 2]) / 8))
    # a temperature that gave them 0.9 already knew more: kept
    assert chosen_unknown(target, empty, np.tile([0.9, 0.05, 0.05], (3, 1)), 3) is None
    assert chosen_unknown(target, np.zeros(8, dtype=bool), np.empty((0, 3)), 3) is None


def test_pipeline_labels_unknown_documents_as_the_held_out_ones_in_every_path(tmp_path):
    docs, labels = _task(500, seed=1)
    # without an intercept the learner scores such a document 0 for every label: classes_[0]
    model = textcw.make_pipeline("tfidf", "cw-stdev", train_defaults=True, fit_intercept=False).fit(docs, labels)
    scaling = model.probability_calibration_
    assert scaling.unknown is not None
    classes = list(model.classes_)
    assert classes[int(np.argmax(scaling.unknown))] == "zh"
    assert scaling.unknown[classes.index("zh")] > 0.9
    unknown = ["qwertyuiopasdf", "zzzzzzzzzzzz"]
    test = unknown + ["the cat sat", "der hund lief"]
    proba = model.predict_proba(test)
    np.testing.assert_array_equal(proba[:2], [scaling.unknown] * 2)
    assert list(model.predict(test)) == ["zh", "zh", "english", "german"]
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(test))
    # the learner alone knows nothing of it: the calibration's label is the pipeline's
    assert list(model[-1].predict(model[:-1].transform(unknown))) == ["english", "english"]
    ranked = top_k(model, test, 2)
    np.testing.assert_array_equal(ranked.labels[:, 0], model.predict(test))
    assert ranked.labels[0, 1] == model.classes_[np.argsort(scaling.unknown)[-2]]
    why = explain(model, unknown[0])
    assert why.unknown and why.label == "zh" and why.terms == ()
    assert why.margin == why.intercept == 0.0  # no word and no intercept: the scores tie
    assert "no word the model knows" in format_explanation(why)[-1]
    assert not explain(model, "the cat sat").unknown
    # an export and a pickle keep it
    textcw.export_model(model, tmp_path / "m.textcw")
    again = textcw.import_model(tmp_path / "m.textcw")
    assert again.probability_calibration_.unknown == scaling.unknown
    np.testing.assert_array_equal(again.predict(test), model.predict(test))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict_proba(test), proba)


def test_textcw_train_scores_its_test_split_as_the_model_labels_it(tmp_path):
    docs, labels = _task(500, seed=2)
    test_docs, test_labels = _task(200, seed=3)
    result = train(csv_corpus(tmp_path, (docs, labels), (test_docs, test_labels)), "cw-stdev",
                   params={"fit_intercept": False}, cache=False)
    assert result.model.probability_calibration_.unknown is not None
    predicted = result.model.predict(test_docs)
    assert result.accuracy == pytest.approx(np.mean(predicted == test_labels), abs=1e-12)
    assert np.all(predicted[test_labels == "zh"] == "zh")


def test_a_calibration_without_documents_that_had_no_known_word_is_unchanged():
    words = [f"w{i}" for i in range(40)]
    rng = np.random.default_rng(4)
    docs = [" ".join(rng.choice(words, size=5)) for _ in range(300)]  # every word seen many times
    labels = np.array(["a" if "w1" in d.split() or "w2" in d.split() else "b" for d in docs], dtype=object)
    model = textcw.make_pipeline("tfidf", "arow", train_defaults=True).fit(docs, labels)
    assert model.probability_calibration_.unknown is None
    assert "unknown" not in model.probability_calibration_.to_dict()


def test_stored_probabilities_are_checked_when_read_back(tmp_path):
    data = TemperatureScaling("raw", 1.0, "cross-fit", unknown=(0.25, 0.75)).to_dict()
    assert data["unknown"] == [0.25, 0.75]
    assert TemperatureScaling.from_dict(data).unknown == (0.25, 0.75)
    assert TemperatureScaling.from_dict({k: v for k, v in data.items() if k != "unknown"}).unknown is None
    for bad, message in (([0.5, 0.6], "must sum to 1"), ([1.0], "two or more probabilities"),
                         ([0.0, 1.0], "two or more probabilities in"), ("0.5,0.5", "two or more"),
                         ([True, 0.5], "two or more")):
        with pytest.raises(ParameterError, match=message):
            TemperatureScaling.from_dict({**data, "unknown": bad})
    docs, labels = _task(500, seed=5)
    model = textcw.make_pipeline("tfidf", "cw-stdev", train_defaults=True).fit(docs, labels)
    model.probability_calibration_ = TemperatureScaling.from_dict({**model.probability_calibration_.to_dict(),
                                                                   "unknown": [0.5, 0.5]})
    model.textcw_components_["probability"] = model.probability_calibration_.to_dict()
    textcw.export_model(model, tmp_path / "m.textcw")
    with pytest.raises(ModelFileError, match="gives 2 probabilities for a document with no known word, for a "
                                             "model of 4 labels"):
        textcw.import_model(tmp_path / "m.textcw")


def test_a_calibration_pickled_before_unknown_existed_has_none():
    scaling = TemperatureScaling("raw", 1.0, "cross-fit")
    state = dict(scaling.__dict__)
    del state["unknown"]
    old = object.__new__(TemperatureScaling)
    object.__setattr__(old, "__dict__", state)
    again = pickle.loads(pickle.dumps(old))
    assert again.unknown is None and again == scaling


def test_the_temperature_is_fitted_to_the_rows_it_will_scale():
    rng = np.random.default_rng(6)
    target = rng.integers(0, 3, size=400)
    scores = rng.normal(size=(400, 3))
    scores[np.arange(400), target] += 2.0
    empty = np.zeros(400, dtype=bool)
    empty[:40] = True
    scores[empty] = 0.0  # what a learner without an intercept scores them
    settings = dict(margin="raw", record="cross-fit", method="auto")
    target[:40] = 2  # every empty row has label 2: the estimate predicts them, 1/3 does not
    kept = fit_calibration(scores, None, None, target, empty, **settings)
    without = fit_temperature(scores[40:], None, target[40:], **settings)
    assert kept.unknown is not None and np.argmax(kept.unknown) == 2
    assert replace(kept, unknown=None) == without
    target[:40] = np.arange(40) % 3  # spread as evenly as the labels: the estimate adds nothing
    rejected = fit_calibration(scores, None, None, target, empty, **settings)
    assert rejected == fit_temperature(scores, None, target, **settings)  # as with no empty row
    none = fit_calibration(scores[40:], None, None, target[40:], empty[40:], **settings)
    assert none == without
