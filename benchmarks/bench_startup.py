"""Start-up cost of what a user types: ``textcw --help``, ``textcw list learners`` and, with
``--model``, a one-line ``textcw predict MODEL``, beside the floor every learning command pays,
``import sklearn.base``.

Why these three: ``--help`` and ``list`` should pay only for typer and textcw's own light
modules (no scikit-learn, SciPy, numba, and no installed plugin's code unless a name of it is
listed), so their time says whether that still holds; ``import sklearn.base`` is what any
command that trains or predicts pays on top, to compare with.

The cases are run interleaved (one run of each, then again, ``--repeat`` times, after one untimed
warm-up of each), so a change in the machine's load during the run affects every case alike
rather than the one that happened to run then. Each run is a new process started from a neutral
folder; its wall time and its CPU time (user + system, from ``getrusage`` of the children) are
recorded, and the table shows the medians and the best wall time, with the load average before
and after (on a busy machine every number grows; CPU time is the steadier one).

Run by hand (not a test): ``python benchmarks/bench_startup.py [--repeat 5] [--model M]
[--checkout DIR] [--json out.json]`` with the environment's Python (``.venv/bin/python``); prints
a markdown table. ``--checkout DIR`` times another checkout's package with the same
environment, so two versions are compared in one session on one machine. Results:
docs/benchmarks.md, "Start-up and fixed cost".
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def textcw_command() -> list[str]:
    """The installed ``textcw`` script beside this Python, as a user runs it; else ``-m textcw``."""
    script = Path(sys.executable).with_name("textcw")
    return [str(script)] if script.exists() else [sys.executable, "-m", "textcw"]


PREDICT_LINE = b"my mac's nubus video card\n"  # the one stdin line of the predict case


def cases(model: str | None = None) -> dict[str, list[str]]:
    textcw = textcw_command()
    table = {
        "python -c 'import sklearn.base'": [sys.executable, "-c", "import sklearn.base"],
        "textcw --help": [*textcw, "--help"],
        "textcw --version": [*textcw, "--version"],
        "textcw list learners": [*textcw, "list", "learners"],
    }
    if model is not None:
        table["echo LINE | textcw predict MODEL"] = [*textcw, "predict", str(Path(model).resolve())]
    return table


def run_once(argv: list[str], cwd: str, env: dict | None = None) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``argv`` (a predict reads its line from stdin)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, check=False, env=env,
                          input=PREDICT_LINE if "predict" in argv else None)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(repeat: int, model: str | None = None, checkout: str | None = None) -> dict[str, dict]:
    """``{case: {"wall": [...], "cpu": [...]}}``, the cases interleaved; with ``checkout``, the
    package of that checkout is timed instead (``PYTHONPATH``), with this environment."""
    table = cases(model)
    if checkout:  # ``python -m textcw`` so that PYTHONPATH, not the installed script, decides
        table = {name: [sys.executable, "-m", "textcw", *argv[len(textcw_command()):]]
                 if name.startswith(("textcw", "echo")) else argv for name, argv in table.items()}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [checkout, os.environ.get("PYTHONPATH")]))} \
        if checkout else None
    cwd = tempfile.gettempdir()  # not a checkout: the current folder must not shadow the package
    for argv in table.values():
        run_once(argv, cwd, env)  # warm-up, untimed: the file cache is warm, as for a user's second command
    times: dict[str, dict] = {name: {"wall": [], "cpu": []} for name in table}
    for _ in range(repeat):
        for name, argv in table.items():
            wall, cpu = run_once(argv, cwd, env)
            times[name]["wall"].append(wall)
            times[name]["cpu"].append(cpu)
    return times


def _load(average: tuple) -> str:
    return " ".join(f"{x:.2f}" for x in average)


def markdown(times: dict[str, dict], load_before: tuple, load_after: tuple, repeat: int) -> str:
    lines = [f"Load average (1, 5, 15 min): before {_load(load_before)}, after {_load(load_after)}; "
             f"{os.cpu_count()} cores; Python {sys.version.split()[0]}; median of {repeat} interleaved runs.",
             "",
             "| command | wall median (s) | wall best (s) | CPU median (s) |",
             "|---|---:|---:|---:|"]
    for name, t in times.items():
        lines.append(f"| `{name}` | {statistics.median(t['wall']):.3f} | {min(t['wall']):.3f} | "
                     f"{statistics.median(t['cpu']):.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="also write the raw times to this file")
    parser.add_argument("--model", help="also time a one-line predict with this model file (e.g. the README's "
                        "main job: textcw train --corpus newsgroups --learner cw-stdev --out m.textcw-model)")
    parser.add_argument("--checkout", help="time the package of this checkout (another version) instead")
    args = parser.parse_args()
    load_before = os.getloadavg()
    times = measure(args.repeat, args.model, args.checkout)
    load_after = os.getloadavg()
    print(markdown(times, load_before, load_after, args.repeat))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"load_before": load_before, "load_after": load_after, "times": times}, fh, indent=2)


if __name__ == "__main__":
    main()
