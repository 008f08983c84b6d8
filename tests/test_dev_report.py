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


def test_every_install_profile_is_made_afresh_in_one_folder_and_shares_the_kernel_cache(dev, tmp_path, monkeypatch):
    """numba files a kernel's machine code under its source file's full path: one folder for every
    profile's environment lets the later profiles load what the first compiled, and the bytecode
    Python compiles. The profile with other pinned versions (another numba) has caches of its own;
    the README's lines are a stage of their own, run by no profile."""
    monkeypatch.setattr(dev, "INSTALLS", tmp_path / "installs")
    monkeypatch.setattr(dev, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(dev, "build_wheel", lambda stage: tmp_path / "textcw-1.0-py3-none-any.whl")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "kernels"))
    runs = []

    def run(self, cmd, **kwargs):
        if cmd[1:3] == ["venv", "--quiet"]:  # the environment is new: nothing of the last profile is left
            assert not Path(cmd[-1]).exists()
            (Path(cmd[-1]) / "stale").mkdir(parents=True)
        if "pytest" in cmd:
            runs.append((cmd, kwargs["env"]))
        return 0

    monkeypatch.setattr(dev.Stage, "run", run)
    (tmp_path / "installs" / "pycache" / "shared" / "stale.pyc").parent.mkdir(parents=True)
    (tmp_path / "installs" / "pycache" / "shared" / "stale.pyc").write_bytes(b"an earlier wheel's")
    stage = dev.Stage("installed-package tests", open(tmp_path / "log", "w+", encoding="utf-8"))
    dev.test_installs(stage)
    profiles = [env["TEXTCW_INSTALLED_PROFILE"] for _, env in runs]
    assert profiles == list(dev.INSTALL_PROFILES)
    folder = tmp_path / "installs" / "profile-env"
    assert {env["TEXTCW_INSTALLED_BIN"] for _, env in runs} == {str(folder / dev.BIN.name)}
    caches = {env["TEXTCW_INSTALLED_PROFILE"]: env["NUMBA_CACHE_DIR"] for _, env in runs}
    pinned = {name for name, (_, constraints) in dev.INSTALL_PROFILES.items() if constraints is not None}
    assert pinned == {"minimum-versions"}
    assert {caches[name] for name in caches if name not in pinned} == {str(tmp_path / "kernels")}
    assert caches["minimum-versions"] == str(tmp_path / "kernels" / "profile-minimum-versions")
    # and their bytecode, in a folder of this run's own (the earlier run's is gone)
    bytecode = tmp_path / "installs" / "pycache"
    prefixes = {env["TEXTCW_INSTALLED_PROFILE"]: env["PYTHONPYCACHEPREFIX"] for _, env in runs}
    assert {prefixes[name] for name in prefixes if name not in pinned} == {str(bytecode / "shared")}
    assert prefixes["minimum-versions"] == str(bytecode / "profile-minimum-versions")
    assert not bytecode.exists()
    assert all(f"--ignore={dev.README_TEST}" in cmd for cmd, _ in runs)
    assert [("every_profile" in cmd) for cmd, _ in runs] == [name not in dev.FULL_PROFILES for name in profiles]
    stage.log.seek(0)
    assert stage.log.read().splitlines()[-1] == "installs: 6 passed, 0 failed"
    stage.log.close()
