"""Shard training on 2 local workers against 1: ``textcw train --shards N --workers W``.

Trains ``cw-var`` on ``synthetic-text:N`` split into shards (default 4 shards of 50,000
documents, 1 pass, KL combination) with the local joblib backend and 1 or 2 worker processes,
and with a local Dask cluster of 2 workers; each configuration runs in a fresh process. Reports
wall-clock time of the shard phase (reading, hashing and learning every shard, and combining),
documents per second, the speed-up over 1 worker, the CPU seconds the shards took in their
workers and the cores the run actually got (CPU seconds / shard-phase seconds), the 1-minute
load average just before the run (other work competing for the cores), and test accuracy
(identical across backends and worker counts by construction).

Run by hand (not a test): ``python benchmarks/scale_shards.py [--documents 200000]
[--shards 4] [--epochs 1] [--backends local,dask] [--json out.json]``. Results: docs/scale.md.
On a machine shared with other work the speed-up is bounded by the cores actually free.
"""

from __future__ import annotations

import argparse
import json
import os

from scale_common import machine, run_train, table

CONFIGS = [("local", 1), ("local", 2), ("dask", 2)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--learner", default="cw-var")
    parser.add_argument("--backends", default="local,dask",
                        help="comma-separated: local (1 and 2 workers), dask (a local cluster of 2)")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    known = list(dict.fromkeys(backend for backend, _ in CONFIGS))
    if not backends or set(backends) - set(known):
        parser.error(f"--backends {args.backends!r}: give some of {', '.join(known)}, comma-separated")

    rows, records = [], []
    one = None
    for backend, workers in (c for c in CONFIGS if c[0] in backends):
        load = os.getloadavg()[0]  # other work on the machine competes for the same cores
        run = run_train(["--corpus", f"synthetic-text:{args.documents}", "--learner", args.learner,
                         "--shards", str(args.shards), "--epochs", str(args.epochs), "--backend", backend,
                         "--workers", str(workers)])
        s = run.summary
        one = one or s["train_seconds"]
        cores = sum(s["shard_cpu_seconds"]) / s["train_seconds"]  # cores this run actually got
        records.append({"backend": backend, "workers": workers, "train_seconds": s["train_seconds"],
                        "shard_cpu_seconds": s["shard_cpu_seconds"], "cores_used": cores,
                        "wall_seconds": run.wall_seconds, "accuracy": s["accuracy"],
                        "shard_seconds": s["shard_seconds"], "load_average": load})
        rows.append([backend, workers, f"{s['train_seconds']:.1f}", f"{s['documents_per_second']:,.0f}",
                     f"{one / s['train_seconds']:.2f}x", f"{sum(s['shard_cpu_seconds']):.1f}", f"{cores:.2f}",
                     f"{run.wall_seconds:.1f}", f"{load:.1f}",
                     f"{s['accuracy']:.4f}"])
    print(f"textcw train --shards {args.shards} --epochs {args.epochs}, {args.learner}, "
          f"synthetic-text:{args.documents}, hashing 2**20, kl; {machine()}\n")
    print(table(["backend", "workers", "shard phase (s)", "docs/s", "speed-up", "shard CPU (s)",
                 "cores used", "process wall (s)", "load before", "test accuracy"], rows))
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(records, fh, indent=1)


if __name__ == "__main__":
    main()
