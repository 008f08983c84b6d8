"""Saving and loading models: round trips, manifests, and refusal of damaged files."""

from __future__ import annotations

import json
import warnings

import joblib
import numpy as np
import pytest
from sklearn.pipeline import Pipeline

import textcw
from textcw.errors import ModelFileError
from textcw.persist import manifest_path

DOCS = ["cheap pills buy now", "meeting at noon tomorrow", "buy cheap watches now",
        "project meeting notes attached", "win money now cheap", "notes from the noon meeting"] * 5
LABELS = ["spam", "ham", "spam", "ham", "spam", "ham"] * 5


@pytest.fixture
def model():
    pipe = Pipeline([("featurizer", textcw.make_featurizer("binary-bow")),
                     ("learner", textcw.make_learner("cw-stdev", random_state=0))])
    pipe.fit(DOCS, LABELS)
    pipe.textcw_components_ = {"learner": {"name": "cw-stdev", "params": {}, "provider": "textcw"}}
    return pipe


def test_round_trip_and_plain_joblib(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib", info={"corpus": "toy"})
    loaded = textcw.load(path)
    probe = ["cheap watches", "noon meeting notes"]
    assert list(loaded.predict(probe)) == ["spam", "ham"]
    np.testing.assert_array_equal(loaded.predict_proba(probe), model.predict_proba(probe))
    plain = joblib.load(path)
    assert isinstance(plain, Pipeline) and list(plain.predict(probe)) == ["spam", "ham"]
    manifest = json.loads(manifest_path(path).read_text())
    assert manifest["format"] == "textcw-model" and manifest["info"] == {"corpus": "toy"}
    assert manifest["components"]["learner"]["name"] == "cw-stdev"
    assert manifest["size"] == path.stat().st_size and len(manifest["sha256"]) == 64
    assert set(manifest["dependencies"]) >= {"numpy", "scikit-learn", "numba"}
    assert not list(tmp_path.glob(".*tmp"))  # no temporary files left behind


def test_saving_is_deterministic(model, tmp_path):
    a = textcw.save(model, tmp_path / "a.joblib")
    b = textcw.save(model, tmp_path / "b.joblib")
    assert a.read_bytes() == b.read_bytes()


def test_tampered_file_is_refused(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="does not match the sha256 in its manifest"):
        textcw.load(path)


def test_truncated_file_is_refused(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    path.write_bytes(path.read_bytes()[:100])
    with pytest.raises(ModelFileError, match="is 100 bytes but its manifest records .*truncated"):
        textcw.load(path)


def test_missing_file_and_missing_manifest(model, tmp_path):
    with pytest.raises(ModelFileError, match="does not exist"):
        textcw.load(tmp_path / "nothing.joblib")
    joblib.dump(model, tmp_path / "bare.joblib")
    with pytest.raises(ModelFileError, match="has no manifest bare.joblib.json"):
        textcw.load(tmp_path / "bare.joblib")


def test_foreign_manifest_is_refused(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    manifest_path(path).write_text('{"name": "something else"}')
    with pytest.raises(ModelFileError, match="is not a textcw model manifest"):
        textcw.load(path)
    manifest_path(path).write_text("\x00garbage")
    with pytest.raises(ModelFileError, match="is not valid JSON"):
        textcw.load(path)


def test_missing_plugin_is_named(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    manifest = json.loads(manifest_path(path).read_text())
    manifest["plugins"] = {"textcw-not-installed": "1.2.3"}
    manifest_path(path).write_text(json.dumps(manifest))
    with pytest.raises(ModelFileError, match="needs the plugin 'textcw-not-installed' .*pip install textcw-not-installed"):
        textcw.load(path)


def test_version_mismatch_warns_with_both_versions(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    manifest = json.loads(manifest_path(path).read_text())
    manifest["textcw_version"] = "0.0.1"
    manifest_path(path).write_text(json.dumps(manifest))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        textcw.load(path)
    assert any(f"saved by textcw 0.0.1; this is textcw {textcw.__version__}" in str(w.message) for w in caught)


def test_save_errors(model, tmp_path):
    with pytest.raises(ModelFileError, match="is a folder"):
        textcw.save(model, tmp_path)
    with pytest.raises(ModelFileError, match="does not exist; create it first"):
        textcw.save(model, tmp_path / "no" / "m.joblib")


def test_overwrite_replaces_both_files(model, tmp_path):
    path = tmp_path / "m.joblib"
    textcw.save(model, path)
    other = Pipeline([("featurizer", textcw.make_featurizer("binary-bow")),
                      ("learner", textcw.make_learner("perceptron", random_state=0))]).fit(DOCS, LABELS)
    textcw.save(other, path)
    assert type(textcw.load(path)[-1]).__name__ == "Perceptron"
