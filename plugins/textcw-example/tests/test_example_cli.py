"""The installed plugin through the ``textcw`` command line, each command in a fresh process."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def textcw_cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run the ``textcw`` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("textcw")
    command = [str(script)] if script.exists() else [
        sys.executable, "-c", "from textcw.cli import main; main()"]
    return subprocess.run(command + list(args), input=stdin, capture_output=True, text=True,
                          timeout=600)


def test_list_learners_shows_the_plugin_as_provider():
    run = textcw_cli("list", "learners", "--json")
    assert run.returncode == 0, run.stderr
    rows = {row["name"]: row for row in json.loads(run.stdout)}
    assert rows["balanced-winnow"]["provider"] == "textcw-example"
    assert rows["balanced-winnow"]["summary"].startswith("Balanced Winnow")
    assert rows["perceptron"]["provider"] == "textcw"


def test_list_featurizers_shows_char_ngrams():
    run = textcw_cli("list", "featurizers", "--json")
    assert run.returncode == 0, run.stderr
    rows = {row["name"]: row for row in json.loads(run.stdout)}
    assert rows["char-ngrams"]["provider"] == "textcw-example"


def test_plugins_lists_the_distribution_and_version():
    run = textcw_cli("plugins", "--json")
    assert run.returncode == 0, run.stderr
    rows = [r for r in json.loads(run.stdout) if r["distribution"] == "textcw-example"]
    assert rows == [{"name": "example", "distribution": "textcw-example",
                     "version": importlib.metadata.version("textcw-example")}]


def test_bad_parameter_is_a_one_line_usage_error():
    run = textcw_cli("train", "--corpus", "newsgroups:sci", "--learner", "balanced-winnow",
                     "--param", "beta=1.5")
    assert run.returncode == 2
    assert run.stderr.strip().count("\n") == 0 and "Traceback" not in run.stderr
    assert "beta=1.5" in run.stderr and "in (0, 1)" in run.stderr


def test_unknown_learner_lists_the_plugin_learner():
    run = textcw_cli("train", "--corpus", "newsgroups:sci", "--learner", "winnow")
    assert run.returncode == 2
    assert "balanced-winnow" in run.stderr


@pytest.mark.corpus
def test_trains_and_predicts_through_the_cli(tmp_path):
    assert os.environ.get("TEXTCW_DATA"), (
        "TEXTCW_DATA is not set; point it at the folder holding newsgroups/20news-bydate.tar.gz")
    model = tmp_path / "winnow.joblib"
    run = textcw_cli("train", "--corpus", "newsgroups:sci", "--learner", "balanced-winnow",
                     "--featurizer", "char-ngrams", "--out", str(model), "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["learner"] == "balanced-winnow" and report["featurizer"] == "char-ngrams"
    assert report["params"]["alpha"] == 1.5
    assert report["n_train"] == 1185 and report["n_test"] == 789
    # Measured 0.911 with the defaults (the perceptron reaches 0.880 on the same features).
    assert report["accuracy"] >= 0.89

    predicted = textcw_cli("predict", str(model), stdin=(
        "my oscilloscope shows noise on the op-amp output and the resistor runs hot\n"
        "the doctor said the patient's symptoms point to a drug allergy\n"))
    assert predicted.returncode == 0, predicted.stderr
    assert predicted.stdout.split() == ["sci.electronics", "sci.med"]
