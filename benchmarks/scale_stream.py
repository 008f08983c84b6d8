"""Out-of-core streaming: peak memory and documents per second of ``textcw train --stream``.

Trains ``cw-var`` (one pass) on ``synthetic-text:N`` for each ``N`` (default 10**5 and 10**6),
reading chunks of 10,000 documents through ``hashing`` (2**20 columns) into ``partial_fit``,
each run in a fresh process. Reports the peak resident memory of that process, its growth from
the smallest ``N``, and documents per second end to end (process start to exit: generating the
text, hashing, learning, scoring the 10,000 test documents) and for training alone. For
contrast, the smallest ``N`` is also trained in memory (without ``--stream``).
The claim checked: memory grows by less than 10% from 10**5 to 10**6 documents.

Run by hand (not a test): ``python benchmarks/scale_stream.py [--sizes 100000 1000000]
[--learner cw-var] [--json out.json]``. Results: docs/scale.md.
"""

from __future__ import annotations

import argparse
import json

from scale_common import machine, run_train, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--learner", default="cw-var")
    parser.add_argument("--chunk-size", type=int, default=10_000)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()

    rows, records = [], []
    base = None
    for n in args.sizes:
        run = run_train(["--corpus", f"synthetic-text:{n}", "--learner", args.learner, "--stream",
                         "--chunk-size", str(args.chunk_size)])
        base = base or run.peak_rss_mb
        s = run.summary
        records.append({"documents": n, "peak_rss_mb": run.peak_rss_mb, "wall_seconds": run.wall_seconds,
                        "train_seconds": s["train_seconds"], "accuracy": s["accuracy"]})
        rows.append([f"{n:,}", f"{run.peak_rss_mb:.0f}", f"{100 * (run.peak_rss_mb / base - 1):+.1f}%",
                     f"{run.wall_seconds:.1f}", f"{n / run.wall_seconds:,.0f}",
                     f"{s['documents_per_second']:,.0f}", f"{s['accuracy']:.4f}"])
    # The same smallest stream trained in memory (no --stream), for contrast.
    n = args.sizes[0]
    run = run_train(["--corpus", f"synthetic-text:{n}", "--learner", args.learner, "--epochs", "1"])
    records.append({"documents": n, "in_memory": True, "peak_rss_mb": run.peak_rss_mb,
                    "wall_seconds": run.wall_seconds, "accuracy": run.summary["accuracy"]})
    rows.append([f"{n:,} in memory (no --stream)", f"{run.peak_rss_mb:.0f}",
                 f"{100 * (run.peak_rss_mb / base - 1):+.1f}%", f"{run.wall_seconds:.1f}",
                 f"{n / run.wall_seconds:,.0f}", "", f"{run.summary['accuracy']:.4f}"])
    print(f"textcw train --stream, {args.learner}, hashing 2**20, chunks of {args.chunk_size}; {machine()}\n")
    print(table(["documents", "peak RSS (MB)", "growth", "wall (s)", "docs/s end to end",
                 "docs/s training", "test accuracy"], rows))
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(records, fh, indent=1)


if __name__ == "__main__":
    main()
