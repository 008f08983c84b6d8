"""When sharding pays off: ``textcw train --shards N`` against one process, end to end, as ratios.

Large corpus: ``cw-var``, one pass over ``synthetic-text:N`` (default 10**6 documents, hashing
2**20 columns). One process (``--stream --workers 1``: this process reads, hashes and learns
every document on one core) against ``--shards 2`` (two local worker processes, each reading
and learning half, models combined by ``kl``) and ``--shards 2 --stream`` (each shard streamed
in chunks, flat memory).

Small corpus: ``amazon:books`` (1,600 training documents, its vocabulary featurizer), one
process against ``--shards 10`` (default workers: this process, since the corpus is small) and
``--shards 10 --workers 2`` (two worker processes forced). With ``--before DIR`` (a checkout of
an earlier textcw, e.g. ``git archive REV textcw | tar -x -C DIR``) the same runs of that code
are measured too, in the same run, so that both see the same machine.

Every configuration runs in a fresh process, ``--repeat`` times (best kept); reported: process
wall time and the training phase's time (``train_seconds``: reading, featurizing, learning,
combining), their ratios to one process, CPU seconds of all processes, the cores that made, the
*critical path* (what the run would take with a free core per process: the CPU seconds of
everything but the shards, which run one after the other, plus the CPU seconds of the slowest
shard) and its ratio, peak memory of the process tree (RSS summed over processes, which counts
pages that forked workers share with the driver once per process, and PSS, which counts them
once), the 1-minute load average before the run, and test accuracy. On a busy machine the wall
times measure the load; the CPU and critical-path columns still compare the code.

Run by hand (not a test): ``python benchmarks/bench_shards.py [--documents 1000000]
[--repeat 2] [--groups large,small] [--before DIR] [--json out.json]``. Results: docs/scale.md.
"""

from __future__ import annotations

import argparse
import json
import os

from bench_stream import run_tree
from scale_common import machine, table


def configurations(documents: int, before: str | None) -> list[tuple[str, str, list[str], dict]]:
    """``(group, label, argv, environment)``; the first of each group is its one-process baseline."""
    large = ["--corpus", f"synthetic-text:{documents}", "--learner", "cw-var", "--epochs", "1"]
    small = ["--corpus", "amazon:books", "--learner", "cw-var"]
    out = [
        ("large", "one process (--stream --workers 1)", [*large, "--stream", "--workers", "1"], {}),
        ("large", "--shards 2", [*large, "--shards", "2"], {}),
        ("large", "--shards 2 --stream", [*large, "--shards", "2", "--stream"], {}),
        ("small", "one process", small, {}),
        ("small", "--shards 10 (default workers)", [*small, "--shards", "10"], {}),
        ("small", "--shards 10 --workers 2", [*small, "--shards", "10", "--workers", "2"], {}),
    ]
    if before:
        env = {"PYTHONPATH": os.path.abspath(before)}
        out += [
            ("large-before", "one process (--stream --workers 1), before", [*large, "--stream", "--workers", "1"], env),
            ("large-before", "--shards 2, before", [*large, "--shards", "2"], env),
            ("large-before", "--shards 2 --stream, before", [*large, "--shards", "2", "--stream"], env),
            ("small-before", "one process, before", small, env),
            ("small-before", "--shards 10, before (default workers)", [*small, "--shards", "10"], env),
            ("small-before", "--shards 10 --workers 2, before", [*small, "--shards", "10", "--workers", "2"], env),
        ]
    return out


def warm_up(argv: list[str], documents: int) -> list[str]:
    """``argv`` on a small synthetic corpus: enough to compile the earlier code's kernels."""
    return [a.replace(f"synthetic-text:{documents}", "synthetic-text:20000") for a in argv]


def critical_path(cpu_seconds: float, summary: dict) -> float:
    """CPU seconds of a run that cannot overlap: everything but its shards, plus the shards'
    share of the busiest worker (at least its slowest shard; evenly spread otherwise).

    The shards of a run in one process (a single shard, or every shard in this process) lie on
    the path anyway; with worker processes they run side by side.
    """
    shards = summary.get("shard_cpu_seconds") or []
    workers = summary.get("workers") or 1
    if not shards or workers <= 1 or summary.get("mode") != "shards":
        return cpu_seconds
    return cpu_seconds - sum(shards) + max(max(shards), sum(shards) / workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--before", help="directory holding an earlier textcw package to compare with")
    parser.add_argument("--groups", default="large,small,large-before,small-before",
                        help="comma-separated groups to run (large, small, large-before, small-before)")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()

    groups = set(args.groups.split(","))
    configs = [c for c in configurations(args.documents, args.before) if c[0] in groups]
    for _, _, argv, env in configs:
        if env:  # the earlier code's kernels compiled once before anything is timed
            run_tree(warm_up(argv, args.documents), env=env)
    best: dict[str, dict] = {}
    records = []
    for _ in range(args.repeat):
        for group, label, argv, env in configs:
            run = run_tree(argv, env=env)
            s = run.summary
            record = {"group": group, "config": label, "wall_seconds": run.wall_seconds,
                      "train_seconds": s["train_seconds"], "cpu_seconds": run.cpu_seconds,
                      "cores_used": run.cpu_seconds / run.wall_seconds, "load_before": run.load_before,
                      "accuracy": s["accuracy"], "workers": s.get("workers"),
                      "peak_tree_mb": run.peak_tree_mb, "peak_tree_pss_mb": run.peak_tree_pss_mb,
                      "shard_seconds": s.get("shard_seconds"), "shard_cpu_seconds": s.get("shard_cpu_seconds"),
                      "critical_path_seconds": critical_path(run.cpu_seconds, s)}
            records.append(record)
            print(json.dumps(record), flush=True)
            if label not in best or record["wall_seconds"] < best[label]["wall_seconds"]:
                best[label] = record
    rows = []
    baseline: dict[str, dict] = {}
    for group, label, _, _ in configs:
        r = best[label]
        one = baseline.setdefault(group, r)
        rows.append([group, label, r["workers"], f"{r['wall_seconds']:.1f}",
                     f"{one['wall_seconds'] / r['wall_seconds']:.2f}x", f"{r['train_seconds']:.2f}",
                     f"{one['train_seconds'] / r['train_seconds']:.2f}x", f"{r['cpu_seconds']:.1f}",
                     f"{r['cores_used']:.2f}", f"{r['critical_path_seconds']:.1f}",
                     f"{one['critical_path_seconds'] / r['critical_path_seconds']:.2f}x",
                     f"{r['peak_tree_mb']:.0f}", f"{r['peak_tree_pss_mb']:.0f}", f"{r['load_before']:.1f}",
                     f"{r['accuracy']:.4f}"])
    print(f"\ntextcw train, cw-var; large: synthetic-text:{args.documents}, one pass, hashing 2**20; "
          f"small: amazon:books; best of {args.repeat}; {machine()}\n")
    print(table(["corpus", "configuration", "workers", "wall (s)", "speed-up (wall)", "train (s)",
                 "speed-up (train)", "CPU (s)", "cores used", "critical path (s)", "speed-up (critical path)",
                 "peak RSS, all processes (MB)", "peak PSS, all processes (MB)", "load before",
                 "test accuracy"], rows))
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(records, fh, indent=1)


if __name__ == "__main__":
    main()
