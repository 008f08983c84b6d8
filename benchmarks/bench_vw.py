"""textcw against Vowpal Wabbit: the same text file, the same hashing width, one pass.

For each size N (default 10**5 and 10**6) and each task (binary and 4-class), the training and
test documents of ``synthetic-text:N[:K]`` are written once as ``label | text`` lines (binary
labels ``-1``/``1``, classes ``1``..``K``: what VW reads), and both systems train on the training
file in one pass and predict the test file, each in a fresh process, timed end to end (wall
clock, from process start to the test accuracy; and the CPU seconds of the process and the
processes it started, the steadier figure on a shared machine):

- VW 9 (the ``vowpalwabbit`` package's own C++ parser and learner, ``run_parser`` over ``-d``):
  ``-b 20 --loss_function hinge`` for the binary task (the best of VW's defaults on this stream),
  ``--oaa K -b 20`` for the multi-class one; then ``-t -i model`` over the test file.
- ``textcw train --corpus vw:TRAIN,TEST --stream --learner L --workers W`` (hashing, 2**20
  columns, chunks of 10,000, its default self-tuning over the first chunks).

First, featurizing alone: MB of text per CPU second of ``hashing`` (compiled) and of
scikit-learn's ``HashingVectorizer`` on 50,000 documents of the file. Then, for each run,
documents per second (training documents over the whole wall time) and test accuracy,
with the load average before each run: on a shared machine the times move with the neighbours,
so read them next to the load; for textcw also the expected calibration error of its test
probabilities. Without ``vowpalwabbit`` installed (``pip install
'textcw[bench]'``) the VW rows are skipped with a message.

With ``--compare NAME=SRC`` each ``--learner`` also runs from another source tree (``SRC``, e.g. a
``git worktree`` of the code before a change, first on ``PYTHONPATH``; its modules are compiled to
bytecode first, as the installed ones are), its rows marked ``[NAME]``, in the same rounds.
With ``--repeat R`` each size and task is run R rounds, interleaved (in each round VW, then
each ``--learner`` in turn, then each again for each compared tree), and a summary gives per
system the median and best wall and CPU seconds over the rounds, and, with several sizes, the
time each system adds from the smallest size to the largest (difference of the medians): the
figures a shared machine allows.

Run by hand (not a test): ``python benchmarks/bench_vw.py [--sizes 100000 1000000]
[--classes 2 4] [--learner arow [scw1 ...]] [--workers 2] [--repeat 3] [--compare NAME=SRC]
[--featurize-only] [--json out.json]``. Results: docs/benchmarks.md and docs/scale.md.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

VW_SCRIPT = r"""
import sys, vowpalwabbit
train, test, model, preds, flags = sys.argv[1:6]
ws = vowpalwabbit.Workspace(f"--quiet -d {train} -f {model} {flags}")
ws.run_parser(); ws.finish()
ws = vowpalwabbit.Workspace(f"--quiet -t -i {model} -d {test} -p {preds}")
ws.run_parser(); ws.finish()
truth = [line.split("|", 1)[0].strip() for line in open(test) if line.strip()]
guess = [float(line.split()[0]) for line in open(preds) if line.strip()]
binary = set(truth) <= {"-1", "1"}
right = sum((g > 0) == (t == "1") if binary else int(round(g)) == int(t) for t, g in zip(truth, guess))
print(right / len(truth))
"""


def write_files(n: int, k: int, folder: Path) -> tuple[Path, Path]:
    """``synthetic-text:n[:k]``'s splits as VW lines, written once (reused when present)."""
    from textcw.scale.source import CorpusSource

    spec = f"synthetic-text:{n}" + (f":{k}" if k != 2 else "")
    paths = folder / f"st{n}-{k}.train.vw", folder / f"st{n}-{k}.test.vw"
    if all(p.exists() for p in paths):
        return paths
    source = CorpusSource.resolve(spec)
    for split, path in zip(("train", "test"), paths):
        names = None
        tmp = path.with_suffix(".partial")
        with open(tmp, "w", encoding="utf-8") as out:
            for chunk in source.chunks(split, chunk_size=50_000):
                if names is None:
                    ordered = sorted(chunk.target_names)
                    names = ({"neg": "-1", "pos": "1"} if k == 2 else
                             {name: str(i + 1) for i, name in enumerate(ordered)})
                out.writelines(f"{names[label]} | {doc.replace('|', ' ').replace(':', ' ')}\n"
                               for doc, label in zip(chunk.data, chunk.labels))
        os.replace(tmp, path)
    return paths


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_vw(train: Path, test: Path, k: int, folder: Path) -> dict | None:
    try:
        import vowpalwabbit  # noqa: F401
    except ImportError:
        print("vowpalwabbit is not installed (pip install 'textcw[bench]'): VW rows skipped", file=sys.stderr)
        return None
    flags = "-b 20 --loss_function hinge" if k == 2 else f"--oaa {k} -b 20"
    load = os.getloadavg()[0]
    t0, cpu0 = time.perf_counter(), _children_cpu()
    out = subprocess.run([sys.executable, "-c", VW_SCRIPT, str(train), str(test), str(folder / "vw.model"),
                          str(folder / "vw.preds"), flags], capture_output=True, text=True, check=True)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    return {"system": f"Vowpal Wabbit 9, {flags}", "wall_seconds": wall, "accuracy": float(out.stdout.split()[-1]),
            "load_before": load, "cpu_seconds": cpu}


def run_textcw(train: Path, test: Path, learner: str, workers: int, variant: tuple[str, str | None] = ("", None)) -> dict:
    """``textcw train --stream`` on the files, in a fresh process started in the files' folder (so
    that the working directory puts no ``textcw`` first on the path); ``variant`` is ``(name,
    source)``: a source tree put first on ``PYTHONPATH`` instead of the installed ``textcw``."""
    name, source = variant
    env = dict(os.environ)
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (source, env.get("PYTHONPATH")) if p)
    load = os.getloadavg()[0]
    t0, cpu0 = time.perf_counter(), _children_cpu()
    cmd = [sys.executable, "-c", "from textcw.cli import main; main()", "train", "--corpus",
           f"vw:{train},{test}", "--learner", learner, "--stream", "--workers", str(workers), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=train.parent, env=env)
    wall, cpu = time.perf_counter() - t0, _children_cpu() - cpu0
    if out.returncode:
        raise SystemExit(f"textcw train failed: {out.stderr.strip()[-500:]}")
    summary = json.loads(out.stdout)
    system = f"textcw train --stream --learner {learner} --workers {workers}" + (f" [{name}]" if name else "")
    return {"system": system, "wall_seconds": wall,
            "accuracy": summary["accuracy"], "load_before": load, "cpu_seconds": cpu, "tuned_params": summary.get("tuned_params"),
            "train_seconds": summary.get("train_seconds"), "workers": summary.get("workers"),
            "expected_calibration_error": summary.get("expected_calibration_error")}


def featurize_rate(path: Path, documents: int = 50_000) -> dict:
    """MB of text per CPU second (one core) of ``hashing`` (compiled) and of scikit-learn's
    ``HashingVectorizer`` on the first ``documents`` of ``path``: CPU time, so that a busy
    machine slows the figure less than it slows wall time (it still shares caches)."""
    from sklearn.feature_extraction.text import HashingVectorizer

    from textcw.features.hashing import hashing

    with open(path, encoding="utf-8") as fh:
        docs = [line.split("|", 1)[1] for _, line in zip(range(documents), fh)]
    mb = sum(map(len, docs)) / 1e6
    ours = hashing()
    ours.transform(docs[:10])  # compiled kernels loaded
    rates = {}
    for name, feat in (("textcw hashing", ours), ("scikit-learn HashingVectorizer", HashingVectorizer(**ours.get_params()))):
        best = float("inf")
        for _ in range(3 if name.startswith("textcw") else 1):
            t0 = time.process_time()
            feat.transform(docs)
            best = min(best, time.process_time() - t0)
        rates[name] = mb / best
    return {"documents": len(docs), "mb": mb, "mb_per_cpu_second": rates, "load": os.getloadavg()[0]}


def _ece(result: dict) -> str:
    """The expected calibration error of textcw's test probabilities (VW's runs predict labels)."""
    ece = result.get("expected_calibration_error")
    return "-" if ece is None else f"{ece:.4f}"


def summarize(rows: list[dict]) -> list[dict]:
    """Per (documents, classes, system): rounds, median and best wall and CPU seconds, median accuracy."""
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row["documents"], row["classes"], row["system"]), []).append(row)
    out = []
    for (n, k, system), runs in groups.items():
        walls = [r["wall_seconds"] for r in runs]
        cpus = [r["cpu_seconds"] for r in runs]
        out.append({"documents": n, "classes": k, "system": system, "runs": len(runs),
                    "wall_median": statistics.median(walls), "wall_best": min(walls),
                    "cpu_median": statistics.median(cpus), "cpu_best": min(cpus),
                    "accuracy": statistics.median(r["accuracy"] for r in runs)})
    return out


def added_time(summary: list[dict]) -> list[dict]:
    """Per (classes, system) run at several sizes: the median wall and CPU seconds the largest
    size adds to the smallest."""
    out = []
    for k, system in dict.fromkeys((s["classes"], s["system"]) for s in summary):
        sized = sorted((s for s in summary if s["classes"] == k and s["system"] == system),
                       key=lambda s: s["documents"])
        if len(sized) > 1:
            out.append({"classes": k, "system": system, "from": sized[0]["documents"], "to": sized[-1]["documents"],
                        "wall_added": sized[-1]["wall_median"] - sized[0]["wall_median"],
                        "cpu_added": sized[-1]["cpu_median"] - sized[0]["cpu_median"]})
    return out


def print_summary(summary: list[dict], added: list[dict]) -> None:
    print("\n| documents | classes | system | runs | wall median (s) | wall best (s) | CPU median (s) | "
          "CPU best (s) | test accuracy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for s in summary:
        print(f"| {s['documents']:,} | {s['classes']} | {s['system']} | {s['runs']} | {s['wall_median']:.2f} | "
              f"{s['wall_best']:.2f} | {s['cpu_median']:.2f} | {s['cpu_best']:.2f} | {s['accuracy']:.4f} |")
    for a in added:
        print(f"added from {a['from']:,} to {a['to']:,} documents ({a['classes']} classes), {a['system']}: "
              f"wall {a['wall_added']:+.2f} s, CPU {a['cpu_added']:+.2f} s (medians)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--classes", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--learner", nargs="+", default=["arow"], help="one or more learners, run in turn")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1, help="interleaved rounds of every run (median and best)")
    parser.add_argument("--folder", type=Path, default=Path("build/bench-vw"))
    parser.add_argument("--json", type=Path)
    parser.add_argument("--featurize-only", action="store_true", help="only the featurizing rate")
    parser.add_argument("--compare", action="append", default=[], metavar="NAME=SRC",
                        help="also run textcw from this source tree (a checkout's root, first on PYTHONPATH)")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error(f"--repeat {args.repeat} is invalid; give at least 1 round")
    variants = [("", None)]
    for spec in args.compare:
        name, _, src = spec.partition("=")
        if not name or not src or not (Path(src) / "textcw" / "__init__.py").is_file():
            parser.error(f"--compare {spec}: give NAME=SRC with SRC a source tree holding textcw/ (a checkout's root)")
        variants.append((name, str(Path(src).resolve())))
        # bytecode, as the installed textcw has it (an environment may forbid writing it on import)
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(src) / "textcw")], check=True,
                       stdout=subprocess.DEVNULL)
    args.folder = args.folder.resolve()
    args.folder.mkdir(parents=True, exist_ok=True)
    train, _ = write_files(args.sizes[0], 2, args.folder)
    rate = featurize_rate(train)
    print(f"featurizing {rate['documents']:,} documents ({rate['mb']:.1f} MB), MB per CPU second, load "
          f"{rate['load']:.1f}: " + ", ".join(f"{k} {v:.1f}" for k, v in rate["mb_per_cpu_second"].items()))
    if args.featurize_only:
        return
    rows = []
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    print("| documents | classes | system | wall (s) | documents/s | CPU (s) | test accuracy | ECE | load before |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        for k in args.classes:
            train, test = write_files(n, k, args.folder)
            n_train = sum(1 for _ in open(train, "rb"))
            for _ in range(args.repeat):
                runs = [lambda: run_vw(train, test, k, args.folder)]
                runs += [lambda name=name, variant=variant: run_textcw(train, test, name, args.workers, variant)
                         for variant in variants for name in args.learner]
                for run in runs:
                    result = run()
                    if result is None:
                        continue
                    result.update(documents=n_train, classes=k, mb=round(train.stat().st_size / 1e6, 1))
                    rows.append(result)
                    print(f"| {n_train:,} | {k} | {result['system']} | {result['wall_seconds']:.1f} | "
                          f"{n_train / result['wall_seconds']:,.0f} | {result['cpu_seconds']:.1f} | "
                          f"{result['accuracy']:.4f} | {_ece(result)} | "
                          f"{result['load_before']:.1f} |", flush=True)
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    summary = summarize(rows)
    added = added_time(summary)
    if args.repeat > 1 or len(args.sizes) > 1:
        print_summary(summary, added)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "summary": summary, "added": added, "featurize": rate,
                                         "cpus": os.cpu_count()}, indent=2))


if __name__ == "__main__":
    main()
