"""``python3 dev.py test`` names its stages and ends with the totals of all its pytest runs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def dev():
    spec = importlib.util.spec_from_file_location("dev_script", ROOT / "dev.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def junit(path, tests, failures=0, errors=0, skipped=0, wrapped=True, xfailed=0):
    """A JUnit XML file as pytest writes it: ``xfailed`` of the ``skipped`` are expected failures."""
    cases = "".join(f'<testcase name="x{k}"><skipped type="pytest.xfail" message="design decision"/></testcase>'
                    for k in range(xfailed))
    cases += "".join(f'<testcase name="s{k}"><skipped type="pytest.skip" message="no"/></testcase>'
                     for k in range(skipped - xfailed))
    suite = (f'<testsuite name="pytest" tests="{tests}" failures="{failures}" errors="{errors}" '
             f'skipped="{skipped}">{cases}</testsuite>')
    path.write_text(f"<testsuites>{suite}</testsuites>" if wrapped else suite)
    return path


def test_totals_sum_every_run_and_count_a_run_without_results_as_failed(dev, tmp_path):
    runs = [(junit(tmp_path / "a.xml", 10, failures=1, errors=1, skipped=2, xfailed=1), 1),
            (junit(tmp_path / "b.xml", 5, skipped=1, wrapped=False), 0),
            (tmp_path / "missing.xml", 3),  # pytest could not start
            (tmp_path / "absent-but-fine.xml", 0)]
    assert dev.test_totals(runs) == {"passed": 10, "failed": 3, "skipped": 2, "xfailed": 1}


def test_a_stage_says_it_runs_and_its_pytest_runs_keep_quiet_results(dev, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(dev, "RESULTS", tmp_path)
    commands = []
    monkeypatch.setattr(dev.Stage, "run", lambda self, cmd, **kw: commands.append(cmd) or 0)
    stage = dev.Stage("all suites")
    assert capsys.readouterr().out == "[stage] all suites: running\n"
    stage.pytest(["pytest", "tests"])
    stage.pytest(["pytest", "more"])
    assert commands[0][:2] == ["pytest", "tests"] and "--disable-warnings" in commands[0]
    assert commands[0][-1] == f"--junit-xml={tmp_path / 'all-suites-0.xml'}"
    assert [path.name for path, _ in stage.pytest_runs] == ["all-suites-0.xml", "all-suites-1.xml"]


def test_the_report_s_last_line_is_the_totals(dev, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(dev, "RESULTS", tmp_path)
    monkeypatch.setattr(dev.Stage, "run", lambda self, cmd, **kw: 0)
    first, second = dev.Stage("kernels as plain Python"), dev.Stage("all suites")
    first.pytest_runs = [(junit(tmp_path / "k.xml", 7), 0)]
    second.pytest_runs = [(junit(tmp_path / "s.xml", 100, failures=2, skipped=5, xfailed=3), 1)]
    second.code = 1
    capsys.readouterr()
    assert dev.report("dev.py test", [first, second], 0.0) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "100 passed, 2 failed, 2 skipped, 3 expected failures"
    assert lines[-2].startswith("dev.py test: ")
