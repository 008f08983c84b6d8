"""A CSV file streamed as fast as the synthetic stream it was written from, in flat memory.

Writes ``synthetic-text:N`` (default 10**6 training documents, about 1 GB with the ``id``,
``title`` and ``notes`` columns of :func:`write_csv`, and its test split) into two CSV files in a temporary folder (never the
repository), then trains ``cw-var`` with ``--stream`` (one pass, ``hashing`` 2**20, chunks of
10,000) on ``synthetic-text:N`` and on ``csv:TRAIN,TEST?text=text&label=label``: the same
documents in the same order, so the models and accuracies must be identical. Each run is a fresh
process, alternating, ``--repeat`` times (best kept). Reports documents per second of the
training phase (as ``textcw train`` prints it) and end to end (N / wall time of the whole
command: for the CSV, its first pass that counts the rows and records their offsets included),
the CSV's share of the synthetic stream's throughput (the goal: at least 80%), and peak RSS of
the training process and of its process tree (sampled every 50 ms), and CPU seconds (user +
system: on a shared machine, a steadier measure than the wall time). The CSV's first pass is also
timed alone, in a fresh process (:func:`first_pass`). A second, smaller size (``--small``) shows
that memory does not grow with the file.

The machine may be shared: the 1-minute load average before each run is printed beside it.

Run by hand (not a test): ``python benchmarks/bench_tabular.py [--documents 1000000]
[--small 100000] [--repeat 2] [--workers 1] [--json out.json]``. Results: docs/benchmarks.md,
"Tabular corpora".
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_stream import run_tree  # noqa: E402
from scale_common import machine, table  # noqa: E402


def write_csv(n: int, folder: Path, notes: int) -> tuple[Path, Path, float]:
    """``synthetic-text:n``'s train and test splits as CSV files; seconds it took. Each row also
    has a ``notes`` column of ``notes`` bytes that training does not read (tables carry more
    than text and label; it brings 10**6 rows to about 1 GB)."""
    from textcw.corpus import synthetic_text

    t0 = time.perf_counter()
    paths = []
    for split in ("train", "test"):
        path = folder / f"{split}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            writer = csv.writer(fh)
            writer.writerow(["id", "title", "text", "label", "notes"])
            filler = ("lorem ipsum, dolor sit amet " * (notes // 28 + 1))[:notes]
            row = 0
            for chunk in synthetic_text.stream(str(n), split):
                for text, label in zip(chunk.data, chunk.labels):
                    # a title of the document's first words, quoted: a realistic row to parse
                    writer.writerow([row, f"Document {row}: {' '.join(text.split()[:4])}", text, label, filler])
                    row += 1
        paths.append(path)
    return paths[0], paths[1], time.perf_counter() - t0


def first_pass(task: str, scanner: bool = True) -> dict:
    """Wall and CPU seconds of ``task``'s first pass (``TableCorpus.size``: the rows of each
    split, the labels, the offsets of every 1,000th row) in a fresh process, imports excluded;
    without the ``scanner`` (:mod:`textcw.corpus._table_scan`), by the csv module alone, as
    before the scanner existed."""
    code = (
        "import json, sys, time\n"
        "from textcw.corpus import _table_scan  # (and numba)\n"
        "from textcw.corpus.tabular import CSV\n"
        + ("" if scanner else "_table_scan.usable = lambda *args: False\n") +
        "wall, cpu = time.perf_counter(), time.process_time()\n"
        "CSV.size(sys.argv[1])\n"
        "print(json.dumps({'first_pass_seconds': time.perf_counter() - wall,"
        " 'first_pass_cpu_seconds': time.process_time() - cpu}))\n"
    )
    load = os.getloadavg()[0]
    out = subprocess.run([sys.executable, "-c", code, task.removeprefix("csv:")], check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    if not scanner:
        result = {f"{key}_csv_module": value for key, value in result.items()}
    return {**result, "load_before": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--small", type=int, default=100_000)
    parser.add_argument("--learner", default="cw-var")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1,
                        help="--workers of textcw train (1: every chunk read and featurized by the trainer)")
    parser.add_argument("--notes", type=int, default=700, help="bytes of an unread column per row")
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()

    records, best = [], {}
    with tempfile.TemporaryDirectory(prefix="bench-tabular-") as tmp:
        for n in dict.fromkeys((args.small, args.documents)):
            folder = Path(tmp) / str(n)
            folder.mkdir()
            train, test, seconds = write_csv(n, folder, args.notes)
            size_mb = (train.stat().st_size + test.stat().st_size) / 1e6
            print(json.dumps({"documents": n, "csv_mb": round(size_mb, 1), "write_seconds": round(seconds, 1)}),
                  flush=True)
            corpora = {"synthetic-text": f"synthetic-text:{n}", "csv": f"csv:{train},{test}"}
            for _ in range(args.repeat if n == args.documents else 1):
                scan = {**first_pass(corpora["csv"], scanner=False), **first_pass(corpora["csv"])}
                print(json.dumps({"documents": n, **scan}), flush=True)
                if (n, "first_pass") not in best or scan["first_pass_seconds"] < best[(n, "first_pass")][
                        "first_pass_seconds"]:
                    best[(n, "first_pass")] = scan
                for kind, corpus in corpora.items():
                    run = run_tree(["--corpus", corpus, "--learner", args.learner, "--stream",
                                    "--featurizer", "hashing", "--workers", str(args.workers)])
                    s = run.summary
                    record = {"documents": n, "corpus": kind, "csv_mb": round(size_mb, 1),
                              "docs_per_second": s["documents_per_second"],
                              "end_to_end_docs_per_second": n / run.wall_seconds, "wall_seconds": run.wall_seconds,
                              "peak_rss_mb": run.peak_rss_mb, "peak_tree_mb": run.peak_tree_mb,
                              "cpu_seconds": run.cpu_seconds, "accuracy": s["accuracy"],
                              "load_before": run.load_before}
                    records.append(record)
                    print(json.dumps(record), flush=True)
                    key = (n, kind)
                    if key not in best or record["docs_per_second"] > best[key]["docs_per_second"]:
                        best[key] = record
    rows = []
    for (n, kind), r in sorted(best.items()):
        if kind == "first_pass":
            continue
        base = best[(n, "synthetic-text")]
        scan = best[(n, "first_pass")]
        rows.append([f"{n:,}", kind, f"{r['csv_mb']:,.0f}" if kind == "csv" else "-",
                     f"{r['docs_per_second']:,.0f}", f"{r['end_to_end_docs_per_second']:,.0f}",
                     f"{r['docs_per_second'] / base['docs_per_second']:.0%}",
                     f"{r['end_to_end_docs_per_second'] / base['end_to_end_docs_per_second']:.0%}",
                     f"{r['wall_seconds']:.1f}", f"{r['cpu_seconds']:.1f}",
                     f"{base['cpu_seconds'] / r['cpu_seconds']:.0%}",
                     f"{scan['first_pass_seconds']:.1f} ({scan['first_pass_cpu_seconds']:.1f} CPU); csv module "
                     f"{scan['first_pass_seconds_csv_module']:.1f} ({scan['first_pass_cpu_seconds_csv_module']:.1f})"
                     if kind == "csv" else "-",
                     f"{r['peak_rss_mb']:.0f}", f"{r['peak_tree_mb']:.0f}", f"{r['load_before']:.1f}",
                     f"{r['accuracy']:.4f}"])
    print(f"\ntextcw train --stream, {args.learner}, hashing 2**20, chunks of 10,000, --workers {args.workers}, "
          f"best of {args.repeat}; {machine()}\n")
    print(table(["documents", "corpus", "CSV (MB)", "docs/s training", "docs/s end to end",
                 "vs synthetic (training)", "vs synthetic (end to end)", "wall (s)", "CPU (s)",
                 "vs synthetic (docs per CPU second)",
                 "first pass alone (s)", "peak RSS, trainer (MB)",
                 "peak RSS, all processes (MB)", "load before", "test accuracy"], rows))
    same = all(best[(n, "csv")]["accuracy"] == best[(n, "synthetic-text")]["accuracy"]
               for n in {k[0] for k in best})
    print(f"\nsame accuracy from the CSV as from the stream it was written from: {same}")
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(records, fh, indent=1)


if __name__ == "__main__":
    os.environ.setdefault("TEXTCW_OFFLINE", "1")
    main()
