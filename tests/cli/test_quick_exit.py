"""The command line's exit: the garbage collector's final passes are skipped, once per process."""

from __future__ import annotations

import atexit
import gc
import subprocess
import sys

import textcw.cli as cli
from hang import HANG_SECONDS


def test_main_registers_the_freeze_at_exit_once(monkeypatch, capsys):
    registered = []
    monkeypatch.setattr(cli, "_exit_registered", False)
    monkeypatch.setattr(atexit, "register", lambda fn, *a, **k: registered.append(fn))
    cli.main(["--version"])
    cli.main(["--version"])
    assert registered == [gc.freeze]
    out = capsys.readouterr().out
    assert out.count("textcw ") == 2 and out.startswith("textcw ")  # both calls ran as usual


def test_the_command_line_still_exits_with_its_output_flushed():
    out = subprocess.run([sys.executable, "-m", "textcw.cli", "--version"], capture_output=True, text=True,
                         timeout=HANG_SECONDS)
    assert out.returncode == 0 and out.stderr == ""
    assert out.stdout.startswith("textcw ") and out.stdout.endswith("\n") and "scikit-learn" in out.stdout
