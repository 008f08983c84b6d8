"""An in-memory corpus and featurizer plugin, so the evaluators can be tested without archives."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin

import textcw
from textcw.corpus.base import Dataset, check_task
from textcw.plugins import build_registries, get_plugin_manager

TASKS = {"binary": "two classes", "multi": "three classes", "tiny": "two classes, 6 documents"}


def make(task: str, n: int, seed: int):
    rng = np.random.default_rng(seed)
    d = 30
    X = sp.random(n, d, density=0.3, format="csr", random_state=rng, data_rvs=lambda k: rng.normal(size=k))
    k = 3 if task == "multi" else 2
    W = np.random.default_rng(99).normal(size=(d, k))
    y = np.argmax(X @ W + 0.3 * rng.normal(size=(n, k)), axis=1)
    return X, y, k


def load(task=None, split="train", **options):
    check_task("toy", task, TASKS)
    task = task or "binary"
    if task == "tiny":
        X = sp.csr_matrix(np.eye(6))
        y = np.array([0, 1, 0, 1, 0, 1])[: 4 if split == "train" else 2]
        return Dataset(X[: len(y)] if split == "train" else X[4:], y, ["neg", "pos"], f"toy:{task}", split)
    X, y, k = make(task, 240 if split == "train" else 120, 1 if split == "train" else 2)
    names = ["neg", "pos"] if k == 2 else ["a", "b", "c"]
    return Dataset(X, y, names, f"toy:{task}", split)


class Rows(TransformerMixin, BaseEstimator):
    """Pass a CSR matrix through (the toy corpus ships vectors)."""

    def fit(self, X, y=None):
        self.n_features_out_ = X.shape[1]
        return self

    def transform(self, X):
        return sp.csr_matrix(X)


class ToyPlugin:
    @textcw.hookimpl
    def register_corpora(self, register):
        register("toy", load, summary="in-memory test corpus", tasks=TASKS, featurizer="rows")

    @textcw.hookimpl
    def register_featurizers(self, register):
        register("rows", Rows, summary="identity on CSR rows")


def registries(*extra):
    """The default registries (built-ins and installed plugins) plus the toy plugin (and ``extra``
    plugins): the conftest keeps them in use for the session, so every later test in the same
    process must still find every name the default registries hold."""
    return build_registries(get_plugin_manager(entry_points=True, extra=[ToyPlugin(), *extra]))
