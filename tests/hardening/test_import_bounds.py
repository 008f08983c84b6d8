"""What an export or a model file says is bounded and range-checked like what ``fit`` is given
(issue 26: self-tuned values, temperatures, strings copied into a manifest, counter lists, the
featurizer's width, advice dictated by a file, the corpus's path, owner-only files)."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

import textcw
from textcw.errors import InputError, ModelFileError
from textcw.persist import MANIFEST_MEMBER, PAYLOAD_MEMBER
from textcw.portable import MAX_RECORDED_PASSES, export_model, import_model
from textcw.untrusted import MAX_JSON_ITEMS, MAX_TEXT_CHARS, distribution_name, install_advice

sys.path.insert(0, str(Path(__file__).parent))
from cli_run import one_line_error, run  # noqa: E402
from test_portable import edit, learner_step, pipeline  # noqa: E402

sys.path.pop(0)


@pytest.fixture(scope="module")
def auto_model():
    return pipeline("binary-bow", "cw-stdev", {"eta": "auto"})


@pytest.fixture
def auto_export(auto_model, tmp_path):
    return export_model(auto_model, tmp_path / "auto.textcw")


@pytest.fixture
def bow_export(tmp_path):
    return export_model(pipeline("binary-bow", "cw-stdev"), tmp_path / "bow.textcw")


def state(doc):
    return learner_step(doc)["state_dict"]["__dict__"]


@pytest.mark.parametrize("eta", [2.0, -1.0, 0.5, 1.0])
def test_out_of_range_self_tuned_values_are_refused(auto_export, eta):
    assert 0.5 < import_model(auto_export).steps[1][1].tuned_params_["eta"] < 1
    edit(auto_export, lambda d: state(d)["tuned"]["__dict__"].update(eta=eta))
    with pytest.raises(ModelFileError, match=rf"self-tuned value eta={eta} of 'cw-stdev' is out of range .*"
                                             r"eta must be a number in \(0.5, 1\)"):
        import_model(auto_export)


def test_the_import_command_refuses_them_with_exit_1(auto_export, tmp_path, capsys):
    edit(auto_export, lambda d: state(d)["tuned"]["__dict__"].update(eta=2.0))
    code, _, err = run(capsys, "import", auto_export, tmp_path / "m.joblib")
    assert code == 1 and "self-tuned value eta=2.0" in one_line_error(err)
    assert not (tmp_path / "m.joblib").exists()


@pytest.mark.parametrize("key", ["mistakes", "n_updates"])
def test_counter_lists_are_bounded_before_they_are_decoded(bow_export, key):
    edit(bow_export, lambda d: state(d).update({key: [0] * (MAX_RECORDED_PASSES + 1)}))
    start = time.process_time()
    with pytest.raises(ModelFileError, match=f"records 1,000,001 passes in '{key}'"):
        import_model(bow_export)
    # bounded work: no per-element decoding or checking of a million values (generous margin)
    assert time.process_time() - start < 20


def test_json_with_more_values_than_any_export_is_refused_before_parsing(bow_export):
    edit(bow_export, lambda d: state(d).update(mistakes=[0] * MAX_JSON_ITEMS))
    with pytest.raises(ModelFileError, match="holds more than 4,000,000 values"):
        import_model(bow_export)


@pytest.mark.parametrize("where", ["corpus", "learner name", "featurizer param", "version"])
def test_long_strings_that_would_reach_the_manifest_are_refused_at_import(bow_export, tmp_path, where):
    long = "x" * (MAX_TEXT_CHARS + 1)
    change = {
        "corpus": lambda d: d["components"]["__dict__"].update(corpus=long),
        "learner name": lambda d: learner_step(d).update(name=long),
        "featurizer param": lambda d: d["steps"][0]["params"]["__dict__"].update(token_pattern=long),
        "version": lambda d: d.update(textcw_version=long),
    }[where]
    edit(bow_export, change)
    with pytest.raises(ModelFileError, match="holds a string of 4,097 characters"):
        import_model(bow_export)


def test_ten_megabytes_in_the_corpus_name_never_make_a_model_load_refuses(bow_export, tmp_path, capsys):
    edit(bow_export, lambda d: d["components"]["__dict__"].update(corpus="c" * 10_000_000))
    code, _, err = run(capsys, "import", bow_export, tmp_path / "m.joblib")
    assert code == 1 and "10,000,000 characters" in one_line_error(err)
    assert not (tmp_path / "m.joblib").exists()


def test_save_refuses_a_manifest_load_would_refuse(tmp_path):
    model = pipeline("binary-bow", "pa")
    with pytest.raises(InputError, match="manifest would be .* bytes, more than the 4,194,304 that load reads"):
        textcw.save(model, tmp_path / "m.joblib", info={"note": "n" * (5 << 20)})
    assert not (tmp_path / "m.joblib").exists()


@pytest.mark.parametrize("rename", [
    lambda d: d["steps"][0].update(name="hashing", params={"__dict__": {}}),
    lambda d: d["steps"][0].update(name="hashing", params={"__dict__": {}}, attributes={"__dict__": {}}),
])
def test_renaming_the_featurizer_cannot_bypass_the_width_check(bow_export, rename):
    edit(bow_export, rename)
    with pytest.raises(ModelFileError, match="makes 1048576|describes .* features but it makes 1048576"):
        import_model(bow_export)


def test_components_must_describe_the_steps(bow_export):
    edit(bow_export, lambda d: d["components"]["__dict__"]["featurizer"]["__dict__"].update(name="hashing"))
    with pytest.raises(ModelFileError, match="components describe the featurizer differently"):
        import_model(bow_export)


def _calibrated(tmp_path):
    from textcw.pipeline import train

    result = train("synthetic-text:300", "cw-stdev", cache=False)
    assert result.model.textcw_components_.get("probability")
    return export_model(result.model, tmp_path / "cal.textcw")


@pytest.mark.parametrize("change,message", [
    ({"inverse_temperature": 1e7}, "inverse temperature 10000000.0, more than the 1e\\+06"),
    ({"recorded_log_loss": {"__dict__": {"raw": -1.0}}}, "log-loss that is negative"),
])
def test_temperatures_are_range_checked(tmp_path, change, message):
    path = _calibrated(tmp_path)
    back = import_model(path)
    assert back.textcw_components_["probability"] == back.probability_calibration_.to_dict()
    edit(path, lambda d: d["components"]["__dict__"]["probability"]["__dict__"].update(change))
    with pytest.raises(ModelFileError, match=message):
        import_model(path)


@pytest.mark.parametrize("spec,recorded", [
    ("folder:/home/someone/private/mail", "folder:mail"),
    ("folder:C:\\Users\\me\\mail\\", "folder:mail"),
    ("csv:/data/train.csv,/data/test.csv", "csv:train.csv,test.csv"),
    ("spam:u00", "spam:u00"),
])
def test_exports_record_the_corpus_name_not_the_path(tmp_path, spec, recorded):
    model = pipeline("binary-bow", "pa")
    model.textcw_components_["corpus"] = spec
    path = export_model(model, tmp_path / "m.textcw")
    with zipfile.ZipFile(path) as archive:
        text = archive.read("model.json").decode()
    assert json.loads(text)["components"]["__dict__"]["corpus"] == recorded
    assert "someone" not in text and "/data/" not in text


@pytest.mark.parametrize("name,valid", [
    ("textcw-serve", True), ("textcw_pixels", True), ("a", True), ("Foo.Bar2", True),
    ("--index-url=http://evil.example/", False), ("-e", False), ("x y", False), ("../x", False),
    ("https://evil.example/p.whl", False), ("x;rm", False), ("", False), ("x-", False), (None, False),
])
def test_distribution_names_follow_pep_508(name, valid):
    assert distribution_name(name) is valid
    # a command only for a name the user's own key vouches for; never for an invalid one
    assert ("pip install" in install_advice(name, vouched=True)) is valid
    assert ("pip install" in install_advice(name)) is (name in ("textcw-serve", "textcw_pixels"))


def test_export_advice_names_only_valid_distributions(bow_export):
    edit(bow_export, lambda d: learner_step(d).update(name="winnow-x", provider="--index-url=http://evil.example/"))
    with pytest.raises(ModelFileError) as info:
        import_model(bow_export)
    assert "pip install" not in str(info.value) and "not a valid distribution name" in str(info.value)


def _rewrite_manifest(path, change, payload=None):
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read(MANIFEST_MEMBER))
        data = archive.read(PAYLOAD_MEMBER)
    change(manifest)
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(MANIFEST_MEMBER, json.dumps(manifest))
        archive.writestr(PAYLOAD_MEMBER, data if payload is None else payload)


@pytest.mark.parametrize("plugin", ["--index-url=http://evil.example/", "x y", "https://evil.example/x.whl"])
def test_model_files_cannot_dictate_an_install_command(tmp_path, plugin):
    path = textcw.save(pipeline("binary-bow", "pa"), tmp_path / "m.joblib")
    _rewrite_manifest(path, lambda m: m.update(plugins={plugin: "1.0"}))
    with pytest.raises(ModelFileError, match="not a valid distribution name") as info:
        textcw.load(path)
    assert "pip install" not in str(info.value)


def test_a_refused_model_file_gets_no_install_advice(tmp_path):
    path = textcw.save(pipeline("binary-bow", "pa"), tmp_path / "m.joblib")
    with zipfile.ZipFile(path) as archive:
        payload = bytearray(archive.read(PAYLOAD_MEMBER))
    payload[-5] ^= 1
    _rewrite_manifest(path, lambda m: m.update(plugins={"textcw-not-installed": "1.0"}), bytes(payload))
    with pytest.raises(ModelFileError, match="does not match the sha256") as info:
        textcw.load(path)
    assert "pip install" not in str(info.value)
    _rewrite_manifest(path, lambda m: m["payload"].update(sha256=__import__("hashlib").sha256(payload).hexdigest()))
    with pytest.raises(ModelFileError, match=r"needs the plugin 'textcw-not-installed'.*from a source you trust"):
        textcw.load(path)  # an intact file that needs a real-looking plugin is named, with no command


@pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX modes")
def test_models_and_exports_are_owner_only_whatever_the_umask(tmp_path):
    model = pipeline("binary-bow", "pa")
    old = os.umask(0)
    try:
        saved = textcw.save(model, tmp_path / "m.joblib")
        exported = export_model(model, tmp_path / "m.textcw")
        (tmp_path / "old.joblib").write_bytes(b"x")
        os.chmod(tmp_path / "old.joblib", 0o644)
        replaced = textcw.save(model, tmp_path / "old.joblib")
    finally:
        os.umask(old)
    for path in (saved, exported, replaced):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert np.array_equal(textcw.load(saved).predict(["a b"]), model.predict(["a b"]))


@pytest.mark.parametrize("section,field,value", [
    ("model", "n_features", -5), ("model", "n_features", 0), ("model", "n_features", True),
    ("info", "accuracy", 7.0), ("info", "accuracy", -0.1), ("info", "n_train", -1), ("info", "n_test", 1.5),
    ("payload", "size", -1),
])
def test_manifest_numbers_are_range_checked(tmp_path, section, field, value):
    path = textcw.save(pipeline("binary-bow", "pa"), tmp_path / "m.joblib",
                       info={"accuracy": 0.9, "n_train": 20, "n_test": 5})
    assert textcw.read_manifest(path)["model"]["n_features"] >= 1
    _rewrite_manifest(path, lambda m: m.setdefault(section, {}).update({field: value}))
    with pytest.raises(ModelFileError, match=rf"records {section}\.{field} = .*which is not"):
        textcw.read_manifest(path)
    with pytest.raises(ModelFileError, match="which is not"):
        textcw.load(path)


def test_save_never_writes_a_manifest_number_load_refuses(tmp_path):
    with pytest.raises(InputError, match=r"the model's manifest would record info.accuracy = nan, which is not "
                                         r"a fraction in \[0, 1\]; fix the value given to save"):
        textcw.save(pipeline("binary-bow", "pa"), tmp_path / "m.joblib", info={"accuracy": float("nan")})
    assert not (tmp_path / "m.joblib").exists()
