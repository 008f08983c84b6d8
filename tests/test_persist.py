"""Saving and loading models: round trips, the manifest, and refusal of damaged or foreign files."""

from __future__ import annotations

import json
import warnings
import zipfile

import joblib
import numpy as np
import pytest
from sklearn.pipeline import Pipeline

import textcw
from textcw.errors import ModelFileError
from textcw.persist import MANIFEST_MEMBER, PAYLOAD_MEMBER

DOCS = ["cheap pills buy now", "meeting at noon tomorrow", "buy cheap watches now",
        "project meeting notes attached", "win money now cheap", "notes from the noon meeting"] * 5
LABELS = ["spam", "ham", "spam", "ham", "spam", "ham"] * 5
PROBE = ["cheap watches", "noon meeting notes"]


@pytest.fixture
def model():
    pipe = Pipeline([("featurizer", textcw.make_featurizer("binary-bow")),
                     ("learner", textcw.make_learner("cw-stdev", random_state=0))])
    pipe.fit(DOCS, LABELS)
    pipe.textcw_components_ = {"learner": {"name": "cw-stdev", "params": {}, "provider": "textcw"}}
    return pipe


def rewrite(path, *, manifest=None, payload=None, names=(MANIFEST_MEMBER, PAYLOAD_MEMBER)):
    """Rewrite a saved model file with a changed manifest and/or payload (a consistent archive)."""
    with zipfile.ZipFile(path) as archive:
        old_manifest = json.loads(archive.read(MANIFEST_MEMBER))
        old_payload = archive.read(PAYLOAD_MEMBER)
    new_manifest = manifest(old_manifest) if manifest else old_manifest
    new_payload = payload(old_payload) if payload else old_payload
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in zip(names, (json.dumps(new_manifest).encode(), new_payload)):
            archive.writestr(name, data)


def test_round_trip_and_manifest(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib", info={"corpus": "toy"})
    loaded = textcw.load(path)
    assert list(loaded.predict(PROBE)) == ["spam", "ham"]
    np.testing.assert_array_equal(loaded.predict_proba(PROBE), model.predict_proba(PROBE))
    manifest = textcw.read_manifest(path)
    assert manifest["format"] == "textcw-model" and manifest["info"] == {"corpus": "toy"}
    assert manifest["components"]["learner"]["name"] == "cw-stdev"
    assert manifest["format_version"] == 3 and len(manifest["payload"]["sha256"]) == 64
    assert set(manifest["dependencies"]) >= {"numpy", "scikit-learn", "numba"}
    # one self-describing file: nothing beside it, no temporary files left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.joblib"]
    with zipfile.ZipFile(path) as archive:  # the payload is plain joblib for those who need it
        assert list(joblib.load(archive.open(PAYLOAD_MEMBER)).predict(PROBE)) == ["spam", "ham"]


def test_saving_is_deterministic(model, tmp_path):
    a = textcw.save(model, tmp_path / "a.joblib")
    b = textcw.save(model, tmp_path / "b.joblib")
    assert a.read_bytes() == b.read_bytes()


def test_flipped_payload_byte_is_refused_before_unpickling(model, tmp_path, monkeypatch):
    path = textcw.save(model, tmp_path / "m.joblib")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF  # inside the payload, which is most of the file
    path.write_bytes(bytes(data))
    monkeypatch.setattr(joblib, "load", lambda *a, **k: pytest.fail("unpickled a damaged file"))
    with pytest.raises(ModelFileError, match="is damaged or was modified after saving"):
        textcw.load(path)


def test_payload_replaced_consistently_but_not_its_digest_is_refused(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    rewrite(path, payload=lambda p: p[:-1] + bytes([p[-1] ^ 1]))
    with pytest.raises(ModelFileError, match="does not match the sha256 in its manifest"):
        textcw.load(path)
    rewrite(path, payload=lambda p: p + b"\x00")
    with pytest.raises(ModelFileError, match="bytes but its manifest records"):
        textcw.load(path)


@pytest.mark.parametrize("keep", [0, 1, 30, 100, -22, -1])
def test_truncated_file_is_refused(model, tmp_path, keep):
    path = textcw.save(model, tmp_path / "m.joblib")
    data = path.read_bytes()
    path.write_bytes(data[:keep] if keep >= 0 else data[:len(data) + keep])
    with pytest.raises(ModelFileError, match="truncated or damaged|not a textcw model file"):
        textcw.load(path)


def test_missing_folder_and_foreign_files(model, tmp_path):
    with pytest.raises(ModelFileError, match="does not exist"):
        textcw.load(tmp_path / "nothing.joblib")
    with pytest.raises(ModelFileError, match="is a folder, not a model file"):
        textcw.load(tmp_path)
    joblib.dump(model, tmp_path / "bare.joblib")  # a plain pickle is never unpickled
    with pytest.raises(ModelFileError, match="is not a textcw model file"):
        textcw.load(tmp_path / "bare.joblib")
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as archive:
        archive.writestr("readme.txt", "hello")
    with pytest.raises(ModelFileError, match=r"an archive but not a textcw model file \(members \['readme.txt'\]"):
        textcw.load(other)


def test_foreign_or_broken_manifest_is_refused(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    rewrite(path, manifest=lambda m: {"name": "something else"})
    with pytest.raises(ModelFileError, match="holds no textcw model manifest"):
        textcw.load(path)
    path = textcw.save(model, tmp_path / "m.joblib")
    rewrite(path, manifest=lambda m: {k: v for k, v in m.items() if k != "payload"})
    with pytest.raises(ModelFileError, match="does not describe its payload"):
        textcw.load(path)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(MANIFEST_MEMBER, b"\x00garbage")
        archive.writestr(PAYLOAD_MEMBER, b"")
    with pytest.raises(ModelFileError, match="is not valid JSON"):
        textcw.load(path)


def test_newer_format_asks_for_an_upgrade(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    rewrite(path, manifest=lambda m: {**m, "format_version": 99})
    with pytest.raises(ModelFileError, match="uses model format 99, newer than this textcw .* upgrade textcw"):
        textcw.load(path)


def test_missing_plugin_is_named(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    rewrite(path, manifest=lambda m: {**m, "plugins": {"textcw-not-installed": "1.2.3"}})
    with pytest.raises(ModelFileError, match="needs the plugin 'textcw-not-installed' .*pip install textcw-not-installed"):
        textcw.load(path)


def test_version_mismatch_warns_with_both_versions(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    rewrite(path, manifest=lambda m: {**m, "textcw_version": "0.0.1"})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        textcw.load(path)
    assert any(f"saved by textcw 0.0.1; this is textcw {textcw.__version__}" in str(w.message) for w in caught)


def test_save_errors(model, tmp_path):
    with pytest.raises(ModelFileError, match="is a folder"):
        textcw.save(model, tmp_path)
    with pytest.raises(ModelFileError, match="does not exist; create it first"):
        textcw.save(model, tmp_path / "no" / "m.joblib")


def test_failed_save_keeps_the_old_file(model, tmp_path, monkeypatch):
    path = textcw.save(model, tmp_path / "m.joblib")
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(zipfile.ZipFile, "writestr", broken)
    with pytest.raises(ModelFileError, match="cannot write .*No space left on device; nothing was changed"):
        textcw.save(model, path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["m.joblib"]


def test_overwrite_replaces_the_model(model, tmp_path):
    path = tmp_path / "m.joblib"
    textcw.save(model, path)
    other = Pipeline([("featurizer", textcw.make_featurizer("binary-bow")),
                      ("learner", textcw.make_learner("perceptron", random_state=0))]).fit(DOCS, LABELS)
    textcw.save(other, path)
    assert type(textcw.load(path)[-1]).__name__ == "Perceptron"
