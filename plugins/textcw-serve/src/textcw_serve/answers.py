"""What ``/predict`` answers besides the labels, and what ``/suggest`` answers.

- ``top``: each document's ``k`` best labels, best first, with their probabilities: the library's
  :func:`textcw.explain.top_k`, asked about the decision scores and probabilities the prediction
  itself computed (:func:`textcw_serve.model_ops.score`, one model state), so a document's
  ranked labels, its ``label`` and its ``probabilities`` always agree.
- ``explain``: why each document got its label: the library's :func:`textcw.explain.explain`,
  each word's contribution ``x_j (w_yj - w_rj)`` to the score difference of the predicted label
  ``y`` and the runner-up ``r``, with its standard deviation under the Gaussian learners'
  ``w ~ N(mu, Sigma)`` (Dredze, Crammer and Pereira, "Confidence-Weighted Linear
  Classification", ICML 2008, section 3). The features the prediction was scored on are weighed
  (:func:`textcw.explain.explain_features`) while the model is held for reading, with the
  prediction, so the explanation is of the same model state as the label beside it; the terms'
  words are named after the model is let go (:func:`textcw.explain.with_words`). The bounds of
  :data:`~textcw_serve.schemas.MAX_EXPLAIN_DOCUMENTS` and ``MAX_EXPLAIN_WORDS`` limit that work.
- ``/suggest``: the unlabelled documents most worth labelling, ranked as
  :func:`textcw.suggest.rank` ranks them (``mistake``: the probability of a mistake under the
  weight distribution, ICML 2008 eq. 3's ``Pr[y w.x >= 0]``; ``margin``; ``random``). The
  library's ranking featurizes and scores in one call; here the documents are featurized before
  the model is held and only scored while it is (as a prediction is: the read lock is held no
  longer), and the strategies' numbers are then computed from those arrays by
  :mod:`textcw.suggest`'s own functions of scores (tested equal to ``rank``, exactly, for each
  strategy).
"""

from __future__ import annotations

import math

import numpy as np

from textcw.errors import InputError, ParameterError
from textcw.explain import check_k, explain_features, pipeline_parts, top_k, with_words
from textcw.suggest import gaussian_learner, mistake_probability_of, top_two_gap_of

from textcw_serve.model_ops import featurize, is_multilabel, jsonable_label, learner_of, prediction_rows, score


def check_top(k: int, n_classes: int) -> int:
    """``top`` from 1 to the model's number of classes, or an :class:`InputError` (a 422)."""
    try:
        return check_k(k, n_classes, "top")
    except ParameterError as exc:
        raise InputError(str(exc)) from None


class _Scored:
    """The model as :func:`textcw.explain.top_k` asks it, answering with one prediction's arrays
    (``predict_proba`` and ``decision_function`` exist only when the prediction has them, as on
    the model itself)."""

    def __init__(self, classes, scored, calibration=None):
        self.classes_ = classes
        self.probability_calibration_ = calibration  # a calibrated model ranks by probability
        if scored.proba is not None:
            self.predict_proba = lambda docs: scored.proba
        if scored.scores is not None:
            self.decision_function = lambda docs: scored.scores


def top_rows(scored, classes, k: int, calibration=None) -> list[list[dict]]:
    """Each document's ``k`` best labels: ``[{"label", "probability", "score"}, ...]``, best first
    (``probability`` ``null`` for a model without probabilities, which are ranked by score);
    ``calibration``: the model's ``probability_calibration_``, as :func:`textcw.explain.top_k` reads it."""
    ranked = top_k(_Scored(classes, scored, calibration), range(len(scored.predicted)), k)
    probabilities = ranked.probabilities if ranked.probabilities is not None else [[None] * k] * len(ranked.labels)
    return [[{"label": jsonable_label(label), "probability": _number(p), "score": _number(s)}
             for label, p, s in zip(labels, ps, ss)]
            for labels, ps, ss in zip(ranked.labels, probabilities, ranked.scores.tolist())]


def explanation_dict(e) -> dict:
    """A :class:`textcw.explain.Explanation` as JSON (the words are the document's tokens: valid
    text, since a request's documents are)."""
    return {"label": jsonable_label(e.label), "runner_up": jsonable_label(e.runner_up), "binary": bool(e.binary),
            "margin": _number(e.margin), "margin_sd": _number(e.margin_sd),
            "terms": [{"words": list(t.words), "column": t.column, "value": _number(t.value),
                       "contribution": _number(t.contribution), "sd": _number(t.sd)} for t in e.terms],
            "rest": _number(e.rest), "n_rest": e.n_rest, "intercept": _number(e.intercept),
            "intercept_sd": _number(e.intercept_sd), "unknown": bool(e.unknown)}


def predict_answers(service, documents: list[str], top: int | None, words: int | None) -> tuple[int, list[dict]]:
    """``(model version, rows)``: the ``/predict`` rows, each with ``top`` and ``explanation``
    when asked for, all from one model state."""
    model = service.model
    if is_multilabel(model):  # as textcw predict refuses --top and --explain for it
        option = "top" if top is not None else "explain"
        raise InputError(f"{option} answers for a single-label model; this model is multi-label (a set of tags per "
                         "document, each label decided by a model of its own): leave "
                         f"{option} out (probabilities has each tag's)")
    if top is not None:
        top = check_top(top, len(learner_of(model).classes_))  # refused before any work
    X = featurize(model, documents)
    with service.lock.shared():
        version, scored = service.counters.seq, score(model, X)
        # only the weights are read here; the words are named from the document after (with_words)
        explained = [explain_features(model, X[i], words) for i in range(len(documents))] if words is not None else None
    if explained is not None:
        _, featurizer, _ = pipeline_parts(model)
        explained = [with_words(e, featurizer, doc) for e, doc in zip(explained, documents)]
    rows = prediction_rows(scored, service.labels)
    if top is not None:
        for row, ranked in zip(rows, top_rows(scored, learner_of(model).classes_, top,
                                                  getattr(model, "probability_calibration_", None))):
            row["top"] = ranked
    if explained is not None:
        for row, e in zip(rows, explained):
            row["explanation"] = explanation_dict(e)
    return version, rows


def _gaussian(model):
    """The learner with a weight distribution (:func:`textcw.suggest.gaussian_learner`), or the
    library's one-line refusal as an :class:`InputError` (a 422)."""
    try:
        return gaussian_learner(model)
    except ParameterError as exc:
        raise InputError(str(exc)) from None


def suggest(service, documents: list[str], strategy: str, n: int, seed: int) -> tuple[int, list[dict]]:
    """``(model version, [{"index", "score", "label"}, ...])``: the ``n`` most informative of
    ``documents``, most informative first, ties by position (:func:`textcw.suggest.rank`)."""
    model = service.model
    if is_multilabel(model):
        raise InputError("/suggest ranks documents for a single-label model; this model is multi-label (a set of "
                         "tags per document): rank them from each tag's probability in /predict's reply")
    if strategy == "mistake":
        with service.lock.shared():  # reads the learner's variances: refused before any work
            _gaussian(model)
    X = featurize(model, documents)
    with service.lock.shared():
        version = service.counters.seq
        if strategy == "mistake":
            est = _gaussian(model)
            own = est is learner_of(model)
            scored = score(model, X, variances=own)
            means = scored.scores if own else np.asarray(est.decision_function(X), dtype=np.float64)
            variances = scored.variances if own else None
            if variances is None:  # not from the compiled pass: the learner's own, as the library asks it
                variances = np.asarray(est.margin_variance(X), dtype=np.float64)
        else:  # the prediction's own numbers (the labels; and the probabilities 'margin' ranks by)
            scored = score(model, X)
    if strategy == "mistake":
        values = mistake_probability_of(means, variances)
        priority = values
    elif strategy == "margin":
        try:
            values = top_two_gap_of(proba=scored.proba, scores=scored.scores)
        except ParameterError as exc:
            raise InputError(str(exc)) from None
        priority = -values
    else:
        values = np.random.default_rng(seed).random(len(documents))
        priority = values
    keep = np.lexsort((np.arange(len(documents)), -priority))[:n]  # most informative first, ties by position
    labels = scored.predicted
    return version, [{"index": int(i), "score": _number(float(values[i])), "label": jsonable_label(labels[i])}
                     for i in keep]


def _number(value) -> float | None:
    """A float for JSON, ``None`` when there is none or it is not finite (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
