"""The suites' report hook (``tests/conftest.py``, ``pytest_runtest_makereport``): an expected
failure is reported without its traceback rendered, and every other outcome exactly as pytest
reports it. Run in a pytest of its own on a small suite, each test's report written down by a
``pytest_runtest_logreport`` hook there."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from hang import HANG_SECONDS

CONFTEST = Path(__file__).resolve().parent / "conftest.py"

# Loads only the hook (and what it calls) from the suites' conftest, not its fixtures.
HARNESS = textwrap.dedent(f"""
    import importlib.util, json, sys

    sys.path.insert(0, {str(CONFTEST.parent)!r})  # the suites' helper modules it imports
    spec = importlib.util.spec_from_file_location("suites_conftest", {str(CONFTEST)!r})
    suites = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suites)
    pytest_runtest_makereport = suites.pytest_runtest_makereport

    def pytest_runtest_logreport(report):
        if report.when == "call" or report.outcome != "passed":
            with open("reports.jsonl", "a") as out:
                out.write(json.dumps({{"test": report.nodeid.split("::")[-1], "when": report.when,
                                      "outcome": report.outcome,
                                      "xfail": getattr(report, "wasxfail", None),
                                      "longrepr": str(report.longrepr)}}) + "\\n")
""")

SUITE = textwrap.dedent("""
    import subprocess
    import pytest

    def deep(n):
        if n == 0:
            assert 1 + 1 == 3, "the listed defect"
        deep(n - 1)

    @pytest.mark.xfail(reason="known", strict=True)
    def test_expected():
        deep(3)

    @pytest.mark.xfail(reason="known", strict=True)
    def test_fixed():
        pass

    @pytest.mark.xfail(False, reason="not on this platform")
    def test_condition_false():
        deep(1)

    @pytest.mark.xfail(raises=KeyError, reason="a KeyError only")
    def test_other_exception():
        deep(1)

    def test_imperative():
        pytest.xfail("decided at run time")

    def test_plain_failure():
        deep(1)

    def test_hang():
        raise subprocess.TimeoutExpired(["sleep", "9"], 1)
""")


def run_suite(tmp_path: Path, *options: str) -> dict[str, dict]:
    (tmp_path / "conftest.py").write_text(HARNESS, encoding="utf-8")
    (tmp_path / "test_suite.py").write_text(SUITE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "--rootdir", str(tmp_path), *options, "test_suite.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 1, done.stdout + done.stderr  # the suite has real failures
    lines = (tmp_path / "reports.jsonl").read_text(encoding="utf-8").splitlines()
    return {report["test"]: report for report in map(json.loads, lines)}


def test_expected_failures_carry_one_line_and_every_other_outcome_is_pytest_s(tmp_path):
    reports = run_suite(tmp_path)
    expected = reports["test_expected"]
    assert (expected["outcome"], expected["xfail"]) == ("skipped", "known")
    assert expected["longrepr"] == (f"{tmp_path / 'test_suite.py'}:7: "
                                    "AssertionError: the listed defect\nassert (1 + 1) == 3")
    # a strict expected failure that passes still fails the run
    assert reports["test_fixed"]["outcome"] == "failed"
    assert reports["test_fixed"]["longrepr"] == "[XPASS(strict)] known"
    assert reports["test_imperative"]["outcome"] == "skipped"
    assert reports["test_imperative"]["xfail"] == "decided at run time"
    # not expected after all: pytest's full traceback, with the source of every frame
    for name in ("test_condition_false", "test_other_exception", "test_plain_failure"):
        report = reports[name]
        assert (report["outcome"], report["xfail"]) == ("failed", None), name
        assert ">       deep(1)" in report["longrepr"] and ">           assert 1 + 1 == 3" in report["longrepr"]
        assert report["longrepr"].endswith("test_suite.py:7: AssertionError")
    assert reports["test_hang"]["longrepr"].startswith("HANG: Command '['sleep', '9']' timed out after 1 seconds")


def test_runxfail_reports_the_full_traceback(tmp_path):
    reports = run_suite(tmp_path, "--runxfail")
    expected = reports["test_expected"]
    assert (expected["outcome"], expected["xfail"]) == ("failed", None)
    assert ">       deep(3)" in expected["longrepr"] and ">           assert 1 + 1 == 3" in expected["longrepr"]
