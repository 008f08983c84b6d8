"""Unigrams, or unigrams and bigrams, chosen on the training documents by progressive validation.

On documents of a few words (titles, one-line descriptions, docstrings, subject lines) a word
alone says little and a pair of words ("python module", "game engine") much more: there the tuned
batch baselines choose uni+bigrams, and an online learner on unigrams trails them by 1-2 points
(docs/quality.md "Many classes of short text"). On long documents the unigrams already carry the
evidence, while the bigrams multiply the features (and the model) by 5-12. Neither fixed choice is
right for every corpus, so ``textcw train`` lets the training documents decide:

1. The featurizer is fitted as given (unigrams). If the documents are not short (the median
   document has more than :data:`SHORT_TEXT_WORDS` distinct words), that is the choice: the
   bigram pass would cost several times the unigram featurizing for little or no gain.
2. Otherwise a copy with ``ngram_range=(1, 2)`` is fitted too, and one probe learner (AROW,
   ``r = 1``: Crammer, Kulesza and Dredze, "Adaptive regularization of weight vectors", MLJ 2013,
   the learner ``textcw train`` does not tune) makes one seeded pass over each matrix, counting
   its mistakes before each update: progressive validation (Blum, Kalai and Langford, COLT 1999),
   an estimate of held-out error on every training document with none set aside, as self-tuning
   uses (:mod:`textcw.learners.autotune`). The bigrams are kept only with strictly fewer
   mistakes: the larger model has to earn its size.

The choice is a training default of the ``tfidf`` featurizer (its class sets
``ngram_choice = True``); a featurizer given an ``ngram_range`` keeps it. The fitted model holds
an ordinary featurizer with the chosen ``ngram_range``, so saving, exporting and serving see
nothing new. Measured on held-out tasks in docs/quality.md "Choosing bigrams".

This module only calls the featurizer's scikit-learn interface (``get_params``, ``set_params``,
``fit_transform``), so it sits with the learners and serves both the calibrated pipeline and
:func:`textcw.pipeline.train`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone

UNIGRAMS = (1, 1)
BIGRAMS = (1, 2)
# Documents whose median has at most this many distinct words are "short" (a title, a sentence).
# A cost gate, not a tuned constant: the held-out short-text tasks have medians of 4-7, the
# long-document ones 31-234, and the choice agreed with the test accuracy on both sides where it
# was measured; past it only the bigram pass's cost grows.
SHORT_TEXT_WORDS = 20


@dataclass(frozen=True)
class NgramChoice:
    """What the training documents chose: ``ngram_range``, the median distinct words of a
    document, and the probe's first-pass mistakes per candidate (empty when nothing was
    compared: long documents, or no labels to compare with)."""

    ngram_range: tuple[int, int]
    median_words: float
    mistakes: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"ngram_range": list(self.ngram_range), "median_words": self.median_words,
                "mistakes": dict(self.mistakes)}

    def describe(self) -> str:
        """One line for reports: what was chosen and why."""
        chosen = "unigrams and bigrams" if self.ngram_range == BIGRAMS else "unigrams"
        if not self.mistakes:
            return f"{chosen} (median document {self.median_words:g} distinct words: not compared)"
        return (f"{chosen} (median document {self.median_words:g} distinct words; first-pass mistakes "
                f"{self.mistakes['1-1']:,} with unigrams, {self.mistakes['1-2']:,} with bigrams)")


def chosen_params(params: dict, ngram_range) -> dict:
    """A featurizer's parameters once its documents chose ``ngram_range``: bigrams are stated,
    unigrams are its default (left unstated, so a model that chose them records what it did
    before the choice existed)."""
    rest = {k: v for k, v in params.items() if k != "ngram_range"}
    return {**rest, "ngram_range": BIGRAMS} if tuple(ngram_range) == BIGRAMS else rest


def can_choose(featurizer) -> bool:
    """Whether ``featurizer`` takes the choice: its class opts in (``ngram_choice = True``) and
    it counts unigrams of words as made."""
    if not getattr(type(featurizer), "ngram_choice", False):
        return False
    params = featurizer.get_params(deep=False)
    return params.get("analyzer") == "word" and tuple(params.get("ngram_range", ())) == UNIGRAMS


def _reiterable(documents) -> bool:
    # a stream (generator, file) can be featurized once only; a list, array or TextBlock twice
    return not isinstance(documents, Iterator)


def _single_labels(y) -> np.ndarray | None:
    if y is None:
        return None
    labels = np.asarray(y)
    return labels if labels.ndim == 1 and len(set(labels.tolist())) >= 2 else None


def probe_mistakes(X, y) -> int:
    """The probe's mistakes over one seeded pass of ``(X, y)``, each counted before its update."""
    # imported here: the pipeline module imports this one, and loading a model to predict
    # should not load a learner it does not use
    from textcw.learners.arow import AROW

    probe = AROW(n_epochs=1)
    probe.fit(X, y)
    return int(probe.mistakes_[0])


def fit_chosen(featurizer, documents, y):
    """``(fitted featurizer, features of documents, NgramChoice)``: ``featurizer`` fitted as
    given, or a fitted copy with ``ngram_range=(1, 2)`` where the documents chose it (module
    docstring). ``featurizer`` must pass :func:`can_choose`."""
    X = featurizer.fit_transform(documents, y)
    words = float(np.median(np.diff(X.indptr))) if X.shape[0] else 0.0
    labels = _single_labels(y)
    if words > SHORT_TEXT_WORDS or labels is None or not _reiterable(documents):
        return featurizer, X, NgramChoice(UNIGRAMS, words)
    pairs = clone(featurizer).set_params(ngram_range=BIGRAMS)
    X_pairs = pairs.fit_transform(documents, y)
    mistakes = {"1-1": probe_mistakes(X, labels), "1-2": probe_mistakes(X_pairs, labels)}
    if mistakes["1-2"] < mistakes["1-1"]:
        return pairs, X_pairs, NgramChoice(BIGRAMS, words, mistakes)
    return featurizer, X, NgramChoice(UNIGRAMS, words, mistakes)
