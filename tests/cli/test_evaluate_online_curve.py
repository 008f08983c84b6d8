"""`textcw evaluate --json` reports each online learner's cumulative online mistakes over one
pass per task (`online`), the same curves `--plot` draws, and reads back with `from_json`."""

from __future__ import annotations

import json

from cli_run import run
from textcw.evaluation.online import OnlineReport, online
from textcw.evaluation.suite import SuiteReport

CORPUS = "synthetic-text:300:2"


def test_json_report_has_the_online_mistake_curves(capsys, tmp_path):
    out_file = tmp_path / "report.json"
    code, out, err = run(capsys, "evaluate", "--corpus", CORPUS, "--learner", "cw-var,pa1,nb", "--folds", "2",
                         "--json", "--json-out", str(out_file))
    assert code == 0, err
    data = json.loads(out)
    [task] = data["online"]
    assert task["task"] == CORPUS and task["runs"] >= 1
    curves = {c["learner"]: c for c in task["curves"]}
    assert set(curves) == {"cw-var", "pa1"}  # nb is a batch learner: no online pass
    for curve in curves.values():
        assert curve["positions"][-1] == task["n_docs"]
        assert curve["positions"] == sorted(curve["positions"])
        assert curve["mistakes"] == sorted(curve["mistakes"])  # cumulative
        assert 0 < curve["mistakes"][-1] < task["n_docs"]

    report = SuiteReport.from_json(out_file)
    assert isinstance(report.online[0], OnlineReport)
    # the same curves as the online evaluator run directly on the report's tasks and learners
    direct = online(seed=report.seed)(report.tasks[0], [s for s in report.learners if s.name != "nb"], {})
    assert [c.mistakes for c in report.online[0].curves] == [c.mistakes for c in direct.curves]


def test_text_output_does_not_pay_for_the_curves(capsys, monkeypatch):
    import textcw.cli.evaluate as evaluate_cli

    monkeypatch.setattr(evaluate_cli, "online_curves", lambda report: (_ for _ in ()).throw(AssertionError))
    code, _, err = run(capsys, "evaluate", "--corpus", CORPUS, "--learner", "pa1", "--folds", "2")
    assert code == 0, err
