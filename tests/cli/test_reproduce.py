"""``textcw reproduce``: listing, errors, and every reproduction's --quick run (what CI runs)."""

from __future__ import annotations

import pytest

from cli_run import run
from textcw.evaluation import experiments


def test_lists_the_experiments(capsys):
    code, out, _ = run(capsys, "reproduce")
    assert code == 0
    for name in experiments.names():
        assert name in out


def test_unknown_experiment_exits_2(capsys):
    code, out, err = run(capsys, "reproduce", "jmlr-table9")
    assert code == 2 and out == ""
    assert err.strip().startswith("error: unknown experiment 'jmlr-table9'; valid experiment names:")
    assert len(err.strip().splitlines()) == 1


def test_missing_learner_names_it(capsys, monkeypatch):
    from textcw.evaluation.experiments import jmlr_table3
    from textcw.evaluation.specs import LearnerSpec

    monkeypatch.setattr(jmlr_table3.EXPERIMENT, "columns",
                        [*jmlr_table3.COLUMNS, ("X", LearnerSpec("not-a-learner", {}, "X"))])
    code, out, err = run(capsys, "reproduce", "jmlr-table3", "--quick")
    assert code == 1 and out == ""
    line = err.strip()
    assert line.startswith("error: experiment jmlr-table3 needs learners that are not available here: X")
    assert "not-a-learner" in line and "--available" in line and len(line.splitlines()) == 1


# The rows each quick run must produce from the staged corpora (a missing archive fails the test).
QUICK_ROWS = {
    "jmlr-table2": ["Books", "Spam A", "Comp"],
    "jmlr-table3": ["Books", "Spam A", "Comp", "0 vs 9"],
    "jmlr-table4": ["Books", "Spam A", "Comp", "0 vs 9"],
    "jmlr-table5": ["Books", "Spam A", "Comp"],
    "emnlp-table3": ["20 News"],
    "arow-noise": ["0", "0.1", "0.3"],
    "nips-synthetic": ["Perceptron", "PA", "SOP", "CW-Var-diag", "CW-Var-full", "CW-Stdev-diag", "CW-Stdev-full"],
}


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("name", experiments.names())
def test_quick_reproduction(capsys, tmp_path, name, data_home):
    code, out, err = run(capsys, "reproduce", name, "--quick", "--json-out", str(tmp_path / "r.json"))
    assert "published:" in out and "quick run in" in out
    from textcw.evaluation.experiments.base import ExperimentResult

    result = ExperimentResult.from_json(tmp_path / "r.json")
    failed = [check.name for check in result.checks if not check.passed]
    # A failed check is a non-zero exit, named on stderr, as a failed test would be.
    assert code == (1 if failed else 0), err
    assert (f"{len(failed)} of {len(result.checks)} checks failed" in err) == bool(failed), err
    assert result.quick and not result.interrupted
    assert [row[0] for row in result.tables[0].rows][: len(QUICK_ROWS[name])] == QUICK_ROWS[name]
    assert not [s for s in result.skipped if "no data here" in s or "not registered" in s or "learner" in s]
