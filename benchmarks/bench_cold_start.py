"""Cold start: the first fit of a learner in a fresh environment, when numba compiles its kernels.

For each learner, a new Python process with ``NUMBA_CACHE_DIR`` pointed at an empty directory
imports textcw and fits a small seeded problem (300 documents x 2,000 features, binary labels,
and a 3-class version with ``--multiclass``) twice; a second new process then repeats the job
with the cache the first one wrote. Each process reports, as wall and CPU time (CPU time of the
process is the steadier number on a shared machine):

- ``import``: ``import textcw`` and the learner modules (numba, scikit-learn, the kernels' module
  objects; no compilation);
- ``first fit``: the fit that compiles the kernels (cold) or loads them from the cache (warm);
- ``second fit``: the same fit again, for the cost of the work itself.

It also lists the compiled specialisations the cold fit wrote to the cache (one ``.nbi`` index
per function).

Run by hand (not a test): ``python benchmarks/bench_cold_start.py [--learners cw-stdev,arow,pa1]
[--repeat R] [--multiclass] [--json out.json]``; with ``--repeat`` the best of R cold (and R warm)
processes counts. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

# The child: timed steps of one process, printed as one JSON line.
CHILD = r"""
import json, os, sys, time
clock = lambda: (time.perf_counter(), time.process_time())
marks = [clock()]
import numpy as np
import scipy.sparse as sp
import textcw
import textcw.learners.gaussian, textcw.learners.first_order
marks.append(clock())
name, multiclass = sys.argv[1], sys.argv[2] == "1"
X = sp.random(300, 2000, density=0.02, format="csr", random_state=0)
labels = np.random.default_rng(0).integers(0, 3 if multiclass else 2, size=300)
marks.append(clock())
textcw.make_learner(name, random_state=0).fit(X, labels)
marks.append(clock())
textcw.make_learner(name, random_state=0).fit(X, labels)
marks.append(clock())
spans = {"import": (0, 1), "first fit": (2, 3), "second fit": (3, 4)}
print(json.dumps({span: [marks[b][k] - marks[a][k] for k in (0, 1)] for span, (a, b) in spans.items()}))
"""


def run_child(learner: str, multiclass: bool, cache_dir: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir}
    out = subprocess.run([sys.executable, "-c", CHILD, learner, "1" if multiclass else "0"], env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compiled_functions(cache_dir: str) -> list[str]:
    """The cached functions (``module.function``), one per ``.nbi`` index file."""
    names = []
    for _, _, files in os.walk(cache_dir):
        names += [f.split("-")[0] for f in files if f.endswith(".nbi")]
    return sorted(names)


def best(runs: list[dict]) -> dict:
    """Per span, the run with the least CPU time (wall and CPU of that run)."""
    return {span: min((run[span] for run in runs), key=lambda t: t[1]) for span in runs[0]}


def measure(learner: str, multiclass: bool, repeat: int) -> dict:
    cold, warm = [], []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as cache_dir:
            cold.append(run_child(learner, multiclass, cache_dir))
            functions = compiled_functions(cache_dir)
            warm.append(run_child(learner, multiclass, cache_dir))
    return {"cold": best(cold), "warm": best(warm), "compiled": functions}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default="cw-stdev,arow,pa1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--multiclass", action="store_true", help="fit 3 classes instead of 2")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    results = {}
    print(f"{'learner':12s} {'cache':5s} {'import s':>14s} {'first fit s':>14s} {'second fit s':>14s}"
          f"   (wall / cpu, best of {args.repeat} by cpu)")
    for learner in args.learners.split(","):
        result = measure(learner, args.multiclass, args.repeat)
        results[learner] = result
        for cache in ("cold", "warm"):
            cells = " ".join(f"{wall:6.2f} /{cpu:6.2f}" for wall, cpu in result[cache].values())
            print(f"{learner:12s} {cache:5s} {cells}")
        print(f"{'':12s} compiled: {', '.join(result['compiled'])}")
    if hasattr(os, "getloadavg"):
        print(f"load average after the runs: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


if __name__ == "__main__":
    main()
