"""Running the ``textcw`` command in-process from tests, and reading its one-line errors."""

from __future__ import annotations

import io
import os
import sys

from textcw.cli import main


def run(capsys, *argv, stdin: bytes | None = None) -> tuple[int, str, str]:
    """``textcw ARGV`` (str, bytes or path arguments): ``(exit code, stdout, stderr)``."""
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        main([os.fsdecode(a) if isinstance(a, bytes) else str(a) for a in argv])
        code = 0
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.stdin = saved
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    """The single ``error: ...`` line of a failed run (and no traceback)."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]
