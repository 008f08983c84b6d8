"""Optional signing of model files (HMAC-SHA256 with TEXTCW_SIGNING_KEY / TEXTCW_SIGNING_KEY_FILE)."""

from __future__ import annotations

import json
import os
import zipfile

import joblib
import numpy as np
import pytest

import textcw
from textcw.errors import ModelFileError
from textcw.model_card import model_card
from textcw.persist import MANIFEST_MEMBER, PAYLOAD_MEMBER, SIGNATURE_MEMBER
from textcw.signing import signing_key

from test_portable import PROBE_DOCS, pipeline

KEY = "k" * 8 + "0123456789abcdef"
OTHER = "another-key-of-enough-bytes"


@pytest.fixture
def model():
    return pipeline("binary-bow", "cw-stdev")


@pytest.fixture
def no_unpickling(monkeypatch):
    monkeypatch.setattr(joblib, "load", lambda *a, **k: pytest.fail("joblib.load was called on a refused file"))


@pytest.fixture(autouse=True)
def no_key(monkeypatch):
    monkeypatch.delenv("TEXTCW_SIGNING_KEY", raising=False)
    monkeypatch.delenv("TEXTCW_SIGNING_KEY_FILE", raising=False)


def members(path):
    with zipfile.ZipFile(path) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rewrite(path, parts):
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


def test_signed_round_trip(model, tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", KEY)
    path = textcw.save(model, tmp_path / "m.textcw-model")
    parts = members(path)
    assert list(parts) == [MANIFEST_MEMBER, PAYLOAD_MEMBER, SIGNATURE_MEMBER]
    signature = json.loads(parts[SIGNATURE_MEMBER])
    assert signature["algorithm"] == "hmac-sha256" and len(signature["mac"]) == 64
    np.testing.assert_array_equal(textcw.load(path).predict_proba(PROBE_DOCS), model.predict_proba(PROBE_DOCS))
    card = model_card(path)
    assert card["signed"] is True and card["signature"] == "valid"
    assert textcw.save(model, tmp_path / "again").read_bytes() == path.read_bytes()  # still deterministic
    monkeypatch.delenv("TEXTCW_SIGNING_KEY")
    assert model_card(path)["signature"] == "unchecked"
    textcw.load(path)  # without a key, signed files load as before


def test_key_file_gives_the_same_signature(model, tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", KEY)
    a = textcw.save(model, tmp_path / "a")
    monkeypatch.delenv("TEXTCW_SIGNING_KEY")
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    monkeypatch.setenv("TEXTCW_SIGNING_KEY_FILE", str(key_file))
    assert textcw.save(model, tmp_path / "b").read_bytes() == a.read_bytes()
    textcw.load(a)


def test_unsigned_file_is_refused_when_a_key_is_set(model, tmp_path, monkeypatch, no_unpickling):
    path = textcw.save(model, tmp_path / "m.textcw-model")
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", KEY)
    with pytest.raises(ModelFileError, match="is not signed, and a signing key is set"):
        textcw.load(path)
    assert model_card(path)["signature"] == "unsigned"


def test_file_signed_with_another_key_is_refused(model, tmp_path, monkeypatch, no_unpickling):
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", OTHER)
    path = textcw.save(model, tmp_path / "m.textcw-model")
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", KEY)
    with pytest.raises(ModelFileError, match="is signed with another key than the one set in TEXTCW_SIGNING_KEY"):
        textcw.load(path)
    assert model_card(path)["signature"] == "another key"


@pytest.mark.parametrize("tamper", [
    lambda m: m.update(textcw_version="9.9.9"),                       # what inspect shows
    lambda m: m["info"].update(accuracy=0.999),
    lambda m: m["model"].update(classes=["ham", "spam"]),
])
def test_tampered_manifest_is_refused(model, tmp_path, monkeypatch, no_unpickling, tamper):
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", KEY)
    path = textcw.save(model, tmp_path / "m.textcw-model", info={"accuracy": 0.5})
    parts = members(path)
    manifest = json.loads(parts[MANIFEST_MEMBER])
    tamper(manifest)
    parts[MANIFEST_MEMBER] = json.dumps(manifest).encode()
    rewrite(path, parts)
    with pytest.raises(ModelFileError, match="was changed after it was signed"):
        textcw.load(path)
    assert model_card(path)["signature"] == "invalid"


def test_payload_swapped_with_a_matching_manifest_is_refused(model, tmp_path, monkeypatch, no_unpickling):
    """An attacker who rewrites payload and digest together (which the digest alone cannot catch)."""
    import hashlib

    monkeypatch.setenv("TEXTCW_SIGNING_KEY", KEY)
    path = textcw.save(model, tmp_path / "m.textcw-model")
    other = members(textcw.save(pipeline("binary-bow", "pa"), tmp_path / "other"))
    parts = members(path)
    manifest = json.loads(parts[MANIFEST_MEMBER])
    manifest["payload"].update(size=len(other[PAYLOAD_MEMBER]), sha256=hashlib.sha256(other[PAYLOAD_MEMBER]).hexdigest())
    parts[MANIFEST_MEMBER], parts[PAYLOAD_MEMBER] = json.dumps(manifest).encode(), other[PAYLOAD_MEMBER]
    rewrite(path, parts)
    with pytest.raises(ModelFileError, match="was changed after it was signed"):
        textcw.load(path)
    parts.pop(SIGNATURE_MEMBER)  # and stripping the signature does not help
    rewrite(path, parts)
    with pytest.raises(ModelFileError, match="is not signed"):
        textcw.load(path)


@pytest.mark.parametrize("signature,message", [
    (b"not json", "is not valid JSON"),
    (json.dumps({"algorithm": "md5", "key_id": "x", "mac": "y"}).encode(), "is not an hmac-sha256 signature"),
    (json.dumps({"algorithm": "hmac-sha256", "key_id": "\u00e9", "mac": "\udce9"}).encode(), "another key"),
    (b" " * 5000, r"the signature \(signature.json\) is 5,000 bytes, more than the limit"),
])
def test_malformed_signatures_are_refused(model, tmp_path, monkeypatch, no_unpickling, signature, message):
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", KEY)
    path = textcw.save(model, tmp_path / "m.textcw-model")
    parts = members(path)
    parts[SIGNATURE_MEMBER] = signature
    rewrite(path, parts)
    with pytest.raises(ModelFileError, match=message):
        textcw.load(path)


def test_constant_time_comparison_is_used(model, tmp_path, monkeypatch):
    import hmac

    calls = []
    real = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: calls.append((a, b)) or real(a, b))
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", KEY)
    textcw.load(textcw.save(model, tmp_path / "m.textcw-model"))
    assert len(calls) >= 2  # key id and mac (and the payload digest)


@pytest.mark.parametrize("setup,message", [
    (lambda mp, tmp: mp.setenv("TEXTCW_SIGNING_KEY", "short"), "has 5 bytes; use at least 16 random bytes"),
    (lambda mp, tmp: mp.setenv("TEXTCW_SIGNING_KEY", ""), "has 0 bytes"),
    (lambda mp, tmp: (mp.setenv("TEXTCW_SIGNING_KEY", KEY), mp.setenv("TEXTCW_SIGNING_KEY_FILE", "x")),
     "both TEXTCW_SIGNING_KEY and TEXTCW_SIGNING_KEY_FILE are set"),
    (lambda mp, tmp: mp.setenv("TEXTCW_SIGNING_KEY_FILE", str(tmp / "missing")), "cannot read the key file .*No such file"),
    (lambda mp, tmp: mp.setenv("TEXTCW_SIGNING_KEY_FILE", str(tmp)), "cannot read the key file"),
])
def test_bad_key_configuration_is_an_error_not_unsigned(model, tmp_path, monkeypatch, setup, message):
    setup(monkeypatch, tmp_path)
    with pytest.raises(ModelFileError, match=message):
        signing_key()
    with pytest.raises(ModelFileError, match=message):
        textcw.save(model, tmp_path / "m.textcw-model")
    assert not (tmp_path / "m.textcw-model").exists()


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners and modes")
@pytest.mark.parametrize("make, message", [
    (lambda key: os.chmod(key, 0o666), "can be written by others .*chmod go-w"),
    (lambda key: (os.rename(key, key.with_name("real")), key.symlink_to(key.with_name("real"))),
     "is a symbolic link"),
    (lambda key: (key.unlink(), os.mkfifo(key)), "is not a regular file"),
    (lambda key: os.chmod(key.parent, 0o777), "which others can write to"),
])
def test_a_key_file_that_is_not_the_users_own_is_refused(model, tmp_path, monkeypatch, make, message):
    folder = tmp_path / "keys"
    folder.mkdir(mode=0o700)
    key = folder / "key"
    key.write_text(KEY + "\n")
    os.chmod(key, 0o600)
    monkeypatch.delenv("TEXTCW_SIGNING_KEY", raising=False)
    monkeypatch.setenv("TEXTCW_SIGNING_KEY_FILE", str(key))
    assert signing_key() == KEY.encode()
    make(key)
    with pytest.raises(ModelFileError, match=f"the signing key file .*{message}.*TEXTCW_SIGNING_KEY_FILE"):
        signing_key()  # a FIFO is refused, never opened and waited on
    with pytest.raises(ModelFileError, match=message):
        textcw.save(model, tmp_path / "m.joblib")
