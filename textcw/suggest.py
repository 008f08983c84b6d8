"""What to label next: unlabelled documents ranked by how much their label would teach the model.

Uncertainty sampling: the documents the model is least sure of are the ones whose labels are
worth asking for. Three strategies (:data:`STRATEGIES`), each a number per document:

``mistake`` (the Gaussian learners: CW var and stdev, AROW, SCW)
    The probability that the model's prediction is a mistake under its own distribution over
    weight vectors, ``w ~ N(mu, Sigma)`` (Dredze, Crammer and Pereira, "Confidence-Weighted
    Linear Classification", ICML 2008, section 3; the constraint of eq. 3 bounds this very
    probability, ``Pr[y w.x >= 0] >= eta``, for the training examples). For a document ``x`` the
    score ``S = w . x + b`` is Gaussian with mean ``m = mu . x + b`` and variance
    ``v = x' Sigma x`` (the intercept's variance included; ``margin_variance``). The model
    predicts the sign of ``m``; a weight vector drawn from the distribution disagrees with it
    with probability::

        binary:  P(sign S != sign m) = Phi(-|m| / sqrt(v))

    Multi-class: each label ``k`` has its own covariance block and the label scores
    ``S_k ~ N(m_k, v_k)`` are independent (docs/algorithms.md "Label probabilities"). For the
    predicted label ``y`` and the runner-up ``r`` (the two largest means), ``D = S_y - S_r`` has
    mean ``m_y - m_r >= 0`` and variance ``v_y + v_r``, and the probability that the runner-up
    outscores the prediction is::

        multi-class:  P(D < 0) = Phi(-(m_y - m_r) / sqrt(v_y + v_r))

    (a lower bound of the probability that some other label wins, exact for two labels). It is
    at most 1/2, reached on the decision boundary; higher means more informative. With ``v = 0``
    (no uncertainty left) it is 0, or 1/2 on the boundary itself.

``margin`` (every learner)
    The difference between the two largest probabilities (``predict_proba``: the calibrated
    ones of a model from ``textcw train``), or, for a model without probabilities, between the
    two largest decision scores (binary: ``|s|``, the score's distance from the threshold 0).
    Smaller means more informative.

``random`` (every learner)
    A seeded uniform draw per document, in the documents' order: the baseline any strategy
    should beat. The same ``seed`` and documents give the same ranking, however they are split
    into chunks.

:func:`rank` returns the ``n`` most informative documents, most informative first (ties by
position); :class:`Ranker` does the same chunk by chunk, holding only ``n`` documents.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from textcw.errors import ParameterError, UnknownNameError
from textcw.explain import class_scores, linear_weights, pipeline_parts, transform_docs

__all__ = ["STRATEGIES", "Ranker", "Suggestion", "informativeness", "mistake_probability_of", "rank",
           "top_two_gap_of"]

STRATEGIES = ("mistake", "margin", "random")
GAUSSIAN_LEARNERS = "cw-var, cw-stdev, arow, scw1, scw2"


@dataclass(frozen=True)
class Suggestion:
    """One document to label: its position ``index`` among the documents ranked (from 0), the
    strategy's ``score`` (``mistake``: a probability, ``margin``: a difference, ``random``: the
    draw) and, from :class:`Ranker`, the ``item`` given with it (e.g. its text)."""

    index: int
    score: float
    item: object = None


def check_strategy(strategy: str) -> str:
    if strategy not in STRATEGIES:
        raise UnknownNameError("strategy", strategy, STRATEGIES)
    return strategy


def check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"n={n!r} is invalid; give how many documents to suggest (1 or more)")
    return int(n)


def gaussian_learner(model):
    """The Gaussian learner of ``model`` (a pipeline), or a :class:`ParameterError` naming the
    strategies that work for its learner."""
    _, _, learner = pipeline_parts(model)
    try:
        est = linear_weights(learner)
    except ValueError:
        est = learner
    if not (hasattr(est, "margin_variance") and hasattr(est, "sigma_")):
        components = getattr(model, "textcw_components_", None)
        name = components.get("learner", {}).get("name") if isinstance(components, dict) else None
        which = repr(name) if isinstance(name, str) else f"a {type(learner).__name__}"
        raise ParameterError(f"strategy 'mistake' needs a learner with a distribution over weights "
                             f"({GAUSSIAN_LEARNERS}); this model's learner is {which}: use strategy 'margin' "
                             "or 'random'")
    return est


def mistake_probability(model, docs) -> np.ndarray:
    """Per document, the probability of a mistake under the weight distribution (module docstring)."""
    est = gaussian_learner(model)
    steps, _, _ = pipeline_parts(model)
    X = transform_docs(steps, list(docs))
    return mistake_probability_of(est.decision_function(X), est.margin_variance(X))


def mistake_probability_of(means, variances) -> np.ndarray:
    """:func:`mistake_probability` from a Gaussian learner's scores and their variances (binary:
    one column each; multi-class: one per class), for a caller that scored the documents itself."""
    means, variances = np.asarray(means, dtype=np.float64), np.asarray(variances, dtype=np.float64)
    if means.ndim == 1:
        gap, var = np.abs(means), variances
    else:
        order = np.argsort(-means, axis=1, kind="stable")[:, :2]
        rows = np.arange(means.shape[0])[:, None]
        top, var2 = means[rows, order], variances[rows, order]
        gap, var = top[:, 0] - top[:, 1], var2.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, -gap / np.sqrt(var), np.where(gap > 0, -np.inf, 0.0))
    return ndtr(z)


def top_two_gap(model, docs) -> np.ndarray:
    """Per document, the difference of the two largest probabilities (or scores; module docstring)."""
    docs = list(docs)
    if hasattr(model, "predict_proba"):
        return top_two_gap_of(proba=model.predict_proba(docs))
    return top_two_gap_of(scores=model.decision_function(docs))


def top_two_gap_of(*, proba=None, scores=None) -> np.ndarray:
    """:func:`top_two_gap` from a model's probabilities, or, without them, its decision scores
    (binary: ``|s|``), for a caller that scored the documents itself."""
    if proba is not None:
        values = np.asarray(proba, dtype=np.float64)
    elif scores is not None:
        raw = np.asarray(scores, dtype=np.float64)
        if raw.ndim == 1 or raw.shape[1] == 1:
            return np.abs(raw.reshape(-1))
        values = class_scores(raw, raw.shape[1])
    else:
        raise ParameterError("strategy 'margin' needs a model's probabilities or decision scores, and this one "
                             "gives neither; use strategy 'random'")
    best = -np.sort(-values, axis=1)[:, :2]
    return best[:, 0] - best[:, 1]


def informativeness(model, docs, strategy: str, *, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """``(scores, priorities)`` of ``docs``: the strategy's number per document and the value
    ranked on (larger first: the score, or minus the margin). ``random`` draws from ``rng`` (a
    ``numpy.random.Generator``, seeded by the caller)."""
    strategy = check_strategy(strategy)
    docs = list(docs)
    if strategy == "mistake":
        scores = mistake_probability(model, docs)
        return scores, scores
    if strategy == "margin":
        scores = top_two_gap(model, docs)
        return scores, -scores
    draws = (rng if rng is not None else np.random.default_rng(0)).random(len(docs))
    return draws, draws


class Ranker:
    """The ``n`` most informative of documents given chunk by chunk (:meth:`add`), holding only
    ``n`` of them: :meth:`result` is what :func:`rank` gives for all the documents at once."""

    def __init__(self, model, strategy: str = "mistake", n: int = 10, *, seed: int = 0):
        self.strategy, self.n = check_strategy(strategy), check_n(n)
        if strategy == "mistake":
            gaussian_learner(model)  # refused before any document is read
        self.model, self.rng, self.seen = model, np.random.default_rng(seed), 0
        self.priority = np.empty(0)
        self.index = np.empty(0, dtype=np.int64)
        self.score = np.empty(0)
        self.items: list = []

    def add(self, docs, items=None) -> None:
        """Rank the next documents (their ``items``, by default the documents themselves, are
        kept with those among the ``n`` best so far)."""
        docs = list(docs)
        if not docs:
            return
        items = docs if items is None else list(items)
        score, priority = informativeness(self.model, docs, self.strategy, rng=self.rng)
        index = np.arange(self.seen, self.seen + len(docs), dtype=np.int64)
        self.seen += len(docs)
        priority = np.concatenate([self.priority, priority])
        index = np.concatenate([self.index, index])
        score = np.concatenate([self.score, score])
        pool = self.items + items
        keep = np.lexsort((index, -priority))[: self.n]  # most informative first, ties by position
        self.priority, self.index, self.score = priority[keep], index[keep], score[keep]
        self.items = [pool[k] for k in keep]

    def result(self) -> list[Suggestion]:
        return [Suggestion(int(i), float(s), item) for i, s, item in zip(self.index, self.score, self.items)]


def rank(model, docs, strategy: str = "mistake", n: int = 10, *, seed: int = 0) -> list[Suggestion]:
    """The ``n`` most informative of ``docs`` for ``model`` (a fitted pipeline), most informative
    first (module docstring): ``[Suggestion(index, score, item=document), ...]``, fewer when
    there are fewer documents. ``seed`` seeds the ``random`` strategy."""
    ranker = Ranker(model, strategy, n, seed=seed)
    ranker.add(docs)
    return ranker.result()
