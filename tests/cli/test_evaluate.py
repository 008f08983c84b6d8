"""``textcw evaluate``: exit codes, one-line errors, the table, JSON, figures, Ctrl-C."""

from __future__ import annotations

import json

import pytest

from cli_run import one_line_error, run


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["--corpus", "newsgroups:comp", "--learner", "nope"], "unknown learner 'nope'; valid learner names:"),
        (["--corpus", "nope", "--learner", "perceptron"], "unknown corpus 'nope'; valid corpus names:"),
        (["--corpus", "newsgroups:nope", "--learner", "perceptron"], "newsgroups:comp"),
        (["--corpus", "newsgroups:comp", "--learner", "cw-var:eta"], "'eta' is not KEY=VALUE"),
        (["--corpus", "newsgroups:comp", "--learner", "cw-var:eta=2"], "eta=2 is invalid"),
        (["--corpus", "newsgroups:comp", "--learner", "perceptron,"], "has an empty item"),
        (["--corpus", "newsgroups:comp", "--learner", "perceptron", "--noise", "0,x"], "--noise '0,x'"),
        (["--corpus", "newsgroups:comp", "--learner", "perceptron", "--noise", "1.5"], "noise=1.5 is invalid"),
        (["--corpus", "newsgroups:comp", "--learner", "perceptron", "--baseline", "pa"], "baseline 'pa' is not among"),
        (["--corpus", "newsgroups:comp", "--learner", "perceptron", "--quick"], "use it with --tune"),
        (["--corpus", "newsgroups:comp", "--learner", "perceptron,perceptron"], "listed twice"),
    ],
)
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, "evaluate", *argv)
    assert code == 2 and out == ""
    assert fragment in one_line_error(err)


def test_one_fold_exits_2(capsys):
    code, _, err = run(capsys, "evaluate", "--corpus", "newsgroups:comp", "--learner", "perceptron",
                       "--folds", "1")
    assert code == 2 and "at least 2 folds" in one_line_error(err)


def test_a_failing_task_does_not_lose_the_others(capsys, tmp_path, monkeypatch):
    import textcw.evaluation.suite as suite
    from textcw.errors import DataError

    real = suite.load_task

    def flaky(task, **kwargs):
        if task.corpus == "newsgroups:sci":
            raise DataError("sci archive unreadable")
        return real(task, **kwargs)

    monkeypatch.setattr(suite, "load_task", flaky)
    code, out, err = run(capsys, "evaluate", "--corpus", "newsgroups:sci,newsgroups:comp", "--learner", "pa",
                         "--folds", "2", "--sample", "200", "--json-out", str(tmp_path / "r.json"))
    assert code == 1
    assert "failed: newsgroups:sci: sci archive unreadable" in err and "Traceback" not in err
    assert "newsgroups:comp" in out and "newsgroups:sci" not in out.split("test error")[1]
    from textcw.evaluation.suite import SuiteReport

    report = SuiteReport.from_json(tmp_path / "r.json")
    assert report.failures == ["newsgroups:sci: sci archive unreadable"]
    assert report.cell("newsgroups:comp", "pa").complete


@pytest.mark.corpus
def test_table_json_and_figures(capsys, tmp_path, data_home):
    out_json = tmp_path / "report.json"
    code, out, err = run(capsys, "evaluate", "--corpus", "newsgroups:comp,newsgroups:sci", "--learner",
                         "perceptron,cw-stdev,nb", "--folds", "2", "--sample", "400", "--baseline", "perceptron",
                         "--tune", "--quick", "--json-out", str(out_json), "--plot", str(tmp_path / "fig"))
    assert code == 0, err
    assert "newsgroups:comp" in out and "mean rank" in out and "McNemar vs perceptron" in out
    assert "•" in out and "chosen on the tuning run" in out
    from textcw.evaluation.suite import SuiteReport

    report = SuiteReport.from_json(out_json)
    assert [t.label for t in report.tasks] == ["newsgroups:comp", "newsgroups:sci"]
    assert all(c.complete and len(c.outcomes) == 400 for c in report.cells)
    assert json.loads(out_json.read_text())["baseline"] == "perceptron"
    pngs = sorted(p.name for p in (tmp_path / "fig").glob("*.png"))
    assert "curve-newsgroups_comp.png" in pngs and "reliability-newsgroups_comp.png" in pngs
    assert "online-newsgroups_sci.png" in pngs


@pytest.mark.corpus
def test_ctrl_c_keeps_what_finished(capsys, tmp_path, monkeypatch, data_home):
    import textcw.evaluation.cv as cv_module

    calls = {"n": 0}
    real = cv_module.fit_timed

    def interrupted_on_third_task(est, X, y):
        calls["n"] += 1
        if calls["n"] == 5:  # 2 folds x 2 learners per task: the 5th fit is the second task's first
            raise KeyboardInterrupt
        return real(est, X, y)

    monkeypatch.setattr(cv_module, "fit_timed", interrupted_on_third_task)
    out_json = tmp_path / "partial.json"
    code, out, err = run(capsys, "evaluate", "--corpus", "newsgroups:comp,newsgroups:sci", "--learner",
                         "perceptron,pa", "--folds", "2", "--sample", "300", "--json-out", str(out_json))
    assert code == 130
    assert "interrupted: the table shows the runs that finished" in err and "Traceback" not in err
    assert "newsgroups:comp" in out
    from textcw.evaluation.suite import SuiteReport

    report = SuiteReport.from_json(out_json)
    assert report.interrupted and report.cell("newsgroups:comp", "pa").complete
