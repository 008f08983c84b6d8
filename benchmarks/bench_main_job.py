"""The main job end to end, cold and warm: ``textcw train --corpus newsgroups --learner cw-stdev``.

Each run is a separate process, so imports, the numba cache and the corpus cache
(:mod:`textcw.corpus.cache`) count as they do for a user. Three conditions:

- ``no cache``: ``TEXTCW_NO_CACHE=1``, the archive parsed and every document tokenised (what
  every run did before the cache);
- ``cold``: an empty cache folder (``TEXTCW_CACHE``), so the run parses, featurizes and fills it;
- ``warm``: the same folder again: the featurized matrices and the fitted featurizer are read.

For each, a probe process times the stages of :func:`textcw.pipeline.train` from its progress
reports (import; read = loading the corpus, or the cached matrices when warm; featurize; train;
predict), and the ``textcw train`` command itself is timed as a whole (wall). One untimed run
first compiles or loads the numba kernels. Warm runs are repeated ``--repeat`` times (median).

Run by hand (not a test): ``TEXTCW_DATA=... python benchmarks/bench_main_job.py [--corpus C]
[--learner L] [--repeat N]``. Check the load average first: on a busy machine every number
grows. Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROBE = r"""
import json, sys, time
t0 = time.perf_counter()
import textcw.cli, textcw.pipeline
marks = {"import": time.perf_counter()}
def progress(stage, done, total):
    now = time.perf_counter()
    if stage == "featurizing" and done == 0: marks.setdefault("read", now)
    elif stage == "featurizing" and done == 1: marks.setdefault("featurize", now)
    elif stage == "evaluating" and done == 0: marks.setdefault("train", now)
    elif stage == "evaluating" and done == 1: marks.setdefault("predict", now)
# as `textcw train` without --json or --out: no probability metrics, no calibration
result = textcw.pipeline.train(sys.argv[1], sys.argv[2], progress=progress, probability_metrics=False,
                             probability="raw")  # nothing saved: textcw train skips calibration too
order, last, out = ["import", "read", "featurize", "train", "predict"], t0, {}
for name in order:
    out[name], last = marks[name] - last, marks[name]
out["accuracy"] = result.accuracy
print(json.dumps(out))
"""
STAGES = ("import", "read", "featurize", "train", "predict")


def probe(corpus: str, learner: str, env: dict) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, corpus, learner], env=env, check=True,
                          capture_output=True, text=True, cwd=tempfile.gettempdir())
    return json.loads(done.stdout.strip().splitlines()[-1])


def command(corpus: str, learner: str, env: dict) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "textcw", "train", "--corpus", corpus, "--learner", learner],
                          env=env, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir())
    return time.perf_counter() - t0, done.stdout.split("accuracy ")[1].split()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="newsgroups")
    parser.add_argument("--learner", default="cw-stdev")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if k not in ("TEXTCW_CACHE", "TEXTCW_NO_CACHE")}
    folder = tempfile.mkdtemp(prefix="textcw-bench-cache-")
    off = {**base, "TEXTCW_NO_CACHE": "1"}
    on = {**base, "TEXTCW_CACHE": folder}
    try:
        command(args.corpus, args.learner, off)  # numba kernels compiled or loaded, files in the OS cache
        rows = {}
        # the command and the probe each get their own cold run: both start from an empty folder
        rows["no cache"] = ([probe(args.corpus, args.learner, off)], [command(args.corpus, args.learner, off)])
        cold_probe = probe(args.corpus, args.learner, on)
        warm_probe = [probe(args.corpus, args.learner, on) for _ in range(args.repeat)]
        shutil.rmtree(folder)
        os.mkdir(folder)
        cold_cmd = command(args.corpus, args.learner, on)
        warm_cmd = [command(args.corpus, args.learner, on) for _ in range(args.repeat)]
        rows["cold"] = ([cold_probe], [cold_cmd])
        rows["warm"] = (warm_probe, warm_cmd)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{args.corpus} / {args.learner}; {os.cpu_count()} cores, load average {load:.2f}; "
          f"warm: median of {args.repeat}")
    header = ["condition", *STAGES, "stages total", "textcw train (wall)", "accuracy"]
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    summary = {}
    for name, (probes, commands) in rows.items():
        stages = {s: statistics.median(p[s] for p in probes) for s in STAGES}
        wall = statistics.median(t for t, _ in commands)
        # the command prints 4 decimals; a cached run that differed would show a second value
        accuracies = {f"{p['accuracy']:.4f}" for p in probes} | {a for _, a in commands}
        accuracy = ", ".join(sorted(accuracies))
        summary[name] = {**stages, "wall": wall, "accuracy": sorted(accuracies)}
        print(" | ".join([name, *(f"{stages[s]:.2f} s" for s in STAGES),
                          f"{sum(stages.values()):.2f} s", f"{wall:.2f} s", accuracy]))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"load": load, "rows": summary}, fh, indent=2)


if __name__ == "__main__":
    main()
