"""Seeded samples and splits shared by the loaders.

The CW papers (JMLR 2012 section 7; ICML 2008; EMNLP 2009) build each binary task from a
balanced random sample (1,800 or 2,000 documents) and evaluate with cross-validation. Here a
corpus with an official split keeps it; the others get a seeded, stratified train/test split
(scikit-learn's ``train_test_split``), computed the same way for both splits so that they are
disjoint and together cover the sample. Documents come in a seeded random order because online
learners see them in the order given and archives group them by class.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from textcw.corpus.base import Dataset, check_split
from textcw.errors import DataError, InputError

__all__ = ["TEST_SIZE", "balanced_sample", "make_dataset", "random_sample", "seeded_split", "take"]

TEST_SIZE = 0.2


def take(data, indices) -> object:
    """Rows ``indices`` of ``data``: a list, a numpy array or a scipy.sparse matrix."""
    indices = np.asarray(indices, dtype=np.int64)
    if sp.issparse(data) or isinstance(data, np.ndarray):
        return data[indices]
    return [data[i] for i in indices]


def balanced_sample(target: np.ndarray, size: int, seed: int, names: Sequence[str]) -> np.ndarray:
    """Indices of ``size // n_classes`` documents of every class, drawn without replacement.

    Raises :class:`DataError` when a class has fewer documents than its share.
    """
    target = np.asarray(target)
    per_class = size // len(names)
    rng = np.random.RandomState(seed)
    chosen = []
    for k, name in enumerate(names):
        members = np.flatnonzero(target == k)
        if len(members) < per_class:
            raise DataError(
                f"class {name!r} has {len(members)} documents, fewer than the {per_class} a "
                f"balanced sample of {size} needs; pass a smaller sample_size"
            )
        chosen.append(rng.choice(members, per_class, replace=False))
    return np.sort(np.concatenate(chosen))


def random_sample(n: int, size: int | None, seed: int) -> np.ndarray:
    """Indices of ``size`` of ``n`` documents drawn without replacement (all if ``size`` is None)."""
    if size is None or size >= n:
        return np.arange(n)
    return np.sort(np.random.RandomState(seed).choice(n, size, replace=False))


def seeded_split(target: np.ndarray, split: str, seed: int, test_size: float = TEST_SIZE,
                 names: Sequence[str] | None = None) -> np.ndarray:
    """Indices of ``split`` in a stratified ``1 - test_size`` / ``test_size`` split of ``target``."""
    check_split(split)
    target = np.asarray(target)
    if not 0.0 < test_size < 1.0:
        raise InputError(f"test_size must be between 0 and 1 (exclusive); got {test_size}")
    counts = np.bincount(target, minlength=len(names) if names is not None else 0)
    if counts.size and counts[counts > 0].min() < 2:
        k = int(np.flatnonzero(counts == counts[counts > 0].min())[0])
        label = names[k] if names is not None else k
        raise InputError(
            f"class {label!r} has only {int(counts[k])} document; a stratified train/test split "
            "needs at least 2 per class: add documents or give a separate test set"
        )
    try:
        from sklearn.model_selection import train_test_split  # here: corpora register without scikit-learn

        train, test = train_test_split(np.arange(len(target)), test_size=test_size,
                                       stratify=target, random_state=seed)
    except ValueError as exc:  # e.g. a test share smaller than the number of classes
        # scikit-learn's message says what failed, not what to do about it
        raise InputError(f"cannot split {len(target)} documents {1 - test_size:.0%}/"
                         f"{test_size:.0%} by class: {' '.join(str(exc).split())}; add documents "
                         "or give a separate test set") from None
    return np.sort(train if split == "train" else test)


def make_dataset(data, target, target_names: list[str], *, name: str, split: str,
                 order_seed: int, info: dict | None = None) -> Dataset:
    """A :class:`Dataset` with its documents in a seeded random order."""
    target = np.asarray(target, dtype=np.int64)
    order = np.random.RandomState(order_seed).permutation(len(target))
    return Dataset(data=take(data, order), target=target[order], target_names=list(target_names),
                   name=name, split=split, info=dict(info or {}))
