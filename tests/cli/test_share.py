"""``textcw export`` / ``import`` / ``inspect`` from the command line."""

from __future__ import annotations

import json

from cli_run import one_line_error, run

SMALL = ["--corpus", "synthetic-text:400", "--learner", "cw-stdev", "--featurizer-param", "n_features=4096",
         "--epochs", "1"]


def test_export_import_predict_and_inspect(capsys, tmp_path):
    model, shared, imported = tmp_path / "m.joblib", tmp_path / "m.textcw", tmp_path / "imported.joblib"
    assert run(capsys, "train", *SMALL, "--out", str(model))[0] == 0
    code, out, err = run(capsys, "export", str(model), str(shared))
    assert (code, out, err.strip()) == (0, "", f"exported {model} to {shared}")
    code, out, err = run(capsys, "import", str(shared), str(imported))
    assert (code, out) == (0, "")
    assert err.strip() == f"imported {shared} (cw-stdev, 4096 features, 2 classes) to {imported}"
    assert run(capsys, "--quiet", "export", str(model), str(shared)) == (0, "", "")
    doc = tmp_path / "doc.txt"
    doc.write_text("bebu bebe reyu caba beso lawi")
    predictions = [run(capsys, "predict", str(m), str(doc), "--proba")[1] for m in (model, imported)]
    assert predictions[0] == predictions[1] and predictions[0].split("\t")[:2] in ([str(doc), "neg"], [str(doc), "pos"])

    code, out, _ = run(capsys, "inspect", str(model))
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert code == 0 and lines["kind"] == "model file" and lines["learner"] == "cw-stdev"
    assert lines["classes"] == "2: neg, pos" and lines["n features"] == "4096"
    assert lines["corpus"] == "synthetic-text:400" and lines["digest ok"] == "yes"
    code, out, _ = run(capsys, "inspect", str(model), "--json")
    card = json.loads(out)
    assert card["learner"] == "cw-stdev" and card["classes"] == ["neg", "pos"] and card["n_train"] > 0
    code, out, _ = run(capsys, "inspect", str(model), "--manifest")
    manifest = json.loads(out)
    assert code == 0 and manifest["format"] == "textcw-model"
    assert manifest["components"]["learner"]["name"] == "cw-stdev"
    code, out, _ = run(capsys, "inspect", str(shared), "--manifest")
    document = json.loads(out)
    assert code == 0 and document["format"] == "textcw-portable"
    assert [s["name"] for s in document["steps"]] == ["hashing", "cw-stdev"]
    assert document["steps"][1]["state_dict"] == "(fitted state)"
    code, out, _ = run(capsys, "inspect", str(imported), "--manifest")
    assert json.loads(out)["info"] == {"imported_from": "m.textcw"}


def test_errors_are_one_line(capsys, tmp_path):
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 not a model")
    for argv, fragment in [
        (("export", str(tmp_path / "none.joblib"), str(tmp_path / "x")), "does not exist"),
        (("export", str(junk), str(tmp_path / "x")), "is not a textcw model file"),
        (("import", str(junk), str(tmp_path / "x")), "is not an exported textcw model"),
        (("import", str(tmp_path / "none"), str(tmp_path / "x")), "does not exist"),
        (("inspect", str(junk)), "is neither a textcw model file nor an exported model"),
    ]:
        code, out, err = run(capsys, *argv)
        assert code == 1 and fragment in one_line_error(err), (argv, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["junk.bin"]  # nothing written
