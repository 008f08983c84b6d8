"""A streamed model's probabilities: a temperature fitted to the first pass's progressive-validation
scores (the self-tuning chunks left out), bounded in memory, the model itself unchanged."""

from __future__ import annotations

import json

import numpy as np
import pytest

import textcw
from textcw.learners.calibrated_pipeline import CalibratedPipeline
from textcw.learners.temperature import fit_temperature
from textcw.scale import train_stream
from textcw.scale.calibration import RECORD, HonestScores
from textcw.scale.tuning import TUNE_DOCUMENTS

SMALL_HASH = {"n_features": 2**16}


def learner_state(result) -> dict:
    return {k: np.asarray(v) for k, v in result.model[-1].fitted_state().items()}


@pytest.fixture(scope="module")
def arow_runs():
    kwargs = dict(chunk_size=5_000, featurizer_params=SMALL_HASH, workers=1)
    return (train_stream("synthetic-text:60000", "arow", probability="calibrated", **kwargs),
            train_stream("synthetic-text:60000", "arow", probability="raw", **kwargs))


def test_calibration_leaves_the_model_and_its_labels_as_they_were(arow_runs):
    calibrated, raw = arow_runs
    one, two = learner_state(calibrated), learner_state(raw)
    assert one.keys() == two.keys() and one
    for name in one:
        assert np.array_equal(one[name], two[name]), name
    assert calibrated.accuracy == raw.accuracy and calibrated.mistakes == raw.mistakes
    assert isinstance(calibrated.model, CalibratedPipeline) and not isinstance(raw.model, CalibratedPipeline)
    assert calibrated.to_dict()["probability"] == "calibrated" and raw.to_dict()["probability"] == "raw"


def test_the_temperature_rests_on_the_chunks_after_the_tuning_and_is_honest(arow_runs):
    calibrated, raw = arow_runs
    scaling = calibrated.model.probability_calibration_
    assert scaling.record == RECORD and 0 < scaling.inverse_temperature < np.inf
    # 60,000 training documents in chunks of 5,000: the tuning takes the first 30,000 (6 chunks),
    # the 30,000 after them are the recorded ones
    training = calibrated.model.textcw_components_["training"]
    assert calibrated.n_train == 60_000
    assert training["tuned_on"] == 30_000 and training["calibrated_on"] == 60_000 - 30_000
    # the raw Gaussian probabilities are far off; the temperature brings them close
    assert raw.metrics["expected_calibration_error"] > 0.1
    assert calibrated.metrics["expected_calibration_error"] < 0.05
    assert calibrated.metrics["log_loss"] < raw.metrics["log_loss"]
    test = textcw.load_corpus("synthetic-text:60000", "test")
    docs = list(test.data[:200])
    proba = calibrated.model.predict_proba(docs)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert list(calibrated.model.classes_[proba.argmax(axis=1)]) == list(calibrated.model.predict(docs))


def test_a_saved_calibrated_stream_model_gives_the_same_probabilities(arow_runs, tmp_path):
    calibrated, _ = arow_runs
    path = tmp_path / "m.textcw-model"
    textcw.save(calibrated.model, path)
    loaded = textcw.load(path)
    docs = list(textcw.load_corpus("synthetic-text:60000", "test").data[:100])
    np.testing.assert_array_equal(loaded.predict_proba(docs), calibrated.model.predict_proba(docs))


class _Scorer:
    """A stand-in model: scores a chunk by its first column, variance 1."""

    classes_ = np.array(["neg", "pos"])

    def decision_function(self, X):
        return np.asarray(X[:, 0], dtype=float)

    def margin_variance(self, X):
        return np.ones(X.shape[0])


def test_honest_scores_keep_the_latest_documents_within_the_limit_and_drop_the_tuning_ones():
    honest = HonestScores(limit=250)
    honest.add(object(), np.zeros((100, 1)), ["neg"] * 100, tuning=True)  # nothing learned yet: skipped
    assert honest.n_documents == 0
    model = _Scorer()
    honest.add(model, np.full((100, 1), 9.0), ["pos"] * 100, tuning=True)
    assert honest.n_documents == 100
    chunks = []
    for i in range(6):  # after the tuning: its chunk gives way, then the oldest beyond the limit
        X = np.linspace(-1, 1, 100).reshape(-1, 1) * (i + 1)
        labels = np.where(X[:, 0] + np.sin(np.arange(100)) > 0, "pos", "neg")
        honest.add(model, X, labels, tuning=False)
        chunks.append((X[:, 0], labels))
        assert honest.n_documents <= 250 + 100
    assert honest.n_documents == 300  # the last three chunks: dropping the oldest would leave 200 < 250
    kept = chunks[-3:]
    scores = np.concatenate([s for s, _ in kept])
    target = np.concatenate([(labels == "pos").astype(np.int64) for _, labels in kept])
    expected = fit_temperature(scores, np.ones(300), target, margin="auto", record=RECORD)
    assert honest.fit(model) == expected


def test_a_temperature_on_few_honest_scores_says_so():
    from textcw.learners.temperature import CalibrationWarning

    honest = HonestScores()
    honest.add(_Scorer(), np.linspace(-1, 1, 60).reshape(-1, 1), ["neg"] * 30 + ["pos"] * 30, tuning=False)
    with pytest.warns(CalibrationWarning, match="rests on 60 honest scores"):
        assert honest.fit(_Scorer()) is not None


def test_chunks_that_would_leave_the_window_are_not_scored():
    class Counting(_Scorer):
        scored = 0

        def decision_function(self, X):
            type(self).scored += X.shape[0]
            return super().decision_function(X)

    model = Counting()
    everything, skipping = HonestScores(limit=250), HonestScores(limit=250, total=1000)
    for lo in range(0, 1000, 100):
        X = np.linspace(-1, 1, 100).reshape(-1, 1) * (lo + 1)
        labels = np.where(np.sin(np.arange(lo, lo + 100)) + X[:, 0] / (lo + 1) > 0, "pos", "neg")
        before = Counting.scored
        skipping.add(model, X, labels, tuning=False, stop=lo + 100)
        # scored only when fewer than 250 documents come after the chunk: the last three
        assert Counting.scored - before == (100 if 1000 - (lo + 100) < 250 else 0)
        everything.add(model, X, labels, tuning=False)
    assert skipping.n_documents == everything.n_documents == 300
    assert skipping.fit(model) == everything.fit(model)


def test_no_informative_scores_no_temperature():
    honest = HonestScores()
    assert honest.fit(_Scorer()) is None  # nothing recorded
    honest.add(_Scorer(), np.zeros((50, 1)), ["pos"] * 50, tuning=False)  # every score 0
    assert honest.fit(_Scorer()) is None


def test_a_stream_of_one_chunk_keeps_the_learners_own_probabilities():
    result = train_stream("synthetic-text:2000", "arow", chunk_size=5_000, featurizer_params=SMALL_HASH)
    assert not isinstance(result.model, CalibratedPipeline)


def test_a_stream_shorter_than_the_tuning_is_calibrated_on_the_tuning_chunks():
    assert TUNE_DOCUMENTS > 10_000
    result = train_stream("synthetic-text:10000", "pa", chunk_size=1_000, featurizer_params=SMALL_HASH)
    # 10,000 training documents, all in tuning chunks; the first is scored by no model
    assert result.n_train == 10_000 and result.model.textcw_components_["training"]["calibrated_on"] == 9_000
    assert isinstance(result.model, CalibratedPipeline) and result.metrics["expected_calibration_error"] is not None


def test_invalid_probability_is_refused():
    from textcw.errors import ParameterError

    with pytest.raises(ParameterError, match="probability='sharp' is invalid; give 'calibrated' or 'raw'"):
        train_stream("synthetic-text:1000", "pa", probability="sharp")


def test_cli_stream_probabilities_are_calibrated_unless_asked_raw(capsys):
    from cli_run import run

    base = ["train", "--corpus", "synthetic-text:12000", "--learner", "arow", "--featurizer-param",
            "n_features=65536", "--chunk-size", "2000", "--stream", "--json"]
    code, out, _ = run(capsys, *base)
    calibrated = json.loads(out)
    code_raw, out, _ = run(capsys, *base, "--probability", "raw")
    raw = json.loads(out)
    assert code == code_raw == 0
    assert (calibrated["probability"], raw["probability"]) == ("calibrated", "raw")
    assert calibrated["calibration"]["record"] == "stream" and raw["calibration"] is None
    assert calibrated["accuracy"] == raw["accuracy"]
