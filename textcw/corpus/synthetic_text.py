"""``synthetic-text:N``: a seeded text stream of any length, with no download.

The JMLR 2012 large-scale experiments (section 7.9, 7.10) stream about a million documents;
this corpus lets anyone do the same on one machine. Task names:

- ``synthetic-text:N``: ``N`` training documents, two classes (``neg``, ``pos``);
- ``synthetic-text:N:K``: ``N`` training documents, ``K`` classes (``c0`` ... ``c{K-1}``).

``N`` may be written ``100000``, ``100_000``, ``1e5`` or ``10^5``. The test split has
``min(10_000, max(100, N // 5))`` documents (10,000 as in the paper's large-scale splits).

How a document is made (all draws seeded, see :func:`_block`):

- its length is ``5 + Poisson(35)`` tokens;
- each token is drawn from a vocabulary of ``2**17`` pseudo-words with Zipf probabilities
  ``p(rank r) ~ 1 / r**1.1``: a few very frequent words and a long tail of rare ones, the
  regime where per-feature confidence matters (JMLR 2012 section 1);
- the label is a hidden linear function of the binary bag of words: a fixed seeded weight
  vector (a third of the words carry ``N(0, 1)`` weights, the rest none) gives ``score = w . x``;
  two classes split at the median score, ``K`` classes take the argmax of ``K`` standardised
  scores (both calibrated on a seeded sample, so the classes are about balanced; ties are
  broken at random). Then a
  fraction ``noise`` (default 0.05) of the labels is replaced by another label, so no linear
  model reaches 100%.

Documents are generated in fixed blocks of 1,000, each from its own seed, so any range
``[start, stop)`` can be produced without the documents before it, identically however it is
chunked: :func:`stream` yields chunks for out-of-core training and for shard workers that read
only their own range; :func:`load` materialises a split as a :class:`Dataset` for small ``N``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

from textcw.corpus.base import Dataset, check_split
from textcw.errors import InputError

__all__ = [
    "BLOCK", "CALIBRATION", "CHUNK", "DEFAULT_N", "INFORMATIVE_SHARE", "MAX_MATERIALISED", "MAX_TEST",
    "MEAN_EXTRA_LENGTH", "MIN_LENGTH", "NOISE", "TASKS", "TASK_PATTERNS", "VOCABULARY", "ZIPF_EXPONENT",
    "check_task", "label_names", "load", "parse_task", "size", "split_size", "stream"
]

TASKS: dict = {}
TASK_PATTERNS = {
    "N": "N seeded synthetic documents (Zipf vocabulary, hidden linear labels), two classes",
    "N:K": "the same with K classes",
}
DEFAULT_N = 10_000
VOCABULARY = 2**17
ZIPF_EXPONENT = 1.1
MIN_LENGTH = 5
MEAN_EXTRA_LENGTH = 35
INFORMATIVE_SHARE = 1 / 3
NOISE = 0.05
BLOCK = 1_000
CALIBRATION = 5_000
CHUNK = 10_000
MAX_TEST = 10_000
# load() builds every document as a Python string; past this the stream interface is the way.
MAX_MATERIALISED = 2_000_000
_SPLIT_CODE = {"train": 0, "test": 1}
_NUMBER = re.compile(r"^(?:(\d[\d_]*)|(\d+(?:\.\d+)?)[eE](\d+)|(\d+)\^(\d+))$")
# Pseudo-words are syllables of a base-100 numeral of the rank: readable, distinct, and tokens
# of two letters or more, so scikit-learn's default token pattern sees each word whole.
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwxyz" for v in "aeiou"]


def _parse_count(text: str, what: str, spec: str) -> int:
    match = _NUMBER.match(text.strip())
    value = None
    if match:
        plain, mant, exp, base, power = match.groups()
        if plain is not None:
            value = int(plain.replace("_", ""))
        elif mant is not None:
            f = float(mant) * 10 ** int(exp)
            value = int(f) if f.is_integer() else None
        else:
            value = int(base) ** int(power)
    if value is None or value < 1:
        raise InputError(
            f"synthetic-text:{spec}: {what} must be a whole number >= 1 (e.g. 100000, 1e6 or "
            f"10^6); got {text!r}. Tasks are synthetic-text:N or synthetic-text:N:K"
        )
    return value


def parse_task(task: str | None) -> tuple[int, int]:
    """``"1e6"`` -> ``(1000000, 2)``; ``"5000:4"`` -> ``(5000, 4)``; ``None`` -> the default."""
    if task is None:
        return DEFAULT_N, 2
    parts = task.split(":")
    if len(parts) > 2 or not all(p.strip() for p in parts):
        raise InputError(
            f"synthetic-text:{task} is not a task; write synthetic-text:N (N documents) or "
            "synthetic-text:N:K (K classes), e.g. synthetic-text:100000 or synthetic-text:1e6:4"
        )
    n = _parse_count(parts[0], "the number of documents N", task)
    k = _parse_count(parts[1], "the number of classes K", task) if len(parts) == 2 else 2
    if k < 2:
        raise InputError(f"synthetic-text:{task}: K must be at least 2 classes in synthetic-text:N:K")
    return n, k


def check_task(task: str) -> bool:
    """Accept ``N`` and ``N:K`` (the registry's check for pattern task names)."""
    parse_task(task)
    return True


def split_size(task: str | None, split: str) -> int:
    """Documents in ``split``: ``N`` for train, ``min(10_000, max(100, N // 5))`` for test."""
    check_split(split)
    n, _ = parse_task(task)
    return n if split == "train" else min(MAX_TEST, max(100, n // 5))


def size(task: str | None = None, split: str = "train", **options) -> int:
    """Number of documents of ``split`` (the corpus ``size`` protocol of :mod:`textcw.scale`)."""
    return split_size(task, split)


def label_names(k: int) -> list[str]:
    return ["neg", "pos"] if k == 2 else [f"c{j}" for j in range(k)]


def _word(rank: int) -> str:
    digits = []
    rank += 100  # at least two syllables, so every word has 4+ letters
    while rank:
        rank, r = divmod(rank, 100)
        digits.append(_SYLLABLES[r])
    return "".join(reversed(digits))


def _bags(rng: np.random.Generator, cdf: np.ndarray, n_docs: int):
    """Draw ``n_docs`` documents: lengths, word ranks (concatenated), binary bag-of-words matrix."""
    lengths = MIN_LENGTH + rng.poisson(MEAN_EXTRA_LENGTH, size=n_docs)
    ranks = np.searchsorted(cdf, rng.random(int(lengths.sum())), side="right")
    doc = np.repeat(np.arange(n_docs), lengths)
    # The labelling reads the binary bag of words: a word counts once per document.
    present = sp.csr_matrix((np.ones(ranks.size), (doc, ranks)), shape=(n_docs, VOCABULARY))
    present.data[:] = 1.0
    return lengths, ranks, present


def _jitter(rng: np.random.Generator, scores: np.ndarray) -> np.ndarray:
    """Break ties at random: with few telling words many documents score exactly alike."""
    return scores + 1e-9 * rng.random(scores.shape)


@functools.lru_cache(maxsize=4)
def _world(seed: int, n_classes: int):
    """The vocabulary, the Zipf CDF over ranks, and the hidden labelling ``(W, offset, scale)``.

    Frequent words with random weights would shift every score the same way and unbalance the
    classes, so the scores are centred on a calibration sample of documents: at the median for
    two classes (balanced classes), per class by mean and standard deviation for ``K``.
    """
    words = [_word(r) for r in range(VOCABULARY)]
    p = 1.0 / np.arange(1, VOCABULARY + 1) ** ZIPF_EXPONENT
    cdf = np.cumsum(p / p.sum())
    cdf[-1] = 1.0
    rng = np.random.default_rng([seed, 7919, n_classes])
    n_scores = 1 if n_classes == 2 else n_classes
    weights = rng.normal(size=(VOCABULARY, n_scores)) * (rng.random((VOCABULARY, 1)) < INFORMATIVE_SHARE)
    _, _, present = _bags(rng, cdf, CALIBRATION)
    scores = _jitter(rng, np.asarray(present @ weights))
    if n_classes == 2:
        offset, scale = np.median(scores, axis=0), np.ones(1)
    else:
        offset, scale = scores.mean(axis=0), scores.std(axis=0)
    return words, cdf, (weights, offset, scale)


def _block(seed: int, n_classes: int, split: str, block: int, noise: float) -> tuple[list[str], np.ndarray]:
    """Documents ``block * BLOCK ... + BLOCK`` of ``split``: texts and label indices.

    Seeded by ``(seed, split, block)`` alone, so blocks can be made in any order on any machine.
    """
    words, cdf, (weights, offset, scale) = _world(seed, n_classes)
    rng = np.random.default_rng([seed, _SPLIT_CODE[split], block])
    lengths, ranks, present = _bags(rng, cdf, BLOCK)
    scores = (_jitter(rng, np.asarray(present @ weights)) - offset) / scale
    target = (scores[:, 0] > 0).astype(np.int64) if n_classes == 2 else np.argmax(scores, axis=1)
    flip = rng.random(BLOCK) < noise
    # Noise moves a label to one of the other classes, uniformly.
    target = np.where(flip, (target + rng.integers(1, n_classes, size=BLOCK)) % n_classes, target)
    tokens = [words[r] for r in ranks.tolist()]
    ends = np.cumsum(lengths).tolist()
    starts = [0] + ends[:-1]
    texts = [" ".join(tokens[a:b]) for a, b in zip(starts, ends)]
    return texts, target


def _check_range(task, split, start, stop) -> tuple[int, int]:
    total = split_size(task, split)
    stop = total if stop is None else stop
    if not (0 <= start <= stop <= total):
        raise InputError(
            f"synthetic-text:{task or DEFAULT_N} {split} has {total} documents; cannot read "
            f"documents [{start}, {stop})"
        )
    return start, stop


def _check_noise(noise: float) -> float:
    if not isinstance(noise, (int, float)) or isinstance(noise, bool) or not 0.0 <= noise < 1.0:
        raise InputError(f"synthetic-text: noise={noise!r} is invalid; noise must be in [0, 1)")
    return float(noise)


def stream(task: str | None = None, split: str = "train", *, start: int = 0, stop: int | None = None,
           chunk_size: int = CHUNK, seed: int = 0, noise: float = NOISE) -> Iterator[Dataset]:
    """Documents ``[start, stop)`` of ``split`` as consecutive :class:`Dataset` chunks.

    Memory is one chunk (plus one block) whatever the range, so a stream of 10**6 documents
    costs what a stream of 10**4 does. The documents are those :func:`load` returns, in order.
    """
    n, k = parse_task(task)
    noise = _check_noise(noise)
    start, stop = _check_range(task, split, start, stop)
    if not isinstance(chunk_size, int) or chunk_size < 1:
        raise InputError(f"chunk_size must be a whole number >= 1; got {chunk_size!r}")
    names = label_names(k)
    name = f"synthetic-text:{n}" + (f":{k}" if k != 2 else "")
    texts: list[str] = []
    targets: list[np.ndarray] = []
    held = 0
    pos = start
    while pos < stop:
        block = pos // BLOCK
        block_texts, block_target = _block(seed, k, split, block, noise)
        lo, hi = pos - block * BLOCK, min(BLOCK, stop - block * BLOCK)
        texts.extend(block_texts[lo:hi])
        targets.append(block_target[lo:hi])
        held += hi - lo
        pos = block * BLOCK + hi
        while held >= chunk_size or (pos >= stop and held):
            take = min(held, chunk_size)
            target = np.concatenate(targets)
            yield Dataset(data=texts[:take], target=target[:take], target_names=names, name=name,
                          split=split)
            texts, targets, held = texts[take:], [target[take:]], held - take


def load(task: str | None = None, split: str = "train", *, seed: int = 0, noise: float = NOISE) -> Dataset:
    """The whole ``split`` in memory (for ``N`` up to 2,000,000; use :func:`stream` beyond)."""
    total = split_size(task, split)
    if total > MAX_MATERIALISED:
        raise InputError(
            f"synthetic-text:{task} has {total} {split} documents, more than the "
            f"{MAX_MATERIALISED} that are built in memory; train with --stream (or --shards) to "
            "read it in chunks"
        )
    n, k = parse_task(task)
    parts = list(stream(task, split, chunk_size=max(total, 1), seed=seed, noise=noise))
    data = parts[0].data
    return Dataset(data=data, target=parts[0].target, target_names=label_names(k),
                   name=parts[0].name, split=split,
                   info={"vocabulary": VOCABULARY, "zipf_exponent": ZIPF_EXPONENT,
                         "noise": noise, "seed": seed, "n_classes": k,
                         "documents": n if split == "train" else total})

