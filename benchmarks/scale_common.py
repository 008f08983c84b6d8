"""Helpers of the scale benchmarks: run ``textcw train`` in a child process, measure it."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass


@dataclass
class Run:
    """One ``textcw train --json`` process: its JSON summary, wall time and peak memory."""

    summary: dict
    wall_seconds: float
    peak_rss_mb: float


def run_train(args: list[str]) -> Run:
    """``textcw train ARGS --json`` in a fresh interpreter; peak RSS from ``wait4`` (Linux: KiB).

    Only the training process is measured (``ru_maxrss`` of that child): worker processes of
    ``--shards`` are its children and are not included.
    """
    cmd = [sys.executable, "-c", "from textcw.cli import main; main()", "train", *args, "--json"]
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {err.read().decode()[-2000:]}")
    return Run(json.loads(out), wall, usage.ru_maxrss / 1024)


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def table(columns: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
