"""`textcw train --probability calibrated|raw`, calibrated pipelines, and the online mistake curve."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.metrics import log_loss
from sklearn.pipeline import Pipeline

import textcw
from cli_run import one_line_error, run
from textcw.errors import ParameterError
from textcw.learners.calibrated_pipeline import CalibratedPipeline, resolve_probability
from textcw.learners.temperature import TemperatureScaling
from textcw.persist import load, save
from textcw.pipeline import load_corpus

CORPUS = "synthetic-text:600:3"


def _train(capsys, tmp_path, *options, name="m.textcw-model"):
    model_file = tmp_path / name
    code, out, err = run(capsys, "train", "--corpus", CORPUS, "--learner", "cw-stdev", "--no-cache",
                         "--out", str(model_file), "--json", *options)
    assert code == 0, err
    return json.loads(out), load(model_file)


def test_calibrated_by_default_raw_on_request_same_labels_and_accuracy(capsys, tmp_path):
    calibrated, model = _train(capsys, tmp_path)
    raw, raw_model = _train(capsys, tmp_path, "--probability", "raw", name="raw.textcw-model")
    test = load_corpus(CORPUS, "test")
    assert calibrated["probability"] == "calibrated" and raw["probability"] == "raw"
    assert isinstance(model, CalibratedPipeline) and type(raw_model) is Pipeline
    assert calibrated["calibration"]["record"] == "cross-fit" and raw["calibration"] is None
    assert calibrated["calibration"] == model.probability_calibration_.to_dict()
    # the learner is fitted exactly as before: the same labels, accuracy and online mistakes
    np.testing.assert_array_equal(model.predict(test.data), raw_model.predict(test.data))
    np.testing.assert_array_equal(model[-1].coef_, raw_model[-1].coef_)
    assert calibrated["accuracy"] == raw["accuracy"] and calibrated["mistakes"] == raw["mistakes"]
    proba = model.predict_proba(test.data)
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(test.data))
    assert calibrated["log_loss"] == pytest.approx(log_loss(test.labels, proba, labels=model.classes_))
    # raw: the learner's own (Gaussian) probabilities, as every model saved before
    X = raw_model[0].transform(test.data)
    np.testing.assert_array_equal(raw_model.predict_proba(test.data), raw_model[-1].predict_proba(X))
    expected = model.probability_calibration_.predict_proba(model[-1], X)
    np.testing.assert_array_equal(proba, expected)
    assert not np.allclose(proba, raw_model.predict_proba(test.data))


def test_the_curve_is_the_first_pass_online_mistakes(capsys, tmp_path):
    result, _ = _train(capsys, tmp_path)
    curve = result["online_mistake_curve"]
    n = result["n_train"]
    assert len(curve["documents"]) == len(curve["mistakes"]) == 100
    assert curve["documents"][-1] == n and np.all(np.diff(curve["documents"]) > 0)
    assert np.all(np.diff(curve["mistakes"]) >= 0)
    # every 1% of the documents, and the last point is the first pass's count
    np.testing.assert_array_equal(curve["documents"], np.linspace(0, n, 101).round().astype(int)[1:])
    assert curve["mistakes"][-1] == result["mistakes"][0]
    assert all(0 <= m <= d for d, m in zip(curve["documents"], curve["mistakes"]))
    code, out, _ = run(capsys, "train", "--corpus", CORPUS, "--learner", "maxent", "--no-cache", "--json")
    assert code == 0 and json.loads(out)["online_mistake_curve"] is None  # a batch learner: no pass


def test_predict_shows_the_calibrated_probability(capsys, tmp_path):
    _, model = _train(capsys, tmp_path)
    docs = load_corpus(CORPUS, "test").data[:5]
    code, out, err = run(capsys, "predict", str(tmp_path / "m.textcw-model"), "--proba",
                         stdin="\n".join(docs).encode())
    assert code == 0, err
    proba = model.predict_proba(docs)
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[0] for r in rows] == [str(label) for label in model.predict(docs)]
    assert [float(r[1]) for r in rows] == pytest.approx(proba.max(axis=1), abs=1e-6)


def test_a_model_saved_before_calibration_still_loads(tmp_path):
    """Models saved before this change are plain pipelines: they load and keep their learner's
    own probabilities."""
    train = load_corpus(CORPUS, "train")
    old = textcw.make_pipeline("binary-bow", "cw-var", probability="raw").fit(train.data, train.labels)
    assert type(old) is Pipeline and not hasattr(old, "probability_calibration_")
    save(old, tmp_path / "old.textcw-model")
    back = load(tmp_path / "old.textcw-model")
    docs = load_corpus(CORPUS, "test").data
    np.testing.assert_array_equal(back.predict_proba(docs), old[-1].predict_proba(old[0].transform(docs)))


def test_make_pipeline_calibrates_online_learners():
    train = load_corpus(CORPUS, "train")
    model = textcw.make_pipeline("binary-bow", "pa1")
    assert isinstance(model, CalibratedPipeline) and model.textcw_components_["learner"]["name"] == "pa1"
    model.fit(train.data, train.labels)
    assert isinstance(model.probability_calibration_, TemperatureScaling)
    assert model.textcw_components_["probability"] == model.probability_calibration_.to_dict()
    reference = textcw.make_learner("pa1").fit(model[0].transform(train.data), train.labels)
    np.testing.assert_array_equal(model[-1].coef_, reference.coef_)
    proba = model.predict_proba(train.data[:50])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(model.classes_[proba.argmax(axis=1)], model.predict(train.data[:50]))
    # the batch baselines keep their own probabilities unless asked
    assert type(textcw.make_pipeline("binary-bow", "maxent")) is Pipeline
    assert isinstance(textcw.make_pipeline("binary-bow", "svm", probability="calibrated"), CalibratedPipeline)


def test_bad_probability_values_are_clear_errors(capsys):
    with pytest.raises(ParameterError, match="probability 'sharp' is invalid; give 'calibrated'"):
        textcw.make_pipeline("binary-bow", "pa1", probability="sharp")
    with pytest.raises(ParameterError, match="learner 'scoreless' has no decision_function"):
        resolve_probability("calibrated", "scoreless", object(), online=True)
    assert resolve_probability(None, "scoreless", object(), online=True) == "raw"
    code, _, err = run(capsys, "train", "--corpus", CORPUS, "--learner", "pa1", "--probability", "sharp")
    assert code != 0 and "--probability 'sharp' is invalid; give calibrated" in one_line_error(err)
    code, _, err = run(capsys, "train", "--corpus", CORPUS, "--learner", "pa1", "--shards", "2",
                       "--probability", "calibrated")
    assert code != 0 and "--probability calibrated applies to ordinary and stream training" in one_line_error(err)
    with pytest.raises(ParameterError, match="takes no fit parameters"):
        textcw.make_pipeline("binary-bow", "pa1").fit(["a b", "c d"], [0, 1], learner__sample_weight=[1, 1])


@pytest.mark.parametrize("options,expected", [
    ((), None),  # the text output reports the ECE of the model's (calibrated) probabilities
    (("--probability", "raw"), "raw"),
    (("--json",), None),
    (("--out", "{tmp}/m.textcw-model"), None),
    (("--probability", "calibrated"), "calibrated"),
])
def test_the_default_probability_is_what_every_output_reports(capsys, tmp_path, monkeypatch, options, expected):
    import textcw.pipeline

    asked, real_train = [], textcw.pipeline.train

    def recording_train(*args, **kwargs):
        asked.append(kwargs["probability"])
        return real_train(*args, **kwargs)

    monkeypatch.setattr(textcw.pipeline, "train", recording_train)
    options = [o.format(tmp=tmp_path) for o in options]
    code, out, err = run(capsys, "train", "--corpus", CORPUS, "--learner", "pa1", "--no-cache", *options)
    assert code == 0, err
    assert asked == [expected]
    if "--json" in options:
        assert json.loads(out)["probability"] == "calibrated"
    elif expected != "raw":
        assert "  ECE 0." in out
    else:
        assert "ECE" not in out
