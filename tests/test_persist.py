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
from textcw.errors import InputError, ModelFileError
from textcw.model_card import CARD_FIELDS, model_card, render_card
from textcw.persist import MANIFEST_MEMBER, PAYLOAD_MEMBER, SUFFIX, read_manifest
from textcw.untrusted import safe_text

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
    assert manifest["format_version"] == 4 and len(manifest["payload"]["sha256"]) == 64
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


def test_missing_plugin_is_named_without_a_command_to_install_a_name_from_the_file(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.joblib")
    rewrite(path, manifest=lambda m: {**m, "plugins": {"textcw-not-installed": "1.2.3"}})
    with pytest.raises(ModelFileError, match="needs the plugin 'textcw-not-installed' .*from a source you "
                       "trust") as info:
        textcw.load(path)
    assert "pip install" not in str(info.value)  # whoever wrote the file chose the name


def test_a_first_party_plugin_is_installed_from_the_source_tree(model, tmp_path, monkeypatch):
    path = textcw.save(model, tmp_path / "m.joblib")
    rewrite(path, manifest=lambda m: {**m, "plugins": {"textcw_Pixels": "1.2.3"}})
    monkeypatch.setattr("textcw.persist._version", lambda name: None)  # as if not installed
    with pytest.raises(ModelFileError, match=r"pip install \./plugins/textcw-pixels\)"):
        textcw.load(path)


def test_a_file_signed_with_the_users_key_gets_the_install_command(model, tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", "k" * 32)
    model.textcw_components_ = {"learner": {"name": "cw-stdev", "provider": "textcw-not-installed"}}
    try:
        path = textcw.save(model, tmp_path / "m.joblib")  # signed; names the plugin its learner came from
    finally:
        del model.textcw_components_
    assert json.loads(zipfile.ZipFile(path).read(MANIFEST_MEMBER))["plugins"] == {"textcw-not-installed": None}
    with pytest.raises(ModelFileError, match=r"\(pip install textcw-not-installed\)"):
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


# ---------------------------------------------------------------------------- format 2, cards, text

def save_format_2(model, path):
    """A model file exactly as textcw wrote it before format 3: two members, no model description."""
    import hashlib
    import io
    import platform

    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    payload = buffer.getvalue()
    manifest = {
        "format": "textcw-model", "format_version": 2, "textcw_version": textcw.__version__,
        "python": platform.python_version(), "dependencies": {"numpy": np.__version__}, "plugins": {},
        "components": model.textcw_components_, "info": {"corpus": "toy", "accuracy": 0.75, "n_train": 24, "n_test": 6},
        "payload": {"member": PAYLOAD_MEMBER, "size": len(payload), "sha256": hashlib.sha256(payload).hexdigest()},
    }
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in ((MANIFEST_MEMBER, json.dumps(manifest, indent=2, sort_keys=True) + "\n"),
                           (PAYLOAD_MEMBER, payload)):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, data)
    return path


def test_format_2_files_still_load_and_have_a_card(model, tmp_path):
    path = save_format_2(model, tmp_path / "old.joblib")  # the old suffix is still accepted
    assert list(textcw.load(path).predict(PROBE)) == ["spam", "ham"]
    card = model_card(path)
    assert card["format_version"] == 2 and card["learner"] == "cw-stdev" and card["accuracy"] == 0.75
    assert card["classes"] is None and card["n_features"] is None and card["created_at"].endswith(" (file time)")
    assert card["digest_ok"] is True and card["signed"] is False and card["signature"] == "unsigned"
    text = render_card(card)
    assert "classes: unknown\n" in text and "n features: unknown\n" in text and "corpus: toy\n" in text


def test_model_card_of_a_new_file(model, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    path = textcw.save(model, tmp_path / f"m{SUFFIX}", info={"corpus": "toy", "accuracy": 0.9, "n_train": 30, "n_test": 0})
    card = model_card(path)
    assert card["kind"] == "model file" and card["learner"] == "cw-stdev" and card["classes"] == ["ham", "spam"]
    assert card["n_features"] == len(model[0].vocabulary_) and card["learner_params"]["eta"] == model[-1].eta
    assert card["created_at"] == "2023-11-14T22:13:20+00:00" and card["n_train"] == 30
    assert card["sha256"] == read_manifest(path)["payload"]["sha256"] and card["digest_ok"] is True
    assert set(card) == set(CARD_FIELDS)
    assert SUFFIX == ".textcw-model"


def test_model_card_of_an_export(model, tmp_path):
    from textcw.portable import export_model

    model.textcw_components_ = {**model.textcw_components_, "corpus": "toy",
                                "featurizer": {"name": "binary-bow", "params": {}, "provider": "textcw"}}
    card = model_card(export_model(model, tmp_path / "m.textcw"))
    assert card["kind"] == "export" and card["learner"] == "cw-stdev" and card["classes"] == ["ham", "spam"]
    assert card["n_features"] == len(model[0].vocabulary_) and card["corpus"] == "toy" and card["accuracy"] is None


def test_model_card_of_something_else(tmp_path):
    junk = tmp_path / "junk"
    junk.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty ZIP archive
    with pytest.raises(ModelFileError, match="not a textcw model file"):
        model_card(junk)


@pytest.mark.parametrize("field,value", [
    ("textcw_version", "0.1\x1b[2J"), ("python", "3.11\n3.12"), ("dependencies", {"numpy": "2\r"}),
    ("plugins", {"evil\x1b": "1"}), ("model", {"classes": ["ok", "no\x07"]}), ("created_at", "now\u2028"),
])
def test_manifest_strings_that_would_reach_the_terminal_are_refused_at_load(model, tmp_path, field, value):
    path = textcw.save(model, tmp_path / "m.textcw-model")
    rewrite(path, manifest=lambda m: {**m, field: value})
    for read in (textcw.load, read_manifest, model_card):
        with pytest.raises(ModelFileError, match=r"holds (a line break|a control character) \(U\+"):
            read(path)


def test_free_text_is_kept_and_escaped_when_shown(model, tmp_path):
    path = textcw.save(model, tmp_path / "m.textcw-model", info={"corpus": "folder:/data/odd\nname\x1b[31m"})
    textcw.load(path)  # a corpus path is free text: kept, and shown escaped
    text = render_card(model_card(path))
    assert "corpus: folder:/data/odd\\nname\\x1b[31m\n" in text
    assert all(c.isprintable() for line in text.splitlines() for c in line)


def test_labels_with_control_characters_are_refused_at_save(tmp_path):
    pipe = Pipeline([("featurizer", textcw.make_featurizer("binary-bow")),
                     ("learner", textcw.make_learner("pa", random_state=0))]).fit(DOCS, [f"x\x1b{l}" for l in LABELS])
    with pytest.raises(InputError, match=r"a label of the model holds a control character \(U\+001B\)"):
        textcw.save(pipe, tmp_path / "m.textcw-model")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("text,shown", [
    ("plain", "plain"), ("a\nb", "a\\nb"), ("\x1b[31mred", "\\x1b[31mred"), ("caf\udce9", "caf\\udce9"),
    ("\u202eevil", "\\u202eevil"), (42, "42"), ("x" * 400, "x" * 297 + "..."),
])
def test_safe_text(text, shown):
    assert safe_text(text) == shown
