"""Reuters-21578 ModApte, 90 topics (``reuters:modapte``): textcw's multi-label learners against a
tuned scikit-learn ``OneVsRestClassifier(LinearSVC)`` on TF-IDF, micro-/macro-F1 and wall time.

textcw: ``textcw.multilabel_run.train_multilabel``, what ``textcw train --corpus reuters:modapte
--learner L`` runs (the corpus's featurizer, one model per label trained in one pass over the data
per epoch, per-label temperatures and thresholds chosen on honest scores), timed from the
documents to the test predictions. scikit-learn: ``TfidfVectorizer(sublinear_tf=True)``, then
``GridSearchCV(OneVsRestClassifier(LinearSVC()), {"estimator__C": GRID}, scoring="f1_micro",
cv=3)`` on the training split (the search and the refit on all of it are timed), then the test
predictions: the linear SVM tuned as Yang and Liu tuned theirs ("A re-examination of text
categorization methods", SIGIR 1999, Table 1: micro-F1 0.8599, macro-F1 0.5251). The SVM's notes
also give its F1 under textcw's rule for such data (every training document has a topic, so a
test document the thresholds leave without one gets its most probable: ``min_labels="auto"``),
from the same fitted model.

The systems run interleaved (one run of each, ``--repeat`` times), so a change in the machine's load
affects them alike; the table shows each system's best and median wall time (the F1 values are the
same in every run: everything is seeded), the median CPU time of this process (user + system: the
steadier figure on a busy machine; scikit-learn computes in one thread, textcw trains the labels on one
thread per core) and the load average
before and after.

``--task debian-tags`` runs the same systems on a second task, held out from the papers'
corpora: Debian packages' one-line descriptions and their debtags (62 tags; built from the APT
lists on the machine, ``benchmarks/short_text_data.py``), with the ``tfidf`` featurizer that
``textcw train`` gives a text corpus; the SVM's grid is then C in 0.1, 0.3, 1, 3 and 10.

Run by hand (not a test): ``python benchmarks/bench_multilabel.py [--task debian-tags]
[--learners scw1,arow] [--record best] [--repeat 3] [--train-docs N --test-docs M] [--json out.json]`` with the
environment's Python and ``TEXTCW_DATA`` pointing at the corpora; ``--train-docs``/``--test-docs``
take the first N/M documents of each split (a quick run). Results: docs/guide/multi-label.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import warnings

import numpy as np

GRID = (1.0, 3.0, 10.0, 30.0, 100.0)
# debian-tags: documents of a few words, where the SVM needs more regularisation
SHORT_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
TASKS = ("reuters:modapte", "debian-tags")


def load_task(task: str):
    """The training and test splits of ``task`` as multi-label datasets, and its featurizer."""
    import textcw
    from textcw.corpus.multilabel import make_multilabel_dataset
    from textcw.pipeline import default_featurizer

    if task == "reuters:modapte":
        return (textcw.load_corpus(task, "train"), textcw.load_corpus(task, "test"), default_featurizer(task), GRID)
    from short_text_data import debian_tags

    train, test, tags, source = debian_tags()
    splits = [make_multilabel_dataset([d for d, _ in rows], [sorted(t) for _, t in rows], tags, name=task,
                                      split=split, order_seed=None)
              for rows, split in ((train, "train"), (test, "test"))]
    return (*splits, "tfidf", SHORT_GRID)


def subset(corpus, n: int | None):
    from textcw.corpus.multilabel import MultiLabelDataset

    if n is None or n >= len(corpus):
        return corpus
    return MultiLabelDataset(corpus.data[:n], corpus.target[:n], corpus.target_names, corpus.name, corpus.split,
                             dict(corpus.info))


def run_textcw(learner: str, train, test, featurizer: str = "tfidf", record: str = "auto"):
    """What ``train_multilabel`` runs (the corpus's featurizer, ``MultiLabel`` of the learner with
    ``textcw train``'s defaults: the labels' models trained on one thread per core), on the
    possibly cut splits."""
    from textcw.learners.multilabel import MultiLabel
    from textcw.metrics import multilabel_metrics
    from textcw.pipeline import build_learner, make_featurizer

    t0, c0 = time.perf_counter(), time.process_time()
    feat = make_featurizer(featurizer)
    Xtr = feat.fit_transform(train.data)
    model = MultiLabel(build_learner(learner, {}, seed=0), record=record, n_jobs=-1).fit(Xtr, train.target)
    predicted = model.predict_indicator(feat.transform(test.data))
    seconds = (time.perf_counter() - t0, time.process_time() - c0)
    compared = {f"held-out F1 {k}": round(v, 4) for k, v in model.record_f1_.items()}
    return seconds, multilabel_metrics(test.target, predicted), {"record": model.record_, **compared,
                                                                 "min_labels": model.min_labels_}


def run_sklearn(train, test, grid=GRID, folds: int = 3):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import GridSearchCV, KFold
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    from textcw.learners.multilabel_targets import at_least
    from textcw.metrics import multilabel_metrics

    t0, c0 = time.perf_counter(), time.process_time()
    vectorizer = TfidfVectorizer(sublinear_tf=True)
    Xtr = vectorizer.fit_transform(train.data)
    search = GridSearchCV(OneVsRestClassifier(LinearSVC()), {"estimator__C": list(grid)}, scoring="f1_micro",
                          cv=KFold(folds, shuffle=True, random_state=0), n_jobs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a fold without a label's documents: a constant predictor
        search.fit(Xtr, train.target)
        Xte = vectorizer.transform(test.data)
        predicted = search.predict(Xte)
    seconds = (time.perf_counter() - t0, time.process_time() - c0)
    # the same model under textcw's rule for label sets learned from documents that all had a label
    # (MultiLabel's min_labels="auto"): a document the SVM gives no label gets its highest-scoring one
    one = multilabel_metrics(test.target, at_least(np.asarray(predicted), search.decision_function(Xte), 1))
    return seconds, multilabel_metrics(test.target, predicted), {
        "C": search.best_params_["estimator__C"],
        "with one label at least: micro-F1": round(one["micro_f1"], 4), "macro-F1": round(one["macro_f1"], 4)}


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=TASKS, default=TASKS[0])
    parser.add_argument("--learners", default="scw1,arow")
    parser.add_argument("--record", choices=("auto", "first", "cross-fit", "best"), default="auto",
                        help="where textcw's thresholds come from (MultiLabel's record=; auto: textcw train's)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--train-docs", type=int, default=None)
    parser.add_argument("--test-docs", type=int, default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    train, test, featurizer, grid = load_task(args.task)
    train, test = subset(train, args.train_docs), subset(test, args.test_docs)
    systems = {f"textcw {name}": (lambda name=name: run_textcw(name, train, test, featurizer, args.record))
               for name in args.learners.split(",")}
    systems["sklearn OneVsRest(LinearSVC), C tuned by 3-fold CV"] = lambda: run_sklearn(train, test, grid)
    before = load_average()
    times = {name: [] for name in systems}
    cpu = {name: [] for name in systems}
    results = {}
    for _ in range(args.repeat):
        for name, run in systems.items():
            (seconds, cpu_seconds), metrics, facts = run()
            times[name].append(seconds)
            cpu[name].append(cpu_seconds)
            results[name] = (metrics, facts)
    after = load_average()
    print(f"{args.task}: {len(train):,} training and {len(test):,} test documents, "
          f"{train.target.shape[1]} labels; {args.repeat} interleaved runs; load average {before} before, "
          f"{after} after")
    print("| system | micro-F1 | macro-F1 | wall best (s) | wall median (s) | CPU median (s) | notes |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = []
    for name in systems:
        metrics, facts = results[name]
        row = {"system": name, "micro_f1": metrics["micro_f1"], "macro_f1": metrics["macro_f1"],
               "wall_best": min(times[name]), "wall_median": statistics.median(times[name]),
               "cpu_median": statistics.median(cpu[name]), **facts}
        rows.append(row)
        notes = ", ".join(f"{k}={v}" for k, v in facts.items())
        print(f"| {name} | {row['micro_f1']:.4f} | {row['macro_f1']:.4f} | {row['wall_best']:.1f} | "
              f"{row['wall_median']:.1f} | {row['cpu_median']:.1f} | {notes} |")
    report = {"task": args.task, "record": args.record, "train": len(train), "test": len(test), "labels": int(train.target.shape[1]), "repeat": args.repeat,
              "load_before": before, "load_after": after, "rows": rows}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=2, default=float)
    return report


if __name__ == "__main__":
    main()
