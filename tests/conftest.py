"""Shared fixtures. Tests that need a real corpus use ``data_home`` and fail when it is absent.

No test downloads: ``TEXTCW_OFFLINE=1`` is set for every test (``no_downloads``), so a missing
archive fails at once with textcw's message naming the file and where to put it, instead of
fetching it from the network. The corpus cache is a fresh folder per test run (``TEXTCW_CACHE``,
shared by the run's xdist workers), so no run depends on what an earlier one left, and none fills
the user's.
"""

from __future__ import annotations

import os
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from sparse_data import random_sparse


# Downloading is the subject of these modules (from a server on 127.0.0.1); they set up their own
# environment.
DOWNLOAD_TESTS = {"test_download.py"}


@pytest.fixture(scope="session", autouse=True)
def fresh_corpus_cache(tmp_path_factory):
    """A corpus cache of this run's own, also for the ``textcw`` processes tests start.

    Under pytest-xdist the workers of one run share it (the folder beside their own temporary
    folders, new for every run), so a corpus is parsed and featurized once per run rather than
    once per worker; cache files are written atomically, so workers never see half of one.
    """
    if os.environ.get("PYTEST_XDIST_WORKER"):
        folder = tmp_path_factory.getbasetemp().parent / "corpus-cache"
        folder.mkdir(exist_ok=True)
    else:
        folder = tmp_path_factory.mktemp("corpus-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TEXTCW_CACHE", str(folder))
        yield


@pytest.fixture(autouse=True)
def no_downloads(request, monkeypatch):
    """``TEXTCW_OFFLINE=1`` for every test except the download tests themselves."""
    if request.node.path.name not in DOWNLOAD_TESTS:
        monkeypatch.setenv("TEXTCW_OFFLINE", "1")


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` first, in their collected order, then the rest.

    Under xdist's ``worksteal`` each worker starts on its share of the collection in order and an
    idle worker takes tests from the end of another's queue; a test of several minutes collected
    last (the README's commands, in the serve plugin's suite) would start last and leave the
    other worker idle until it ends. Started first, the long tests overlap everything else.
    """
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # a stable sort


def _fails_as_expected(item, call) -> bool:
    """Whether this failure is sure to be reported as an expected failure: the test's first
    ``xfail`` mark (the one pytest applies) has no condition, runs the test and accepts any
    exception, ``--runxfail`` is off, and the exception is not a skip or an imperative xfail."""
    mark = item.get_closest_marker("xfail")
    return (call.excinfo is not None and mark is not None and not mark.args
            and "condition" not in mark.kwargs and mark.kwargs.get("raises") is None
            and mark.kwargs.get("run", True) and not item.config.option.runxfail
            and not isinstance(call.excinfo.value, (pytest.skip.Exception, pytest.xfail.Exception)))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Expected failures reported without their traceback rendered; hangs reported as hangs.

    pytest renders a failure's long traceback before it learns that the failure was expected,
    and then never shows it (an expected failure is reported by its mark's reason). Rendering
    parses the whole source file of every frame: about 0.3 s of CPU for each of the 263 strict
    expected failures of scikit-learn's checks (tests/learners/test_sklearn.py), whose frames
    are in its 5,000-line estimator_checks.py. The outcome is unchanged (a listed check that
    passes still fails the run, and a failure is an expected one only under its mark's
    conditions: :func:`_fails_as_expected`); the report carries the exception's one-line
    summary and where it was raised instead.

    A command that outlived its hang guard (:data:`hang.HANG_SECONDS`) is reported as a hang,
    so that a stalled machine is not read as a failure of the behaviour the test checks."""
    if _fails_as_expected(item, call):
        frames = call.excinfo.traceback
        where = f"{frames[-1].path}:{frames[-1].lineno + 1}: " if frames else ""
        summary = where + call.excinfo.exconly()
        item.repr_failure = lambda excinfo: summary  # for this report only: an instance attribute
    try:
        report = yield
    finally:
        item.__dict__.pop("repr_failure", None)
    if call.excinfo is not None and call.excinfo.errisinstance(subprocess.TimeoutExpired):
        report.longrepr = (f"HANG: {call.excinfo.value} This is a hang guard, far above any real run "
                           "(tests/hang.py): the command hung or the machine stalled; what the test "
                           "checks was not reached.")
    return report


def pytest_terminal_summary(terminalreporter):
    """Skips and expected failures counted by reason, one line per reason.

    ``-rfEX`` (pyproject.toml) names every failure, error and unexpected pass; the hundreds of
    skips and strict expected failures are known and explained where they are declared, so here
    they are only counted, which still shows at once a new reason or many more of an old one.
    """
    width = terminalreporter.config.get_terminal_writer().fullwidth  # a longer reason is cut
    for outcome, reason_of in (("skipped", _skip_reason), ("xfailed", _xfail_reason)):
        reports = terminalreporter.stats.get(outcome, [])
        if not reports:
            continue
        reasons = Counter(reason_of(report) for report in reports)
        terminalreporter.write_line(f"{len(reports)} {outcome}, by reason:")
        for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
            line = f"{count:6d}  {' '.join(reason.split())}"
            terminalreporter.write_line(line if len(line) <= width else line[:width - 3] + "...")


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def _xfail_reason(report) -> str:
    return getattr(report, "wasxfail", "") or "(no reason given)"


@pytest.fixture(scope="session")
def data_home() -> Path:
    """The folder with the real corpora (``$TEXTCW_DATA``); its absence is a failure, not a skip."""
    env = os.environ.get("TEXTCW_DATA")
    assert env, "TEXTCW_DATA is not set; point it at the corpora folder (CI: ../shared/corpora)"
    path = Path(env)
    assert path.is_dir(), f"TEXTCW_DATA={env} is not a folder"
    return path


@pytest.fixture
def binary_problem():
    X = random_sparse(300, 40, 0.15, seed=1, empty_rows=(5, 17))
    w = np.random.default_rng(2).normal(size=40)
    y = np.where(X @ w + 0.3 * np.random.default_rng(3).normal(size=300) > 0, "pos", "neg")
    return X, y


@pytest.fixture
def multiclass_problem():
    X = random_sparse(400, 30, 0.2, seed=4, empty_rows=(3,))
    W = np.random.default_rng(5).normal(size=(30, 4))
    y = np.argmax(X @ W + 0.2 * np.random.default_rng(6).normal(size=(400, 4)), axis=1)
    return X, y
