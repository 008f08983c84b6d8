"""``noise``: cross-validation with noisy training labels and clean test labels.

AROW (Crammer, Kulesza, Dredze; MLJ 2013) section 5.3: "we introduce noise at various levels by
randomly and independently flipping each binary label with a fixed probability"; section 5.4:
"for multi-class data, we randomly select another label to replace the correct label". Test
labels stay clean, so the measured error is the true error.
"""

from __future__ import annotations

import numpy as np

from textcw.errors import ParameterError


def check_noise(p: float) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p < 1.0:
        raise ParameterError(f"noise={p!r} is invalid; a label-noise rate must be in [0, 1)")
    return float(p)


def corrupt_labels(labels, p: float, classes, rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    """``(noisy labels, flipped mask)``: each label replaced with probability ``p`` by another.

    Each document is corrupted independently (a Bernoulli(p) draw); a corrupted label becomes a
    uniformly chosen *different* class, which for two classes is the other one.
    """
    p = check_noise(p)
    labels = np.asarray(labels)
    classes = np.asarray(classes)
    if classes.size < 2:
        raise ParameterError("label noise needs at least two classes")
    flipped = rng.random_sample(labels.shape[0]) < p
    index = np.searchsorted(classes, labels)
    if not np.array_equal(classes[np.clip(index, 0, classes.size - 1)], labels):
        raise ParameterError("corrupt_labels: labels must all be among the (sorted) classes")
    # Shift by 1..K-1 (mod K): uniform over the K-1 other classes, never the same one.
    shift = rng.randint(1, classes.size, size=labels.shape[0])
    noisy_index = np.where(flipped, (index + shift) % classes.size, index)
    return classes[noisy_index], flipped
