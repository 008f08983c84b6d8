"""``synthetic``: the 20-dimensional Gaussian data of the CW-stdev and AROW experiments.

NIPS 2008 (CW-stdev, section 5) and MLJ 2013 (AROW, section 5.2) generate points in R^20: the
first two coordinates come from a Gaussian rotated by 45 degrees, labelled by a separator through
the origin parallel to the Gaussian's long axis (so the classes are linearly separable and the
telling direction is the short axis); the other 18 coordinates are independent ``N(0, 2)`` noise
(variance 2). The papers give the Gaussian only as having "standard deviation 1"; here its
standard deviation is 1 along the long axis and 0.5 across it (``long_sd``, ``short_sd``), which
reproduces the papers' qualitative findings: second-order learners make a fraction of the online
mistakes of the perceptron and PA, full covariance beats diagonal, and with 10% of the training
labels flipped AROW degrades far less than CW (MLJ 2013, Figures 5 and 6).

Tasks:

- ``synthetic`` (the default): clean labels;
- ``synthetic:noise10``: each *training* label flipped with probability 0.1 (test labels stay
  clean, as in the papers' noise experiments, so test error measures the true error).

Documents are rows of a dense matrix (use the ``precomputed`` featurizer); labels are
``negative``/``positive``. Everything is seeded: the same ``seed`` gives the same points for both
tasks, so clean and noisy runs see identical inputs and differ only in the flipped labels.
"""

from __future__ import annotations

import numpy as np

from textcw.corpus.base import Dataset, check_split, check_task

__all__ = ["LABELS", "NOISE", "N_FEATURES", "TASKS", "load", "make_synthetic"]

TASKS = {
    "synthetic": "20-d rotated Gaussian, linearly separable (NIPS 2008 section 5; the default task)",
    "noise10": "the same points with 10% of the training labels flipped (MLJ 2013 section 5.2)",
}
NOISE = {"synthetic": 0.0, "noise10": 0.1}
N_FEATURES = 20
LABELS = ["negative", "positive"]
_SPLIT_STREAM = {"train": 0, "test": 1}


def make_synthetic(n_samples: int, *, noise: float = 0.0, random_state: int = 0,
                   long_sd: float = 1.0, short_sd: float = 0.5, noise_variance: float = 2.0):
    """Draw ``n_samples`` points of the NIPS 2008 synthetic problem.

    Parameters
    ----------
    n_samples : int
    noise : float in [0, 1)
        Probability of flipping each label (drawn from a separate seeded stream, so the points
        do not depend on it).
    random_state : int or sequence of int
        Seed (a ``numpy.random.SeedSequence`` entropy).
    long_sd, short_sd : float
        Standard deviations of the two informative coordinates along and across the separator,
        before the 45-degree rotation.
    noise_variance : float
        Variance of each of the 18 uninformative coordinates.

    Returns
    -------
    X : ndarray of shape (n_samples, 20)
    y : ndarray of shape (n_samples,), values -1 and +1
        The sign of the short-axis coordinate (flipped with probability ``noise``).
    """
    if not 0.0 <= noise < 1.0:
        raise ValueError(f"noise must be in [0, 1); got {noise!r}")
    points, flips = (np.random.default_rng(s) for s in np.random.SeedSequence(random_state).spawn(2))
    along = points.normal(scale=long_sd, size=n_samples)
    across = points.normal(scale=short_sd, size=n_samples)
    X = np.empty((n_samples, N_FEATURES))
    c = np.sqrt(0.5)  # rotate (along, across) by 45 degrees
    X[:, 0] = c * (along - across)
    X[:, 1] = c * (along + across)
    X[:, 2:] = points.normal(scale=np.sqrt(noise_variance), size=(n_samples, N_FEATURES - 2))
    y = np.where(across > 0, 1, -1)
    flipped = flips.random(n_samples) < noise
    return X, np.where(flipped, -y, y)


def load(task: str | None = None, split: str = "train", *, seed: int = 0, n_train: int = 5000,
         n_test: int = 10000) -> Dataset:
    """Load a ``synthetic`` task.

    Parameters
    ----------
    task : {None, "synthetic", "noise10"}
    split : {"train", "test"}
        The splits are independent draws (the AROW experiment's 5,000 training and 10,000 test
        points by default); label noise is applied to the training split only.
    seed : int
        Seed of both splits.
    n_train, n_test : int
        Split sizes.
    """
    check_task("synthetic", task, TASKS)
    check_split(split)
    task = task or "synthetic"
    n = n_train if split == "train" else n_test
    noise = NOISE[task] if split == "train" else 0.0
    X, y = make_synthetic(n, noise=noise, random_state=[seed, _SPLIT_STREAM[split]])
    return Dataset(
        data=list(X),
        target=(y > 0).astype(np.int64),
        target_names=list(LABELS),
        name="synthetic" if task == "synthetic" else f"synthetic:{task}",
        split=split,
        info={"noise": noise, "n_features": N_FEATURES},
    )
