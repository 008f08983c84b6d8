"""The plugin's benchmark scripts run, small, as a user runs them: a smoke run, so none rots.

``serve_load.py`` went weeks broken (a ``NameError``) because nothing ran it. Here each script
runs once as its docstring shows, ``python plugins/textcw-serve/benchmarks/NAME.py ARGS`` from
the repository root with the environment's Python, for a fraction of a second per phase or
flood: it must exit with 0 and print its table (the rows named below, one per phase or flood),
with every temporary file (the services' state folders and logs) under the test's folder
(``TMPDIR``). Times are not checked: at these sizes they mean nothing. Like
``tests/test_benchmark_scripts.py`` for ``benchmarks/``, a new script in the plugin's
``benchmarks/`` that is not listed here fails :func:`test_every_serve_benchmark_is_smoke_run`.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from serve_fixtures import save_model

REPO = Path(__file__).resolve().parents[3]
BENCHMARKS = REPO / "plugins" / "textcw-serve" / "benchmarks"


def _hang_seconds() -> float:
    """The suite's one hang guard (``tests/hang.py``), far above any real run; read from its
    file, since this suite also runs without ``tests/`` on the import path."""
    spec = importlib.util.spec_from_file_location("hang", REPO / "tests" / "hang.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.HANG_SECONDS


HANG_SECONDS = _hang_seconds()

# script -> (arguments, with {model} a two-class model made in the test's folder; lines of its table)
SCRIPTS = {
    "checkpoint_cost.py": (
        ("{model}", "--updates", "2,5"),
        ("| updates | checkpoint | rows | bytes | seconds | full checkpoint bytes | seconds |", "| 2 | delta | ",
         "| 5 | delta | ")),
    "serve_load.py": (
        ("{model}", "--seconds", "0.5", "--clients", "2"),
        ("| phase | current: throughput | p50 ms | p99 ms | CPU ms | client CPU ms |", "| predict, 1 document, 1 client | ",
         "| predict, batches of 32, 2 clients | ", "| learn, 1 document, 2 clients, group commit | ",
         "| mixed load, 2 clients: learn | ", "| mixed load, 2 clients: predict | ",
         "| learn, 1 document, 2 clients, one fsync per update | ")),
    "slow_clients.py": (
        ("--classes", "5", "--flood", "4", "--requests", "5", "--seconds", "1"),
        ("| flood (4 connections; connection limit 136) | /health answered |", "| quiet | ",
         "| slow headers | ", "| slow readers | ", "| slow bodies, reconnecting | ", "| reconnecting flood | ")),
}


@pytest.mark.slow
def test_serve_load_measures_the_answers_besides_the_label(tmp_path):
    """The phases run only when named: the /predict options and /suggest."""
    model = save_model(tmp_path)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "TEXTCW_CACHE": str(tmp_path / "cache")}
    phases = ["predict-16", "top-32", "explain-16", "suggest-32"]
    done = subprocess.run([sys.executable, str((BENCHMARKS / "serve_load.py").relative_to(REPO)), str(model),
                           "--seconds", "0.5", *(a for p in phases for a in ("--only", p))],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [row.split(" | ")[0] for row in rows] == [
        "| predict, batches of 16, 1 client", "| predict with top 2, batches of 32, 1 client",
        "| predict with explain 10, batches of 16, 1 client", "| suggest (mistake), 32 documents, 1 client"], rows
    assert all(float(row.split(" | ")[1].split()[0].replace(",", "")) > 0 for row in rows), rows
    # the clients' CPU time per request, and the service's (read from /proc: Linux only), measured
    assert all(float(row.rstrip(" |").split(" | ")[5]) > 0 for row in rows), rows
    if Path("/proc/self/stat").exists():
        assert all(float(row.split(" | ")[4]) > 0 for row in rows), rows


def test_every_serve_benchmark_is_smoke_run():
    found = {p.name for p in BENCHMARKS.glob("*.py")}
    assert found == set(SCRIPTS), (f"plugins/textcw-serve/benchmarks/ holds {sorted(found)}, "
                                   f"{Path(__file__).name} smoke-runs {sorted(SCRIPTS)}: list the new script")


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_serve_benchmark_runs_small(name, tmp_path):
    args, lines = SCRIPTS[name]
    model = save_model(tmp_path)
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, "TMPDIR": str(temp), "TEXTCW_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, str((BENCHMARKS / name).relative_to(REPO)),
                           *(a.format(model=model) for a in args)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0, f"{name} exited with {done.returncode}:\n{done.stderr[-3000:]}"
    missing = [line for line in lines if line not in done.stdout]
    assert not missing, f"{name} did not print {missing}; it printed:\n{done.stdout[-3000:]}"
    assert not any(temp.iterdir()), f"{name} left {sorted(p.name for p in temp.iterdir())} behind"
