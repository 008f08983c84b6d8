"""The first run's notice: a command that compiles kernels says so once, on a terminal only."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numba
import pytest

import textcw._jit_numba  # noqa: F401 - loaded, as after any command that used a kernel
from textcw import _compile_notice
from textcw._compile_notice import NOTICE, WAITING


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def fresh_notice(monkeypatch):
    """The module as a new command process finds it (listener state kept: one per process)."""
    monkeypatch.setattr(_compile_notice, "_enabled_in", None)
    monkeypatch.setattr(_compile_notice, "_shown", False)
    monkeypatch.setattr(_compile_notice, "_waiting_shown", False)
    return _compile_notice


def compile_something(offset: float):
    """A kernel compiled now (not cached on disk), so numba sends its compile event."""
    return numba.njit(lambda x: x + offset)(1.0)


def test_a_command_on_a_terminal_says_once_that_it_compiles(fresh_notice, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    fresh_notice.enable()  # what textcw.cli.main does; a kernel has been used already here
    assert compile_something(1.0) == 2.0
    assert compile_something(2.0) == 3.0
    assert terminal.getvalue() == NOTICE + "\n"


def test_no_notice_when_nothing_compiles_or_the_output_is_not_a_terminal(fresh_notice, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    fresh_notice.enable()
    assert terminal.getvalue() == ""  # enabling alone prints nothing
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    compile_something(3.0)
    assert piped.getvalue() == ""


def test_the_library_used_from_python_stays_silent(fresh_notice, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    compile_something(4.0)  # never enabled: not a command of the command line
    assert terminal.getvalue() == ""


def test_a_forked_worker_does_not_repeat_it(fresh_notice, monkeypatch):
    fresh_notice.enable()
    monkeypatch.setattr(_compile_notice, "_enabled_in", os.getpid() + 1)  # as seen from a child
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    compile_something(5.0)
    assert terminal.getvalue() == ""


def test_the_command_line_enables_it_before_any_kernel_loads():
    """In a fresh ``textcw`` process, importing kernels imports no numba and attaches nothing;
    the first kernel used imports numba and attaches the listener."""
    code = ("import sys; from textcw import _compile_notice as n; n.enable(); import textcw._jit;"
            "from textcw._csr_kernel import kernel_ready; print('numba' in sys.modules, n._attached);"
            "import numpy as np; z = np.zeros(1, np.int64); kernel_ready(z, z[:0], np.zeros(0), 1);"
            "print('numba' in sys.modules, n._attached)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:2] == ["False False", "True True"]


def test_a_command_waiting_for_another_process_compiling_says_so_once(fresh_notice, monkeypatch, tmp_path):
    """The lock of a kernel another process is compiling (here: held by this test): the command
    says it waits, once, then gives up the lock after its wait and compiles alone."""
    import fcntl

    from textcw._jit_numba import _locked

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    fresh_notice.enable()
    path = str(tmp_path / "kernel.nbi.lock")
    holder = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        assert _locked(path, 0.1) is None and _locked(path, 0.1) is None
    finally:
        os.close(holder)
    assert terminal.getvalue() == WAITING.format(seconds=0.1) + "\n"
    fd = _locked(path, 0.1)  # free now: taken at once
    assert fd is not None
    os.close(fd)
