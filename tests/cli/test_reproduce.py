"""``textcw reproduce``: listing, errors, and every reproduction's --quick run (what CI runs)."""

from __future__ import annotations

import os

import pytest

from cli_run import one_line_error, run
from textcw.cli import main
from textcw.errors import UnknownNameError
from textcw.evaluation import experiments
from hang import HANG_SECONDS


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


def test_textcw_debug_shows_the_traceback(capsys, monkeypatch):
    import subprocess
    import sys

    env = {**os.environ, "TEXTCW_DEBUG": "1", "TEXTCW_NO_PLUGINS": "1"}
    done = subprocess.run([sys.executable, "-m", "textcw", "reproduce", "jmlr-table9"], env=env,
                          capture_output=True, text=True, timeout=HANG_SECONDS)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and done.stdout == ""
    assert lines[0] == "Traceback (most recent call last):" and len(lines) > 3
    assert lines[-1].startswith("textcw.errors.UnknownNameError: unknown experiment 'jmlr-table9'; valid")

    # in-process: the error itself propagates instead of the one-line exit
    monkeypatch.setenv("TEXTCW_DEBUG", "1")
    with pytest.raises(UnknownNameError, match="^unknown experiment 'jmlr-table9'; valid experiment names:"):
        main(["reproduce", "jmlr-table9"])


def test_an_unexpected_error_is_one_line_unless_debugging(capsys, monkeypatch):
    def broken(name):
        raise RuntimeError("the experiment table is broken")

    monkeypatch.setattr(experiments, "get", broken)
    monkeypatch.delenv("TEXTCW_DEBUG", raising=False)
    code, out, err = run(capsys, "reproduce", "jmlr-table3", "--quick")
    assert (code, out) == (1, "")
    assert one_line_error(err) == ("error: unexpected RuntimeError: the experiment table is broken "
                                   "(rerun with TEXTCW_DEBUG=1 for details)")
    monkeypatch.setenv("TEXTCW_DEBUG", "1")
    with pytest.raises(RuntimeError, match="^the experiment table is broken$"):
        main(["reproduce", "jmlr-table3", "--quick"])


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


# Which of each quick run's checks pass (True) and which are known differences from the paper
# (False), documented in docs/reproduction.md ("What the quick runs check"). A check that changes
# outcome, appears or disappears fails the test. None: the check compares wall-clock training
# times, which depend on the machine; it must be there, but its outcome is not asserted.
QUICK_CHECKS = {
    "jmlr-table2": {
        "var: the exact diagonalisation ranks against KL and L2 as in the paper": True,
        "stdev: the exact diagonalisation ranks against KL and L2 as in the paper": False,
    },
    "jmlr-table3": {
        "text tasks: best CW beats every online baseline (paper: 'in every experiment')": True,
        "USPS pairs: best CW not significantly worse than perceptron and PA (McNemar p >= 0.05)": True,
        "best CW within 1.5 points of the paper's best CW (or lower) on >= 3 of every 4 tasks": True,
    },
    "jmlr-table4": {
        "best CW beats every batch learner on as many tasks as in the paper": False,
    },
    "jmlr-table5": {
        "CW (variance KL) trains faster than maxent and the SVM on every task": None,
    },
    "emnlp-table3": {
        "the best CW beats every baseline on most tasks (paper: 8 of 9)": True,
    },
    "arow-noise": {
        "no noise: AROW and CW rank above PA and SOP (paper: 1.51, 1.63, then PA, SOP)": True,
        "30% noise: PA outranks CW (paper: 'PA easily outranks CW')": False,
        "with noise AROW has the best mean rank at every rate": False,
    },
    "nips-synthetic": {
        "second-order (full-matrix) learners make fewer than 80 mistakes": False,
        "first-order learners make at least 129 mistakes": True,
        "diagonal CW makes fewer mistakes than the first-order learners": True,
        "CW-Var makes more mistakes than CW-Stdev (diag; paper: 1.08x)": False,
        "CW-Var makes more mistakes than CW-Stdev (full; paper: 1.17x)": True,
        "CW-Stdev has the lowest test error": True,
    },
}


# Figures each quick run writes with --plot: learning curves and reliability diagrams (a table
# experiment), the noise curve, the online mistake curves. None: run without --plot (the figures
# of the other table experiments are drawn by the same code as jmlr-table2's).
QUICK_FIGURES = {
    "jmlr-table2": ["curve-amazon_books.png", "curve-newsgroups_comp.png", "curve-spam_u00.png",
                    "reliability-amazon_books.png", "reliability-newsgroups_comp.png",
                    "reliability-spam_u00.png"],
    "jmlr-table3": None, "jmlr-table4": None, "jmlr-table5": None, "emnlp-table3": None,
    "arow-noise": ["noise.png"],
    "nips-synthetic": ["nips-synthetic-mistakes.png"],
}


# The reproductions that share tuning runs and cells (JMLR 2012 Tables 2-5: the same learners on the
# same tasks; :data:`textcw.evaluation.experiments.cells.CELLS`, one cache per process). Their tests
# are next to each other and first among the slow tests (conftest.py), so pytest-xdist starts them in
# order on one worker and later ones find what earlier ones computed; a test moved to another worker
# still runs its experiment in full, and finds nothing (the hits below are counted either way).
SHARING = ("jmlr-table2", "jmlr-table3", "jmlr-table4", "jmlr-table5")

# Cache hits of each quick run of SHARING after the ones before it, in this order, from an empty
# cache. Table 2 (run with --plot, so its cells record curves and probabilities) computes
# everything. Table 3 reuses the tuning of its 4 diagonal CW columns on Table 2's 3 tasks (12); its
# cells record no curves, so none is Table 2's. Table 4 reuses the tuning and the cells of the same
# 4 CW columns on Table 3's 4 tasks (16 + 16). Table 5 tunes 6 learners on 3 tasks, each tuned
# before by Tables 2-4 (18); its timed fits are always new.
SHARED_HITS = {"jmlr-table2": 0, "jmlr-table3": 12, "jmlr-table4": 32, "jmlr-table5": 18}


def planned(name: str) -> set:
    """What a quick run of ``name`` (one of SHARING) looks up in the cache: a tuning run per
    (paper row, learner spec), and a cell per (paper row, learner spec, whether it records figures)."""
    from textcw.evaluation.experiments import jmlr_table5

    if name == "jmlr-table5":
        return {("tuning", row, repr(spec)) for row in jmlr_table5.QUICK_ROWS for _, spec in jmlr_table5.COLUMNS}
    table = experiments.get(name)
    figures = QUICK_FIGURES[name] is not None
    return {entry for row in table.quick_rows for _, spec in table.columns
            for entry in (("tuning", row, repr(spec)), ("cells", row, repr(spec), figures))}


# What the SHARING tests have run in this process, and the cache's state after the last of them
# (anything else that used the cache since makes the next one start from an empty cache).
_SHARED_RUNS: dict = {"planned": set(), "state": None}


def test_every_reproduction_has_its_expected_checks():
    assert sorted(QUICK_CHECKS) == sorted(experiments.names()) == sorted(QUICK_ROWS) == sorted(QUICK_FIGURES)
    assert list(SHARED_HITS) == list(SHARING) == experiments.names()[:len(SHARING)]
    seen, hits = set(), {}
    for name in SHARING:
        hits[name] = len(planned(name) & seen)
        seen |= planned(name)
    assert hits == SHARED_HITS


@pytest.mark.corpus
@pytest.mark.slow
@pytest.mark.parametrize("name", experiments.names())
def test_quick_reproduction(capsys, tmp_path, name, data_home):
    from textcw.evaluation.experiments.cells import CELLS

    if name not in SHARING:
        check_quick_run(capsys, tmp_path, name)
        return
    if _SHARED_RUNS["state"] != (CELLS.hits, CELLS.misses, len(CELLS)):
        CELLS.clear()
        _SHARED_RUNS["planned"] = set()
    expected = len(planned(name) & _SHARED_RUNS["planned"])
    before = CELLS.hits
    check_quick_run(capsys, tmp_path, name)
    assert CELLS.hits - before == expected, f"{name} found {CELLS.hits - before} results in the cache, not {expected}"
    _SHARED_RUNS["planned"] |= planned(name)
    _SHARED_RUNS["state"] = (CELLS.hits, CELLS.misses, len(CELLS))


def check_quick_run(capsys, tmp_path, name):
    figures = tmp_path / "figures"
    plot = ["--plot", str(figures)] if QUICK_FIGURES[name] is not None else []
    code, out, err = run(capsys, "reproduce", name, "--quick", "--json-out", str(tmp_path / "r.json"), *plot)
    assert "published:" in out and "quick run in" in out
    from textcw.evaluation.experiments.base import ExperimentResult

    result = ExperimentResult.from_json(tmp_path / "r.json")
    # exit 1 exactly when a check failed (known differences included)
    assert code == (1 if any(not check.passed for check in result.checks) else 0), err
    assert result.quick and not result.interrupted and result.failures == []
    assert [row[0] for row in result.tables[0].rows][: len(QUICK_ROWS[name])] == QUICK_ROWS[name]
    assert not [s for s in result.skipped if "no data here" in s or "not registered" in s or "learner" in s]
    outcomes = {check.name: check.passed for check in result.checks}
    assert len(outcomes) == len(result.checks), "two checks share a name"
    expected = QUICK_CHECKS[name]
    assert sorted(outcomes) == sorted(expected)
    details = {check.name: check.detail for check in result.checks}
    changed = {n: (outcomes[n], details[n]) for n, passed in expected.items()
               if passed is not None and outcomes[n] != passed}
    assert not changed, f"checks whose outcome changed (now, detail): {changed}"
    for check in result.checks:  # the printed verdict is the recorded one
        assert f"[{'pass' if check.passed else 'FAIL'}] {check.name}: {check.detail}" in out

    # --plot: every figure is a PNG image, and the experiment's own figures are there
    if QUICK_FIGURES[name] is None:
        return
    written = sorted(p.name for p in figures.iterdir())
    assert set(QUICK_FIGURES[name]) <= set(written), written
    from matplotlib.image import imread

    for file in written:
        assert file.endswith(".png") and (figures / file).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        height, width, _ = imread(figures / file).shape
        assert height > 100 and width > 100
