"""Cost of the multi-class updates against the number of competitors k, on 20 Newsgroups (20-way).

Times one shuffled training epoch (``n_epochs=1``, ``random_state=0``; the whole ``fit``, input
checks and state allocation included) over the bydate training split (11,314 documents,
``binary-bow`` features) for

- the top-1 update (``multiclass="top1"``) of ``cw-var``, ``cw-stdev``, ``arow`` and ``pa1``;
- ``multiclass="seq"``, ``"par"`` and ``"exact"`` with ``k`` in 1, 2, 3, 5, 10, 19 (19 = all).

EMNLP 2009 (section 6.3) reports that the cost of the sequential and parallel approximations
grows linearly in k; the script fits ``seconds = a + b k`` to each strategy's timings and prints
the slope, the intercept and R^2. Kernels are compiled (or loaded from numba's cache) before
timing; every configuration runs once per round, in interleaved rounds, and the best time of
each counts (wall and CPU time of this process).

Run by hand (not a test): ``TEXTCW_DATA=... python benchmarks/multiclass_k.py [--repeat R]
[--learners cw-var,arow] [--documents N] [--json out.json]``; ``--documents`` times a seeded random
sample of the training split instead (a quick run). Results: docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

import textcw
from textcw.pipeline import load_corpus, make_featurizer

KS = (1, 2, 3, 5, 10, 19)
STRATEGIES = ("seq", "par", "exact")


def load(documents: int | None = None):
    """The training split as ``binary-bow`` features and labels; ``documents``: a seeded random
    sample of that many, in their order in the split."""
    train = load_corpus("newsgroups", "train")
    docs, labels = list(train.data), np.asarray(train.labels)
    if documents is not None and documents < len(docs):
        keep = np.sort(np.random.default_rng(0).choice(len(docs), documents, replace=False))
        docs, labels = [docs[i] for i in keep], labels[keep]
    return make_featurizer("binary-bow").fit_transform(docs), labels


def configurations(learners):
    out = []
    for name in learners:
        out.append((name, "top1", 1))
        for strategy in STRATEGIES:
            out.extend((name, strategy, k) for k in KS)
    return out


def fitter(name, strategy, k, X, y):
    params = {} if strategy == "top1" else {"multiclass": strategy, "k": k}

    def fit():
        return textcw.make_learner(name, n_epochs=1, random_state=0, **params).fit(X, y)

    fit_small = textcw.make_learner(name, n_epochs=1, random_state=0, **params)
    fit_small.fit(X[:500], y[:500])  # compile or load the kernels before timing
    return fit


def time_interleaved(fits, repeat):
    wall = {key: [] for key in fits}
    cpu = {key: [] for key in fits}
    for _ in range(repeat):
        for key, fit in fits.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fit()
            wall[key].append(time.perf_counter() - start)
            cpu[key].append(time.process_time() - start_cpu)
    return {key: min(v) for key, v in wall.items()}, {key: min(v) for key, v in cpu.items()}


def linear_fit(ks, seconds):
    """Least-squares ``seconds = a + b k``; returns (a, b, R^2)."""
    ks, seconds = np.asarray(ks, float), np.asarray(seconds, float)
    b, a = np.polyfit(ks, seconds, 1)
    residual = seconds - (a + b * ks)
    total = np.sum((seconds - seconds.mean()) ** 2)
    return a, b, 1.0 - np.sum(residual**2) / total if total > 0 else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--learners", default="cw-var,cw-stdev,arow,pa1")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--documents", type=int, help="a seeded random sample of this many training documents "
                        "(default: all)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if args.documents is not None and args.documents < 1:
        parser.error(f"--documents must be at least 1, got {args.documents}")

    X, y = load(args.documents)
    if len(np.unique(y)) <= max(KS):  # k counts the competitors of the true label: all 19 need 20 labels
        parser.error(f"--documents {args.documents} holds {len(np.unique(y))} of the 20 labels; k up to "
                     f"{max(KS)} needs all 20: give more documents")
    print(f"20 Newsgroups train: {X.shape[0]:,} documents x {X.shape[1]:,} features, {X.nnz:,} non-zeros, "
          f"{len(np.unique(y))} labels")
    print(f"python {platform.python_version()}, numpy {np.__version__}, textcw {textcw.__version__}, "
          f"{os.cpu_count()} cpus, {platform.machine()}")
    learners = args.learners.split(",")
    fits = {config: fitter(*config, X, y) for config in configurations(learners)}
    wall, cpu = time_interleaved(fits, args.repeat)
    if hasattr(os, "getloadavg"):
        print(f"load average after the timed rounds: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")

    results = []
    print(f"\n{'learner':10s} {'update':6s} " + " ".join(f"{'k=' + str(k):>7s}" for k in KS)
          + f"  {'a (s)':>7s} {'b (s/k)':>8s} {'R^2':>6s}   (wall seconds per epoch)")
    for name in learners:
        top1 = wall[(name, "top1", 1)]
        print(f"{name:10s} {'top1':6s} {top1:7.3f}")
        results.append({"learner": name, "multiclass": "top1", "k": 1, "seconds": top1,
                        "cpu_seconds": cpu[(name, "top1", 1)]})
        for strategy in STRATEGIES:
            times = [wall[(name, strategy, k)] for k in KS]
            a, b, r2 = linear_fit(KS, times)
            print(f"{name:10s} {strategy:6s} " + " ".join(f"{t:7.3f}" for t in times)
                  + f"  {a:7.3f} {b:8.4f} {r2:6.3f}")
            for k, t in zip(KS, times):
                results.append({"learner": name, "multiclass": strategy, "k": k, "seconds": t,
                                "cpu_seconds": cpu[(name, strategy, k)]})
            results.append({"learner": name, "multiclass": strategy, "fit": {"a": a, "b": b, "r2": r2}})
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"documents": X.shape[0], "features": X.shape[1], "nnz": int(X.nnz), "results": results},
                      out, indent=2)


if __name__ == "__main__":
    main()
