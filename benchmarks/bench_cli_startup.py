"""Start-up of the ``textcw`` command: wall time of commands that should not wait for numba.

Times, as separate processes, ``textcw --help``, ``textcw --version``, ``textcw list learners``
and the shell-completion request a shell makes on <TAB>, each ``--repeat`` times after one
untimed warm-up run (so the operating system's file cache is warm, as it is for a user's second
command), and prints the median and the best wall time. ``--checkout DIR`` times the package
of another checkout with this environment (``PYTHONPATH=DIR``), to compare two versions on the
same machine in one run. The modules each command imported are counted too: scikit-learn,
scipy and numba should appear only where a command needs them.

Run by hand (not a test): ``python benchmarks/bench_cli_startup.py [--repeat N]
[--checkout DIR] [--json out.json]``. Check the load average first: on a busy machine every
number grows. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = {
    "textcw --help": ["--help"],
    "textcw --version": ["--version"],
    "textcw list learners": ["list", "learners"],
}
HEAVY = ("sklearn", "scipy", "numba")
PROBE = ("import sys, runpy; sys.argv = ['textcw', *sys.argv[1:]]\n"
         "try:\n    runpy.run_module('textcw', run_name='__main__')\nexcept SystemExit:\n    pass\n"
         "print('\\nHEAVY', sorted({m.split('.')[0] for m in sys.modules} & set(HEAVY)), file=sys.stderr)")


def environment(checkout: str | None, extra: dict | None = None) -> dict:
    env = {**os.environ, **(extra or {})}
    if checkout:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [checkout, env.get("PYTHONPATH")]))
    return env


# Commands run outside any checkout, so that the current folder does not shadow the package timed.
NEUTRAL = tempfile.gettempdir()


def wall_times(argv: list[str], env: dict, repeat: int) -> list[float]:
    cmd = [sys.executable, "-m", "textcw", *argv]
    subprocess.run(cmd, env=env, capture_output=True, check=False, cwd=NEUTRAL)  # warm-up, untimed
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, capture_output=True, check=False, cwd=NEUTRAL)
        times.append(time.perf_counter() - start)
    return times


def heavy_modules(argv: list[str], env: dict) -> list[str]:
    run = subprocess.run([sys.executable, "-c", f"HEAVY = {HEAVY!r}\n{PROBE}", *argv], env=env,
                         capture_output=True, text=True, check=False, cwd=NEUTRAL)
    line = [x for x in run.stderr.splitlines() if x.startswith("HEAVY ")]
    return json.loads(line[-1][6:].replace("'", '"')) if line else ["?"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--checkout", help="time the textcw package of this checkout instead")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; python {sys.version.split()[0]}; "
          f"{args.repeat} runs each after a warm-up" + (f"; checkout {args.checkout}" if args.checkout else ""))
    results = {}
    cases = dict(COMMANDS)
    completion = {"_TEXTCW_COMPLETE": "complete_bash", "COMP_WORDS": "textcw tr", "COMP_CWORD": "1"}
    for name, argv in [*cases.items(), ("shell completion (textcw tr<TAB>)", [])]:
        env = environment(args.checkout, completion if not argv else None)
        times = wall_times(argv, env, args.repeat)
        results[name] = {"median_s": statistics.median(times), "best_s": min(times),
                         "heavy_modules": heavy_modules(argv, env)}
        r = results[name]
        print(f"{name:<36} median {r['median_s']:.3f} s  best {r['best_s']:.3f} s  "
              f"imports {', '.join(r['heavy_modules']) or 'none of ' + '/'.join(HEAVY)}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
