"""Small seeded data sets for testing learners, featurizers and plugins.

Everything here is synthetic, tiny and reproducible from a seed, so a plugin's tests run in
seconds and never need a real corpus.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["awkward_documents", "make_documents", "make_sparse_classification"]


def make_sparse_classification(n_samples: int = 200, n_features: int = 60, n_classes: int = 2, *,
                               n_informative: int = 8, random_state: int = 0,
                               label_names=None) -> tuple[sp.csr_matrix, np.ndarray]:
    """A text-like sparse classification problem that any sensible linear learner separates.

    Each class owns a block of ``n_informative`` features (its "topic words"); the remaining
    features are shared noise. A document (row) has 3-5 active features from its class's block
    and 2-4 from the noise pool, with small positive counts as values, like a bag of words.
    Because the informative blocks are disjoint, the classes are linearly separable without an
    intercept, so a learner that misses most of them is broken rather than unlucky.

    Parameters
    ----------
    n_samples : int
        Number of rows; classes take turns, so they are balanced.
    n_features : int
        Number of columns; at least ``n_classes * n_informative + 4``.
    n_classes : int
        Number of labels (2 for a binary problem).
    n_informative : int
        Size of each class's block of indicative features.
    random_state : int
        Seed; the same seed gives the same matrix.
    label_names : sequence of str, optional
        Label names; default ``"c0", "c1", ...``. Labels are strings because textcw trains on
        label names (:attr:`textcw.corpus.base.Dataset.labels`).

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features), float64
    y : ndarray of shape (n_samples,)
        The label name of each row.
    """
    names = _label_names(n_classes, n_informative, n_features, label_names)
    rng = np.random.RandomState(random_state)
    target = np.arange(n_samples) % n_classes
    rng.shuffle(target)
    X = _bag_of_words(rng, target, n_classes, n_informative, n_features)
    return X, names[target]


def _label_names(n_classes: int, n_informative: int, n_features: int, label_names) -> np.ndarray:
    """The label names of :func:`make_sparse_classification`, its sizes checked first."""
    n_noise = n_features - n_classes * n_informative
    if n_classes < 2 or n_informative < 5 or n_noise < 4:
        raise ValueError(
            f"need n_classes >= 2, n_informative >= 5 and n_features >= n_classes * n_informative"
            f" + 4; got n_classes={n_classes}, n_informative={n_informative}, n_features={n_features}"
        )
    names = np.asarray(label_names if label_names is not None else [f"c{k}" for k in range(n_classes)])
    if names.shape != (n_classes,):
        raise ValueError(f"label_names must hold {n_classes} names; got {list(names)}")
    return names


def _bag_of_words(rng: np.random.RandomState, target: np.ndarray, n_classes: int, n_informative: int,
                  n_features: int) -> sp.csr_matrix:
    """One row per class index in ``target``: 3-5 features of its class's block, 2-4 of the noise pool."""
    noise_pool = np.arange(n_classes * n_informative, n_features)
    rows, cols, vals = [], [], []
    for i, k in enumerate(target):
        block = np.arange(k * n_informative, (k + 1) * n_informative)
        active = np.concatenate([
            rng.choice(block, size=rng.randint(3, 6), replace=False),
            rng.choice(noise_pool, size=rng.randint(2, 5), replace=False),
        ])
        rows += [i] * active.size
        cols += active.tolist()
        vals += rng.randint(1, 4, size=active.size).astype(float).tolist()
    X = sp.csr_matrix((vals, (rows, cols)), shape=(target.size, n_features), dtype=np.float64)
    X.sort_indices()
    return X


# Two topics with disjoint vocabularies plus shared filler words, so a bag of words separates
# them and a featurizer that loses the words does not.
_TOPICS = {
    "space": "orbit rocket launch nasa shuttle planet moon satellite astronaut telescope mars "
             "payload booster lunar galaxy".split(),
    "medicine": "doctor patient disease clinic vaccine symptom surgery nurse therapy diagnosis "
                "hospital infection dosage allergy medicine".split(),
}
_FILLER = "the a of and to in is it that for on was with as this by".split()


def make_documents(n_per_class: int = 20, *, random_state: int = 0) -> tuple[list[str], np.ndarray]:
    """Short English documents on two topics ("space" and "medicine"), with their labels.

    Each document mixes 4-7 topic words with 3-6 filler words shared by both topics; topic words
    are sometimes capitalised or followed by punctuation, as in real text.

    Parameters
    ----------
    n_per_class : int
        Documents per topic.
    random_state : int
        Seed; different seeds give different documents from the same two topics (use one seed
        to train and another to test).

    Returns
    -------
    docs : list of str
    labels : ndarray of str
        ``"space"`` or ``"medicine"``.
    """
    rng = np.random.RandomState(random_state)
    docs, labels = [], []
    for i in range(2 * n_per_class):
        topic = ("space", "medicine")[i % 2]
        words = list(rng.choice(_TOPICS[topic], size=rng.randint(4, 8)))
        words += list(rng.choice(_FILLER, size=rng.randint(3, 7)))
        rng.shuffle(words)
        words = [w.capitalize() if rng.rand() < 0.2 else w for w in words]
        words = [w + rng.choice([",", ".", "!", ""]) if rng.rand() < 0.15 else w for w in words]
        docs.append(" ".join(words))
        labels.append(topic)
    order = rng.permutation(len(docs))
    return [docs[i] for i in order], np.asarray(labels)[order]


def awkward_documents() -> list:
    """Documents that trip up careless featurizers.

    An empty document, a whitespace-only one, bytes that are not valid UTF-8 (Latin-1 encoded,
    as in old Usenet archives), non-ASCII text, a one-character document, digits and
    punctuation only, and a long document. Real corpora contain all of these.
    """
    return [
        "",
        "   \n\t ",
        "caf\xe9 cr\xe8me br\xfbl\xe9e".encode("latin-1"),  # invalid as UTF-8
        b"plain ascii bytes",
        "na\u00efve caf\u00e9 \u2014 \u00fcn\u00efc\u00f6d\u00e9 \u65e5\u672c\u8a9e text",
        "x",
        "1234 5678 !!! ??? ... ---",
        " ".join(["orbit rocket doctor patient"] * 200),
    ]
