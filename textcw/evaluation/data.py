"""A task's documents for evaluation: the pool, its folds, and their features.

Cross-validation (the papers' protocol, JMLR 2012 section 7.6) needs all of a task's documents
in one pool: the corpus's train and test splits are concatenated (for corpora without an
official split the loaders split a seeded sample 80/20, so the pool is that whole sample),
optionally reduced to a seeded class-balanced sample. Folds are scikit-learn's
``StratifiedKFold`` with a seed; the ``split`` protocol uses the official split as one fold.
Featurizers are fitted on the training part of each fold only, so no test vocabulary leaks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.model_selection import StratifiedKFold, train_test_split

from textcw.corpus.sampling import balanced_sample, take
from textcw.errors import InputError
from textcw.evaluation.specs import CV, TaskSpec
from textcw.pipeline import default_featurizer, load_corpus, make_featurizer


@dataclass
class TaskData:
    """The documents of one task, ready to be split.

    Attributes
    ----------
    spec : TaskSpec
    data : list, ndarray or sparse matrix
        All documents (the pool).
    target : ndarray of int
        Label index of each document into ``target_names``.
    target_names : list of str
    featurizer : str
        The featurizer to use (the spec's, else the corpus's default).
    train_index, test_index : ndarray or None
        The official split inside the pool (``split`` protocol only).
    """

    spec: TaskSpec
    data: object
    target: np.ndarray
    target_names: list
    featurizer: str
    train_index: np.ndarray | None = None
    test_index: np.ndarray | None = None

    @property
    def labels(self) -> np.ndarray:
        return np.asarray(self.target_names, dtype=object)[self.target]

    @property
    def classes(self) -> np.ndarray:
        return np.asarray(sorted(self.target_names), dtype=object)

    def __len__(self) -> int:
        return len(self.target)


def concat(a, b):
    """Rows of ``a`` then rows of ``b``: lists, arrays or sparse matrices."""
    if sp.issparse(a) or sp.issparse(b):
        width = max(a.shape[1], b.shape[1])  # svmlight files may end at different columns
        return sp.vstack([_widen(sp.csr_matrix(a), width), _widen(sp.csr_matrix(b), width)], format="csr")
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return np.concatenate([a, b])
    return list(a) + list(b)


def _widen(X, width):
    return X if X.shape[1] == width else sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width))


def load_task(spec: TaskSpec, *, seed: int = 0) -> TaskData:
    """Load the pool of ``spec`` (train and test splits concatenated, then sampled if asked)."""
    train = load_corpus(spec.corpus, "train")
    test = load_corpus(spec.corpus, "test")
    if list(train.target_names) != list(test.target_names):
        raise InputError(f"{spec.corpus}: the train and test splits name their labels differently")
    data = concat(train.data, test.data)
    target = np.concatenate([train.target, test.target]).astype(np.int64)
    featurizer = spec.featurizer or default_featurizer(spec.corpus)
    n_train = len(train)
    if spec.protocol != CV:
        return TaskData(spec, data, target, list(train.target_names), featurizer,
                        np.arange(n_train), np.arange(n_train, len(target)))
    if spec.sample is not None and spec.sample < len(target):
        chosen = balanced_sample(target, spec.sample, seed, train.target_names)
        data, target = take(data, chosen), target[chosen]
    return TaskData(spec, data, target, list(train.target_names), featurizer)


def fold_indices(task: TaskData, n_folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(train, test), ...]``: stratified seeded k-fold over the pool, or the official split."""
    if task.spec.protocol != CV:
        return [(task.train_index, task.test_index)]
    if not isinstance(n_folds, int) or n_folds < 2:
        raise InputError(f"folds={n_folds!r} is invalid; cross-validation needs at least 2 folds")
    smallest = int(np.bincount(task.target).min())
    if smallest < n_folds:
        raise InputError(
            f"{task.spec.label}: the smallest class has {smallest} documents, fewer than the "
            f"{n_folds} folds; use fewer folds"
        )
    splitter = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    return [(tr, te) for tr, te in splitter.split(np.zeros(len(task.target)), task.target)]


def dev_split(task: TaskData, dev_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The tuning run's ``(train, dev)`` indices: a stratified seeded split of the training pool.

    With ``cv`` the training pool is the whole task sample (the papers tune "on a single
    randomized run over the data", JMLR 2012 section 7.6); with ``split`` it is the official
    training split, so the test split is never seen while tuning.
    """
    pool = np.arange(len(task.target)) if task.spec.protocol == CV else task.train_index
    tr, dev = train_test_split(pool, test_size=dev_size, stratify=task.target[pool], random_state=seed)
    return np.sort(tr), np.sort(dev)


def featurize(task: TaskData, train_index, test_index):
    """``(X_train, X_test)``: the task's featurizer fitted on the training rows only."""
    featurizer = make_featurizer(task.featurizer, **task.spec.featurizer_params)
    X_train = featurizer.fit_transform(take(task.data, train_index))
    X_test = featurizer.transform(take(task.data, test_index))
    return sp.csr_matrix(X_train), sp.csr_matrix(X_test)
