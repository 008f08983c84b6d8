"""`textcw train` self-tunes CW's and SCW's confidence unless the user sets it."""

from __future__ import annotations

import json

import pytest

import textcw
from textcw.cli import main
from textcw.pipeline import learner_train_defaults
from textcw.plugins import default_registries


def run_json(capsys, *argv) -> dict:
    try:
        main(list(argv))
    except SystemExit as exc:
        assert exc.code in (0, None)
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name, tuned", [("cw-stdev", {"eta"}), ("cw-var", {"eta"}), ("scw1", {"eta", "C"}),
                                         ("scw2", {"eta", "C"}), ("arow", set()), ("pa1", set())])
def test_the_train_defaults_declared_on_the_classes(name, tuned):
    defaults = learner_train_defaults(name)
    assert set(defaults) == tuned and all(value == "auto" for value in defaults.values())
    assert not hasattr(default_registries().learners.get(name), "train_defaults")  # declared once, on the class
    # make_learner keeps the class defaults
    assert all(textcw.make_learner(name).get_params()[p] != "auto" for p in tuned)


def test_train_tunes_eta_and_reports_the_choice(capsys):
    result = run_json(capsys, "train", "--corpus", "newsgroups:sci", "--learner", "cw-stdev", "--json",
                      "--epochs", "1")
    assert result["params"]["eta"] == "auto"
    assert set(result["tuned_params"]) == {"eta"} and 0.5 < result["tuned_params"]["eta"] < 1


def test_a_given_value_is_kept(capsys):
    result = run_json(capsys, "train", "--corpus", "newsgroups:sci", "--learner", "cw-stdev", "--json",
                      "--epochs", "1", "--param", "eta=0.9")
    assert result["params"]["eta"] == 0.9 and result["tuned_params"] == {}


def test_the_text_output_has_the_ece_beside_accuracy_and_the_json_every_probability_metric(capsys):
    result = run_json(capsys, "train", "--corpus", "newsgroups:sci", "--learner", "arow", "--json", "--epochs", "1")
    assert 0 < result["log_loss"] and 0 <= result["expected_calibration_error"] <= 1
    try:
        main(["train", "--corpus", "newsgroups:sci", "--learner", "arow", "--epochs", "1"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    line = capsys.readouterr().out
    assert (f"accuracy {result['accuracy']:.4f}  ECE {result['expected_calibration_error']:.4f}  "
            f"macro-F1 {result['macro_f1']:.4f}  (") in line
    assert "log-loss" not in line
    # --probability raw: the learner's own probabilities, which can cost more than training, are
    # computed for the JSON report only
    try:
        main(["train", "--corpus", "newsgroups:sci", "--learner", "arow", "--epochs", "1", "--probability", "raw"])
    except SystemExit as exc:
        assert exc.code in (0, None)
    line = capsys.readouterr().out
    assert f"accuracy {result['accuracy']:.4f}  macro-F1" in line and "ECE" not in line


def test_an_axis_trained_auto_must_self_tune():
    from textcw.learners.selftune import Axis

    with pytest.raises(TypeError, match="in_train=True needs a unit"):
        Axis("a", grid=(1.0,), in_train=True)
