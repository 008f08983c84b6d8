"""Which text features suit the CW learners: weighting, normalisation, n-grams and hashing width,
measured with the learners as ``textcw train`` fits them (self-tuned where the registry says so,
calibrated) on held-out text tasks and on the papers' corpora.

Featurizers (all scikit-learn's default word tokens, lowercased, fitted on the training split):

- ``binary``: 1 if the word occurs (``binary-bow``, the papers' representation);
- ``binary-l2``: the same, each document scaled to unit length;
- ``logcount-l2``: ``1 + log(count)``, unit length (no idf);
- ``tfidf``: raw counts times idf, unit length (scikit-learn's ``TfidfVectorizer()``);
- ``tfidf-sublinear``: ``(1 + log(count))`` times idf, unit length;
- ``tfidf-sublinear-bigrams``: the same over unigrams and bigrams;
- ``tfidf-sublinear-hash18`` / ``hash20``: the sublinear TF-IDF of words hashed into 2**18 or
  2**20 columns (no vocabulary), to see what the width costs.

Tasks: ``bbc-news``, ``spamassassin``, ``sotu-party`` (benchmarks/heldout_data.py) and the papers'
``newsgroups`` (20 labels), ``newsgroups:sci`` and ``reuters`` (corpora staged under
``TEXTCW_DATA``). Run by hand: ``python benchmarks/bench_text_features.py [--tasks ...]
[--learners cw-stdev,scw2] [--features ...] [--json out.json]``; results in
docs/guide/text-features.md.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
from heldout_data import HELDOUT_TASKS
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer, TfidfTransformer, TfidfVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import Normalizer

import textcw
from textcw.atomic import atomic_write_text
from textcw.evaluation.metrics import classification_metrics
from textcw.learners.calibrated import Calibrated
from textcw.pipeline import learner_train_defaults, load_corpus

FEATURES = {
    "binary": lambda: CountVectorizer(binary=True),
    "binary-l2": lambda: make_pipeline(CountVectorizer(binary=True), Normalizer()),
    "logcount-l2": lambda: TfidfVectorizer(sublinear_tf=True, use_idf=False),
    "tfidf": lambda: TfidfVectorizer(),
    "tfidf-sublinear": lambda: TfidfVectorizer(sublinear_tf=True),
    "tfidf-sublinear-bigrams": lambda: TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2)),
    "tfidf-sublinear-hash18": lambda: make_pipeline(HashingVectorizer(n_features=2**18, alternate_sign=False, norm=None),
                                                    TfidfTransformer(sublinear_tf=True)),
    "tfidf-sublinear-hash20": lambda: make_pipeline(HashingVectorizer(n_features=2**20, alternate_sign=False, norm=None),
                                                    TfidfTransformer(sublinear_tf=True)),
}
PAPER_CORPORA = ("newsgroups", "newsgroups:sci", "reuters")


def load(name):
    if name in HELDOUT_TASKS:
        task = HELDOUT_TASKS[name]()
        return list(task.X_train), np.asarray(task.y_train), list(task.X_test), np.asarray(task.y_test)
    train, test = load_corpus(name, "train"), load_corpus(name, "test")
    return list(train.data), np.asarray(train.labels), list(test.data), np.asarray(test.labels)


def train_learner(name: str):
    """The learner ``textcw train --learner NAME`` fits, with its calibrated probabilities."""
    defaults = learner_train_defaults(name)
    return Calibrated(textcw.make_learner(name, **defaults))


def run(task, learners, features):
    Xtr_raw, ytr, Xte_raw, yte = load(task)
    rows = {}
    for feature in features:
        start = time.perf_counter()
        vectorizer = FEATURES[feature]().fit(Xtr_raw)
        Xtr, Xte = vectorizer.transform(Xtr_raw), vectorizer.transform(Xte_raw)
        featurize = time.perf_counter() - start
        for learner in learners:
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = train_learner(learner).fit(Xtr, ytr)
            seconds = time.perf_counter() - start
            predicted = model.predict(Xte)
            m = classification_metrics(yte, predicted, model.predict_proba(Xte), model.classes_)
            rows[f"{feature} {learner}"] = {
                "feature": feature, "learner": learner, "accuracy": m["accuracy"], "macro_f1": m["macro_f1"],
                "ece": m["expected_calibration_error"], "train_seconds": seconds, "featurize_seconds": featurize,
                "n_features": int(Xtr.shape[1])}
            r = rows[f"{feature} {learner}"]
            print(f"{task}\t{feature}\t{learner}\t{r['accuracy']:.4f}\t{r['macro_f1']:.4f}\t{r['ece']:.4f}\t"
                  f"{seconds:.1f}s", flush=True)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="bbc-news,spamassassin,sotu-party," + ",".join(PAPER_CORPORA))
    parser.add_argument("--learners", default="cw-stdev,scw2,arow")
    parser.add_argument("--features", default=",".join(FEATURES))
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    results = {}
    for task in args.tasks.split(","):
        results[task] = run(task, args.learners.split(","), args.features.split(","))
    if args.json:
        atomic_write_text(args.json, json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
