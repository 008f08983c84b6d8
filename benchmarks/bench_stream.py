"""Streaming throughput: ``textcw train --stream`` featurizing in this process or in worker processes.

Trains ``cw-var`` (one pass) on ``synthetic-text:N`` (default 10**6 documents), chunks of 10,000
documents through ``hashing`` (2**20 columns), with ``--workers 1`` (every chunk read and
featurized by the training process itself, the stream as it was) and ``--workers 2`` (two
processes read and featurize chunks ahead while the training process learns), each run in a
fresh process, alternating, ``--repeat`` times. Reports documents per second (training phase
and end to end), the ratio of the two, CPU seconds of all its processes and the cores
that made (CPU / wall: on a machine shared with other work, what the run actually got), peak
memory of the training process alone and of the
whole process tree (both sampled every 50 ms), and test accuracy, which must be identical.
A second size (default 10**5) shows that peak memory does not grow with the stream.

Run by hand (not a test): ``python benchmarks/bench_stream.py [--documents 1000000]
[--small 100000] [--repeat 2] [--json out.json]``. Results: docs/scale.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from scale_common import machine, table


@dataclass
class TreeRun:
    """One ``textcw train --json`` process: summary, wall time, peak RSS of it and of its tree (MB)."""

    summary: dict
    wall_seconds: float
    peak_rss_mb: float
    peak_tree_mb: float
    load_before: float
    cpu_seconds: float  # user + system, of the process and the worker processes it started
    # The tree's proportional set size: pages shared by several processes (forked workers share
    # the driver's until written) counted once in all, where the RSS sum counts them per process.
    peak_tree_pss_mb: float = 0.0


def run_tree(args: list[str], env: dict | None = None) -> TreeRun:
    """``textcw train ARGS --json`` in a fresh interpreter (``env`` added to this environment),
    its process tree's memory sampled."""
    import psutil

    load = os.getloadavg()[0]
    cmd = [sys.executable, "-c", "from textcw.cli import main; main()", "train", *args, "--json"]
    t0 = time.perf_counter()
    err_file = tempfile.TemporaryFile()  # a file, not a pipe: a chatty child cannot block on it
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err_file, env={**os.environ, **(env or {})})
    peak = [0, 0, 0]  # the whole tree, the training process alone, the tree's PSS
    done = threading.Event()

    def sample() -> None:
        root = psutil.Process(proc.pid)
        n = 0
        while not done.is_set():
            try:
                processes = [root, *root.children(recursive=True)]
                rss = [p.memory_info().rss for p in processes]
                peak[0], peak[1] = max(peak[0], sum(rss)), max(peak[1], rss[0])
                if n % 5 == 0:  # PSS reads every page mapping: a few ms of this core, so less often
                    peak[2] = max(peak[2], sum(p.memory_full_info().pss for p in processes))
            except psutil.Error:
                pass
            n += 1
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = proc.stdout.read()
    # wait4's usage of the child includes the CPU time of the processes it started and waited for
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    done.set()
    err_file.seek(0)
    err = err_file.read()
    err_file.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    summary = json.loads(out)
    return TreeRun(summary, wall, peak[1] / 2**20, peak[0] / 2**20, load, usage.ru_utime + usage.ru_stime,
                   peak[2] / 2**20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--learner", default="cw-var")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()

    records, best = [], {}
    for n in dict.fromkeys((args.small, args.documents)):  # a size given twice runs once
        for _ in range(args.repeat if n == args.documents else 1):
            for workers in (1, 2):
                run = run_tree(["--corpus", f"synthetic-text:{n}", "--learner", args.learner, "--stream",
                                "--workers", str(workers)])
                s = run.summary
                record = {"documents": n, "workers": workers, "train_seconds": s["train_seconds"],
                          "docs_per_second": s["documents_per_second"], "wall_seconds": run.wall_seconds,
                          "peak_tree_mb": run.peak_tree_mb, "peak_rss_mb": run.peak_rss_mb, "accuracy": s["accuracy"],
                          "load_before": run.load_before, "cpu_seconds": run.cpu_seconds,
                          "cores_used": run.cpu_seconds / run.wall_seconds}
                records.append(record)
                print(json.dumps(record), flush=True)
                key = (n, workers)
                if key not in best or record["docs_per_second"] > best[key]["docs_per_second"]:
                    best[key] = record
    rows = []
    for (n, workers), r in sorted(best.items()):
        one = best[(n, 1)]
        rows.append([f"{n:,}", workers, f"{r['train_seconds']:.1f}", f"{r['docs_per_second']:,.0f}",
                     f"{r['docs_per_second'] / one['docs_per_second']:.2f}x",
                     f"{n / r['wall_seconds']:,.0f}", f"{r['peak_rss_mb']:.0f}", f"{r['peak_tree_mb']:.0f}", f"{r['cpu_seconds']:.1f}",
                     f"{r['cores_used']:.2f}", f"{r['load_before']:.1f}",
                     f"{r['accuracy']:.4f}"])
    accuracies = {r["accuracy"] for r in records if r["documents"] == args.documents}
    print(f"\ntextcw train --stream, {args.learner}, hashing 2**20, chunks of 10,000, best of "
          f"{args.repeat}; {machine()}\n")
    print(table(["documents", "workers", "train (s)", "docs/s training", "speed-up", "docs/s end to end",
                 "peak RSS, training process (MB)", "peak RSS, all processes (MB)", "CPU (s)",
                 "cores used", "load before", "test accuracy"], rows))
    print(f"\nidentical accuracy across runs: {len(accuracies) == 1}")
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(records, fh, indent=1)


if __name__ == "__main__":
    main()
