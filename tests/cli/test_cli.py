"""The command line: contract, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

import textcw
from cli_run import one_line_error, run
from textcw.corpus import newsgroups
from hang import HANG_SECONDS


def test_list_learners_json(capsys):
    code, out, _ = run(capsys, "list", "learners", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    assert code == 0
    assert rows["cw-stdev"]["provider"] == "textcw" and "NIPS 2008" in rows["cw-stdev"]["summary"]


def test_list_corpora_and_plugins(capsys):
    code, out, _ = run(capsys, "list", "corpora", "--json")
    assert code == 0 and "newsgroups:comp" in json.dumps(json.loads(out))
    code, out, _ = run(capsys, "plugins", "--json")
    assert code == 0 and any(r["distribution"] == "textcw" for r in json.loads(out))


def test_list_unknown_kind(capsys):
    code, _, err = run(capsys, "list", "models")
    assert code == 2 and "valid kind names: comparisons, corpora, evaluators, featurizers, learners, metrics" in one_line_error(err)


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["--corpus", "nope", "--learner", "cw-var"], "unknown corpus 'nope'; valid corpus names:"),
        (["--corpus", "newsgroups:nope", "--learner", "cw-var"], "newsgroups:comp, newsgroups:sci"),
        (["--corpus", "newsgroups", "--learner", "cw"], "unknown learner 'cw'; valid learner names: "),
        (["--corpus", "newsgroups", "--learner", "cw-var", "--featurizer", "tf_idf"], "unknown featurizer 'tf_idf'; valid"),
        (["--corpus", "newsgroups", "--learner", "cw-var", "--param", "nope=1"], "unknown parameter 'nope' for learner 'cw-var'"),
        (["--corpus", "newsgroups", "--learner", "cw-stdev", "--param", "eta=0.5"], "eta=0.5 is invalid; eta must be a number in (0.5, 1)"),
        (["--corpus", "newsgroups", "--learner", "pa1", "--param", "C=0"], "C=0 is invalid; C must be a number > 0"),
        (["--corpus", "newsgroups", "--learner", "cw-var", "--param", "a=-1"], "a=-1 is invalid; a must be a number > 0"),
        (["--corpus", "newsgroups", "--learner", "cw-var", "--param", "eta"], "--param 'eta' is not KEY=VALUE"),
        (["--corpus", "newsgroups", "--learner", "cw-var", "--epochs", "0"], "n_epochs=0 is invalid"),
    ],
)
def test_bad_names_and_parameters_exit_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, "train", *argv)
    assert code == 2 and out == ""
    assert fragment in one_line_error(err)


def test_missing_data_file(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path))
    monkeypatch.setattr(newsgroups, "ARCHIVE", newsgroups.ARCHIVE.__class__(
        "newsgroups", "20news-bydate.tar.gz", "http://127.0.0.1:9/20news-bydate.tar.gz",
        newsgroups.ARCHIVE.sha256))
    code, _, err = run(capsys, "train", "--corpus", "newsgroups:comp", "--learner", "cw-var")
    line = one_line_error(err)
    assert code == 1 and "20news-bydate.tar.gz" in line and "TEXTCW_DATA" in line


@pytest.mark.corpus
def test_train_save_predict(capsys, data_home, tmp_path, monkeypatch):
    model = tmp_path / "comp.joblib"
    code, out, _ = run(capsys, "train", "--corpus", "newsgroups:comp", "--learner", "cw-stdev",
                       "--param", "eta=0.95", "--epochs", "2", "--seed", "3", "--out", str(model), "--json")
    result = json.loads(out)
    assert code == 0
    assert {"accuracy", "n_train", "n_test", "n_features", "train_seconds", "learner", "params"} <= set(result)
    assert (result["n_train"], result["n_test"], result["learner"]) == (1168, 777, "cw-stdev")
    assert result["params"]["eta"] == 0.95 and result["params"]["n_epochs"] == 2
    assert result["params"]["random_state"] == 3 and result["accuracy"] > 0.85
    assert model.exists() and not list(tmp_path.glob("comp.joblib?*"))  # one file, no sidecar

    mac = tmp_path / "mac.txt"
    mac.write_text("My Macintosh Quadra with a NuBus video card and Apple monitor, System 7")
    pc = tmp_path / "pc.txt"
    pc.write_bytes(b"IDE controller jumper on my 486 motherboard, BIOS settings for the \xff drive")
    code, out, _ = run(capsys, "predict", str(model), str(mac), str(pc))
    assert code == 0 and out == f"{mac}\tcomp.sys.mac.hardware\n{pc}\tcomp.sys.ibm.pc.hardware\n"

    code, out, _ = run(capsys, "predict", str(model), "--proba",
                       stdin=b"apple powerbook duo\nvesa local bus and isa cards\n")
    rows = [line.split("\t") for line in out.splitlines()]
    assert code == 0 and [r[0] for r in rows] == ["comp.sys.mac.hardware", "comp.sys.ibm.pc.hardware"]
    assert all(0.5 <= float(r[1]) <= 1.0 for r in rows)

    tampered = tmp_path / "tampered.joblib"
    shutil.copyfile(model, tampered)
    with open(tampered, "r+b") as fh:
        fh.seek(200)
        fh.write(b"\x00\x01\x02")
    code, _, err = run(capsys, "predict", str(tampered), str(mac))
    line = one_line_error(err)
    assert code == 1 and "was modified after saving" in line and "refusing to read it" in line


def test_predict_missing_model(capsys, tmp_path):
    code, _, err = run(capsys, "predict", str(tmp_path / "none.joblib"))
    assert code == 1 and "does not exist" in one_line_error(err)


def test_console_script_prints_no_traceback():
    proc = subprocess.run(
        [sys.executable, "-c", "from textcw.cli import main; main()", "train", "--corpus", "nope",
         "--learner", "cw-var"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: unknown corpus 'nope'") and "Traceback" not in proc.stderr


@pytest.mark.corpus
def test_text_featurizer_on_a_vector_corpus_is_a_clear_error(capsys, data_home):
    code, _, err = run(capsys, "train", "--corpus", "amazon:books", "--learner", "cw-var",
                       "--featurizer", "binary-bow")
    line = one_line_error(err)
    assert code == 1 and "featurizer 'binary-bow' cannot read the documents of amazon:books" in line
    assert "'precomputed'" in line


def test_no_module_imports_click():
    """typer carries its own Click; importing ``click`` would need an undeclared dependency."""
    import ast
    from pathlib import Path

    import textcw

    offenders = []
    for path in Path(textcw.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "click"]
    assert offenders == []


def test_list_one_learner_shows_every_parameter(capsys):
    code, out, _ = run(capsys, "list", "learners", "arow", "--json")
    info = json.loads(out)
    params = {p["name"]: p for p in info["parameters"]}
    assert code == 0 and info["name"] == "arow" and info["provider"] == "textcw"
    assert set(params) == set(textcw.make_learner("arow").get_params())
    assert params["r"]["default"] == "1.0" and "between 1e-100 and 1e+100" in params["r"]["allowed"]
    assert params["covariance"]["allowed"] == "one of 'diag-kl', 'diag-l2', 'full'"
    assert params["n_epochs"]["meaning"] == "Passes of fit over the training data."
    assert all(p["meaning"] for p in info["parameters"]), info
    code, out, _ = run(capsys, "list", "learners", "arow")
    assert code == 0 and out.startswith("arow: AROW") and "covariance" in out


def test_list_one_name_applies_to_learners_only(capsys):
    code, _, err = run(capsys, "list", "corpora", "newsgroups")
    assert code == 2 and "NAME applies to learners" in one_line_error(err)
    code, _, err = run(capsys, "list", "learners", "arwo")
    assert code == 2 and "did you mean 'arow'?" in one_line_error(err)


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_error_raised_while_an_interrupt_unwinds_is_reported_as_the_interrupt(capsys, tmp_path, monkeypatch,
                                                                                 sig, code):
    """A pool half started when the signal came fails on its way out with its own error; the
    user pressed Ctrl-C, and that is what the command says."""
    import textcw.pipeline

    assert threading.current_thread() is threading.main_thread()  # where signal handlers run

    def train(*args, **kwargs):
        try:
            os.kill(os.getpid(), sig)
            time.sleep(30)  # never reached: the handler raises
        finally:
            raise RuntimeError("cannot join thread before it is started")

    monkeypatch.setattr(textcw.pipeline, "train", train)
    out_file = tmp_path / "m.textcw-model"
    code_, out, err = run(capsys, "train", "--corpus", "synthetic-text:200", "--learner", "pa", "--out", out_file)
    assert (code_, out, err) == (code, "", "interrupted\n")
    assert not out_file.exists()


def test_an_interrupt_swallowed_on_the_way_still_stops_the_output(capsys, tmp_path, monkeypatch):
    """Python drops exceptions in some places (finalizers, fork handlers); the run then finishes
    its work, but writes nothing and reports the interruption."""
    import textcw.pipeline

    assert threading.current_thread() is threading.main_thread()
    real_train = textcw.pipeline.train

    def train(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(30)  # never reached: the handler raises
        except KeyboardInterrupt:
            pass  # lost, as in a finalizer
        return real_train(*args, **kwargs)

    monkeypatch.setattr(textcw.pipeline, "train", train)
    out_file = tmp_path / "m.textcw-model"
    code, out, err = run(capsys, "train", "--corpus", "synthetic-text:200", "--learner", "pa", "--out", out_file)
    assert (code, out, err) == (130, "", "interrupted\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, says", [
    (["--corpus", "newsgroup", "--learner", "pa"], "did you mean 'newsgroups'?"),
    (["--corpus", "newsgroups:cmop", "--learner", "pa"], "did you mean 'newsgroups:comp'?"),
    (["--corpus", "newsgroups", "--learner", "cw-stedv"], "did you mean 'cw-stdev'?"),
    (["--corpus", "newsgroups", "--learner", "pa", "--featurizer", "binary-bwo"], "did you mean 'binary-bow'?"),
])
def test_a_misspelt_name_is_answered_before_the_heavy_imports(argv, says):
    """train checks its names before importing scikit-learn and numba (a second and more): a typo
    is answered at once."""
    import subprocess
    import sys

    code = ("import sys; from textcw.cli import main\n"
            "try:\n    main(['train', *sys.argv[1:]])\nexcept SystemExit as exit:\n    code = exit.code\n"
            "print(code, sorted(m for m in ('numba', 'sklearn') if m in sys.modules))")
    run = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert run.stdout.strip() == "2 []" and says in run.stderr, (run.stdout, run.stderr)
