"""What the service does with a model: predict, check an update, digest the result.

A served model is the ``Pipeline(featurizer, learner)`` that ``textcw train --out`` saves. How
updates are featurized and applied is :mod:`textcw_serve.updates`. The featurizer is fitted
once and never changes, so documents are featurized outside the model lock.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from dataclasses import dataclass

import numpy as np
from sklearn.pipeline import Pipeline

from textcw.errors import InputError
from textcw.features.hashing import Hashing
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import GaussianLinearClassifier
from textcw.learners.multilabel import MultiLabel
from textcw.learners.temperature import TemperatureScaling
from textcw.untrusted import safe_text

from textcw_serve.scoring import as_matrix, scores_and_variances
from textcw_serve.tagsets import check_shapes, multilabel_digest, split


def check_servable(model, name: str) -> None:
    """Refuse, at start-up, a model that cannot label text (the rule of ``textcw predict``)."""
    from pathlib import Path

    from textcw.cli.predict import check_model

    check_model(model, Path(name))
    if not hasattr(model.steps[-1][1], "classes_"):
        raise InputError(f"the learner in {name} is not fitted; train it first (`textcw train --out`)")


def is_multilabel(model) -> bool:
    """Whether the model predicts a set of tags per document (:class:`textcw.learners.multilabel.MultiLabel`)."""
    return isinstance(learner_of(model), MultiLabel)


def check_learnable(model, name: str) -> None:
    """``--learn`` needs a learner that continues with ``partial_fit`` (a multi-label model learns
    each document's tag set: :mod:`textcw_serve.tagsets`)."""
    learner = model.steps[-1][1]
    if not callable(getattr(learner, "partial_fit", None)):
        raise InputError(f"the learner of {name} ({type(learner).__name__}) has no partial_fit, so it "
                         "cannot learn online; serve it without --learn, or train an online learner")


def featurizer_of(model: Pipeline):
    return model.steps[0][1]


def learner_of(model: Pipeline):
    return model.steps[-1][1]


def jsonable_label(value):
    """A class as JSON: strings, integers, booleans and (integral) floats as themselves, bytes
    as text (UTF-8; bytes that are not UTF-8 keep a ``\\xNN`` escape for each bad byte)."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value


class LabelMap:
    """The model's classes as JSON, and the class a label given in a request names.

    Every type of label the library trains on is served: strings, integers, booleans, integral
    floats and bytes. A class is named by its JSON form (:func:`jsonable_label`, what
    ``/predict`` and ``/status`` show), so any label the service shows can be sent back to
    ``/learn``. Also, as before, by its text: ``"3"`` names the class ``3`` and ``"True"`` the
    class ``True``, so clients need not know the classes' type; ``true`` names only ``True``.
    """

    def __init__(self, classes, *, multilabel: bool = False):
        self.multilabel = multilabel  # each label a list of tags (tagsets.check_shapes)
        self.values = list(classes)
        self.classes = [jsonable_label(c) for c in self.values]
        self._exact: dict = {}
        self._by_text: dict = {}
        for value, shown in zip(self.values, self.classes):
            key = _exact_key(shown)
            if key in self._exact:
                raise InputError(f"the model's classes {self._exact[key][1]!r} and {shown!r} look the same in "
                                 "JSON, so a client could not name one of them; retrain with distinct labels")
            self._exact[key] = (value, shown)
            self._by_text.setdefault(str(shown), (value, shown))

    def resolve(self, labels: list) -> list:
        """The class each label names (the model's own values, for ``partial_fit``); for a
        multi-label model, the list of classes each list of tags names."""
        return self._each(labels, 0)

    def canonical(self, labels: list) -> list:
        """The JSON form of the class each label names (what the update log records)."""
        return self._each(labels, 1)

    def _each(self, labels: list, part: int) -> list:
        check_shapes(labels, self.multilabel)
        if not self.multilabel:
            return [found[part] for found in self._find(labels)]
        return split([found[part] for found in self._find([tag for tags in labels for tag in tags])], labels)

    def _find(self, labels: list) -> list:
        found, unknown = [], []
        for label in labels:
            hit = self._exact.get(_exact_key(label))
            if hit is None and not isinstance(label, bool):
                hit = self._by_text.get(str(label))
            if hit is None:
                unknown.append(label)
            found.append(hit)
        if unknown:
            shown = ", ".join(safe_text(json.dumps(u), 60) for u in unknown[:5])
            what = "tag" if self.multilabel else "label"
            raise InputError(f"unknown {what} {shown}: this model's classes are fixed "
                             f"({', '.join(json.dumps(c) for c in self.classes)}); correct the {what} or "
                             "train a model that has it")
        return found


def _exact_key(shown) -> tuple:
    # bool before int: True == 1 in Python, but they name different classes
    if isinstance(shown, bool):
        return ("bool", shown)
    if isinstance(shown, (int, float)):
        return ("number", shown)
    return ("text", shown)


class Vocabulary:
    """Whether the model's featurizer can take words it never saw, and counts those it drops.

    A featurizer fitted with a vocabulary (``vocabulary_``: ``binary-bow``, ``bigram-counts``,
    ``char-ngrams``) maps every term it did not see in training to nothing, so a correction made
    of new words cannot change the model; ``hashing`` (no vocabulary) gives every term a
    column. For a fixed vocabulary, :meth:`unseen` counts the terms (words, or the n-grams the
    featurizer makes) of some documents that it drops.
    """

    def __init__(self, model: Pipeline):
        featurizer = featurizer_of(model)
        vocabulary = getattr(featurizer, "vocabulary_", None)
        self.fixed = isinstance(vocabulary, dict) and callable(getattr(featurizer, "build_analyzer", None))
        self._terms = vocabulary if self.fixed else None
        self._analyze = featurizer.build_analyzer() if self.fixed else None

    def unseen(self, documents: list[str]) -> int | None:
        """Terms of ``documents`` outside the vocabulary (``None`` when it is not fixed)."""
        if not self.fixed:
            return None
        return sum(term not in self._terms for doc in documents for term in self._analyze(doc))

    def describe(self) -> dict:
        if not self.fixed:
            return {"fixed": False, "size": None,
                    "note": "every word gets a column (no vocabulary): corrections with new words are learned"}
        return {"fixed": True, "size": len(self._terms),
                "note": "the vocabulary was fixed when the model was trained: /learn drops words the model "
                        "never saw (see unseen_tokens in each reply); train with --featurizer hashed-tfidf "
                        "(tfidf's weights over hashed words) to learn new words"}


def calibration_of(model: Pipeline) -> dict | None:
    """The model's probability calibration (``textcw train``'s default temperature), if any, and
    what learning does to it: the temperature stays as fitted in training."""
    scaling = getattr(model, "probability_calibration_", None)
    if scaling is None or not hasattr(scaling, "to_dict"):
        return None
    fitted = scaling.to_dict()
    return {"method": fitted.get("method"), "margin": fitted.get("margin"),
            "temperature": fitted.get("temperature"), "kept_while_learning": True,
            "note": "the temperature was fitted when the model was trained and is kept as it is: /learn "
                    "changes the learner, not the temperature, so after many updates the probabilities "
                    "may be over- or under-confident (the labels are not affected); retrain to refit it"}


def _featurized(call, documents: list[str]):
    """``call(documents)`` of a featurizer's method; its errors become a clear input error."""
    try:
        return call(documents)
    except (TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"the model's featurizer cannot read these documents: {safe_text(str(exc), 200)}") from None


def featurize(model: Pipeline, documents: list[str]):
    """The feature matrix of ``documents``."""
    return _featurized(featurizer_of(model).transform, documents)


def featurize_for_scoring(model: Pipeline, documents: list[str]):
    """What :func:`score` takes for ``documents``: the ``hashing`` featurizer's
    :class:`~textcw.features.native.KernelRows` (the arrays of the matrix ``transform`` makes,
    without the matrix), else the feature matrix (:func:`featurize`)."""
    featurizer = featurizer_of(model)
    rows = _featurized(featurizer.kernel_rows, documents) if isinstance(featurizer, Hashing) else None
    return rows if rows is not None else featurize(model, documents)


def row_wise(featurizer) -> bool:
    """Whether ``featurizer.transform`` makes each document's row from that document alone, so
    that featurizing several requests at once gives each the rows it would get alone (bit for
    bit, tested): scikit-learn's vectorizers, which every text featurizer of textcw (and of its
    example plugin) is."""
    from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer

    return isinstance(featurizer, (CountVectorizer, HashingVectorizer))


@dataclass
class Scored:
    """What a prediction computes under the model lock: the arrays only (rows are built after
    the lock is released, :func:`prediction_rows`)."""

    predicted: np.ndarray
    scores: np.ndarray | None  # decision_function: (n,) binary, (n, K) multi-class
    proba: np.ndarray | None
    # margin_variance, when asked for (score(..., variances=True)) and computed with the scores by
    # the compiled pass; None otherwise (then the learner is asked, as the library asks it)
    variances: np.ndarray | None = None


class _Known:
    """The learner, except that ``decision_function(X)`` (and ``margin_variance(X)``) of the
    ``X`` just scored return those values (a copy) instead of computing them again: the label
    and the calibrated probabilities are all made from them, which cost a sparse product each.
    Every other attribute is the learner's own."""

    def __init__(self, learner, X, scores: np.ndarray, variances: np.ndarray | None = None):
        self._learner, self._X, self._scores, self._variances = learner, X, scores, variances

    def decision_function(self, X):
        return self._scores.copy() if X is self._X else self._learner.decision_function(X)

    def margin_variance(self, X):
        if X is self._X and self._variances is not None:
            return self._variances.copy()
        return self._learner.margin_variance(X)

    def __getattr__(self, name):
        return getattr(self._learner, name)


def _needs_variances(learner, scaling) -> bool:
    """Whether the probabilities are made from the margin variances too: a temperature on the
    standardized margin, or a Gaussian learner's own probabilities."""
    if scaling is not None:
        return isinstance(scaling, TemperatureScaling) and scaling.margin == "standardized"
    return getattr(type(learner), "predict_proba", None) is GaussianLinearClassifier.predict_proba


def score(model: Pipeline, X, *, variances: bool = False) -> Scored:
    """Label, decision scores and probabilities of each row of ``X``, all from one model state
    (called under the model lock). Each is what the learner's own ``predict``,
    ``decision_function`` and (calibrated) ``predict_proba`` give: the decision scores (and the
    margin variances the probabilities need) are computed once, by one compiled pass over the
    batch where the learner scores as the library does (:mod:`textcw_serve.scoring`, equal to
    rounding), else by the learner's own ``decision_function`` (bit for bit), and handed to the
    library's own ``predict`` and probability functions. ``variances``: also keep the margin
    variances (``/suggest``'s ``mistake``), from the same compiled pass when it applies."""
    learner = learner_of(model)
    if isinstance(learner, MultiLabel):  # the tags (indicator rows), each label's score and probability
        X = as_matrix(X)
        proba = np.asarray(learner.predict_proba(X), dtype=float)
        return Scored(np.asarray(learner.indicator_of(proba), dtype=bool),
                      np.asarray(learner.decision_function(X), dtype=float), proba)
    scaling = getattr(model, "probability_calibration_", None)  # textcw train's calibrated default
    needs = _needs_variances(learner, scaling)
    compiled = scores_and_variances(learner, X, variances=needs or variances)
    if compiled is not None:
        scores, variances = compiled
    else:
        X = as_matrix(X)
        scores, variances = None, None
        if hasattr(learner, "decision_function"):
            scores = np.asarray(learner.decision_function(X), dtype=float)
    known = learner if scores is None else _Known(learner, X, scores, variances)
    # for the learner's own methods (``known`` answers for ``X`` from the scores), built once
    matrix = functools.cache(lambda: as_matrix(X))

    if scores is not None and type(learner).predict is OnlineLinearClassifier.predict:
        predicted = OnlineLinearClassifier.predict(known, X)  # the argmax of the decision scores
    else:
        predicted = learner.predict(matrix())
    if isinstance(scaling, TemperatureScaling):
        # a temperature scales the decision scores (and, standardized, the margin variance); a
        # document with no known feature gets the calibration's label and probabilities
        predicted = scaling.predict(known, X, predicted)
        proba = scaling.predict_proba(known, X)
    elif scaling is not None:
        proba = scaling.predict_proba(learner, matrix())
    elif needs and variances is not None:  # a Gaussian learner's own probabilities
        proba = GaussianLinearClassifier.predict_proba(known, X)  # Phi / quadrature of the same numbers
    else:
        proba = learner.predict_proba(matrix()) if hasattr(learner, "predict_proba") else None
    return Scored(np.asarray(predicted), scores, None if proba is None else np.asarray(proba, dtype=float), variances)


def prediction_rows(scored: Scored, labels: LabelMap) -> list[dict]:
    """Label, probabilities, raw decision values and margin of each row.

    ``decision`` is the learner's ``decision_function``: one number for a binary model
    (positive means ``classes[1]``), one per class otherwise; ``margin`` is the distance of the
    winning score from the decision boundary (``|decision|`` for binary, the top score minus
    the runner-up otherwise). Numbers that are not finite are ``null`` (JSON has no NaN).
    Built a batch at a time (``tolist``, ``zip``): a row per class per document in Python was
    two thirds of a batch's prediction.
    """
    names = [str(c) for c in labels.classes]
    tags = scored.predicted.ndim == 2  # a multi-label model's indicator rows: the tags, in the order of classes
    if tags:
        rows = [{"label": [labels.classes[j] for j in np.flatnonzero(row)], "probabilities": None, "decision": None,
                 "margin": None} for row in scored.predicted]
    else:
        rows = [{"label": jsonable_label(label), "probabilities": None, "decision": None, "margin": None}
                for label in scored.predicted]
    if scored.proba is not None:
        for row, values in zip(rows, _finite(scored.proba)):
            row["probabilities"] = dict(zip(names, values))
    scores = scored.scores
    if scores is not None and scores.ndim == 1:
        for row, value, margin in zip(rows, _finite(scores), _finite(np.abs(scores))):
            row["decision"], row["margin"] = value, margin
    elif scores is not None:
        top = np.sort(scores, axis=1)
        margins = _finite(top[:, -1] - top[:, -2]) if scores.shape[1] > 1 and not tags else [None] * len(rows)
        for row, values, margin in zip(rows, _finite(scores), margins):
            row["decision"], row["margin"] = dict(zip(names, values)), margin
    return rows


def predictions(model: Pipeline, X, labels: LabelMap) -> list[dict]:
    """:func:`prediction_rows` of :func:`score` (one call, for callers without a lock to leave)."""
    return prediction_rows(score(model, X), labels)


def _finite(values: np.ndarray) -> list:
    """``values.tolist()`` (Python floats), with ``None`` for any value that is not finite."""
    out = values.tolist()
    if np.isfinite(values).all():
        return out
    if values.ndim == 1:
        return [v if math.isfinite(v) else None for v in out]
    return [[v if math.isfinite(v) else None for v in row] for row in out]


def model_digest(model: Pipeline) -> str:
    """sha256 of the learner's classes and state arrays (names, dtypes, shapes and bytes): equal
    digests mean bit-for-bit equal models. A multi-label model is digested label by label with
    its calibration (:func:`textcw_serve.tagsets.multilabel_digest`); learners without
    ``state_dict`` by their pickle."""
    learner = learner_of(model)
    if isinstance(learner, MultiLabel):
        return multilabel_digest(learner, _digest_learner)
    digest = hashlib.sha256()
    _digest_learner(digest, learner)
    return digest.hexdigest()


def _digest_learner(digest, learner) -> None:
    if hasattr(learner, "state_dict"):
        state = learner.state_dict()
        digest.update(json.dumps([jsonable_label(c) for c in state["classes"]]).encode())
        for name in sorted(state["arrays"]):
            array = np.ascontiguousarray(state["arrays"][name])
            digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
            digest.update(array.tobytes())
    else:
        import io

        import joblib

        buffer = io.BytesIO()
        joblib.dump(learner, buffer)
        digest.update(buffer.getvalue())
