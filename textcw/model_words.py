"""The words a model weighs most for each label, with how sure it is of each weight.

A linear learner scores label ``k`` of a document ``x`` as ``w_k . x + b_k``, so the words with
the largest weights ``w_kj`` are those whose presence raises label ``k``'s score most (with two
labels there is one weight vector: its largest positive weights push towards ``classes_[1]``,
its most negative ones towards ``classes_[0]``). This is what eli5's ``show_weights`` or Vowpal
Wabbit's ``--invert_hash`` list.

The Gaussian learners (CW var and stdev, AROW, SCW) keep a distribution ``w ~ N(mu, Sigma)``
over weight vectors (Dredze, Crammer and Pereira, "Confidence-Weighted Linear Classification",
ICML 2008, section 3), so each listed weight comes with its standard deviation
``sqrt(Sigma_jj)`` (``sigma_``, the diagonal of the label's covariance block): a large weight
with a small deviation is a word the model has seen often and agrees on; a weight within a
deviation or two of zero is one it has barely learned (``z = mu_j / sd_j``, the weight in
standard deviations).

Words come from the featurizer's vocabulary. A hashing featurizer keeps none (a column is a
bucket of every word that hashes to it), so its models are refused with a pointer to
``predict --explain``, which names the words of a given document.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from textcw.errors import InputError, ParameterError
from textcw.explain import linear_weights, pipeline_parts

__all__ = ["LabelWords", "WeightedWord", "top_words"]


@dataclass(frozen=True)
class WeightedWord:
    """A word, its weight towards the label (``mu_j``; for the first label of a binary model,
    ``-mu_j``) and that weight's standard deviation ``sd`` (``None`` for a learner without a
    distribution over weights)."""

    word: str
    weight: float
    sd: float | None

    @property
    def z(self) -> float | None:
        """The weight in standard deviations (``None`` without a deviation, or a zero one)."""
        return self.weight / self.sd if self.sd else None


@dataclass(frozen=True)
class LabelWords:
    """The ``words`` with the largest weights towards ``label``, largest first."""

    label: object
    words: tuple[WeightedWord, ...]


def vocabulary_words(featurizer) -> np.ndarray:
    """The word of each column of ``featurizer`` (an array of strings), or an :class:`InputError`
    for a featurizer that keeps no vocabulary."""
    if featurizer is not None and isinstance(getattr(featurizer, "vocabulary_", None), dict):
        return np.asarray(featurizer.get_feature_names_out(), dtype=object)
    name = type(featurizer).__name__ if featurizer is not None else "a chain of transformers"
    raise InputError(f"the model's featurizer ({name}) keeps no vocabulary (a hashing featurizer's column is a "
                     "bucket of every word that hashes to it), so it cannot list its words; use "
                     "`textcw predict MODEL --explain` to see the words of a document that moved its prediction")


def top_words(model, n: int = 10) -> list[LabelWords]:
    """The ``n`` words with the largest weights towards each label of ``model`` (a fitted
    pipeline: a vocabulary featurizer, then a linear learner), in the order of ``classes_``.

    Ties are broken by column (the vocabulary's alphabetical order). Weights that are zero or
    point away from the label are never listed, so a label may get fewer than ``n`` words.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"n={n!r} is invalid; give how many words to list per label (1 or more)")
    steps, featurizer, learner = pipeline_parts(model)
    words = vocabulary_words(featurizer)
    est = linear_weights(learner)
    coef = np.asarray(est.coef_, dtype=np.float64)
    sigma = np.asarray(est.sigma_, dtype=np.float64) if hasattr(est, "sigma_") else None
    classes = list(np.asarray(learner.classes_))
    if coef.shape[1] < len(words):
        raise InputError(f"the learner has {coef.shape[1]} weights per label but the vocabulary "
                         f"{len(words)} words: the model file is inconsistent")
    rows = [(classes[1], coef[0], 0), (classes[0], -coef[0], 0)] if coef.shape[0] == 1 \
        else [(label, coef[k], k) for k, label in enumerate(classes)]
    rows.sort(key=lambda row: classes.index(row[0]))
    out = []
    for label, weights, block in rows:
        weights = weights[:len(words)]  # the intercept's column, if the learner keeps one there
        order = np.lexsort((np.arange(len(weights)), -weights))
        chosen = [j for j in order[:n] if weights[j] > 0]
        out.append(LabelWords(label, tuple(
            WeightedWord(str(words[j]), float(weights[j]),
                         None if sigma is None else float(np.sqrt(max(sigma[block, j], 0.0))))
            for j in chosen)))
    return out
