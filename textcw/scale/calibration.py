"""Calibrated probabilities for a stream: a temperature fitted to its progressive-validation scores.

A stream is read once, so its probabilities cannot be calibrated on a held-out pass; but every
chunk is scored by the model before the model learns it, which is progressive validation (Blum,
Kalai and Langford, COLT 1999): honest scores of unseen documents, as
:class:`textcw.learners.calibrated.Calibrated` records them on the first pass of ordinary
training. :class:`HonestScores` keeps those scores and :meth:`HonestScores.fit` fits one
temperature to them (:func:`textcw.learners.temperature.fit_temperature`: ``softmax(z / T)`` of
the decision scores over the length of the weights of the model that gave them, or, for the
Gaussian learners, of the scores over their standard deviation, whichever has the lower
log-loss: a stream's model grows as it learns, so its earlier scores are on a shorter scale),
so the model's ``predict_proba`` is temperature-scaled and its most probable label is still the
label ``predict`` returns.

Which scores: only those of the first pass (later passes score documents the model has learned),
and not those of the self-tuning chunks (:mod:`textcw.scale.tuning`) once later ones exist: there
the candidates are still compared, and the winner's scores on the very documents that chose it
are not honest. Of the rest, the most recent :data:`MAX_HONEST_SCORES` documents are kept (by
the most trained models, the closest to the final one), so memory stays bounded however long
the stream is.

Without it the stream model gives the learner's own probabilities: for the Gaussian learners
``Phi(mu.x / sqrt(x' Sigma x))``, the probability of the label under the weights' posterior,
which is not fitted to how often the labels are right. On synthetic-text, 100,000 documents,
AROW (self-tuned to ``r = 31``, a slowly shrinking covariance) reaches accuracy 0.81 while its
most probable label gets 0.59 on average: an expected calibration error of 0.22, against 0.02
with the temperature.
"""

from __future__ import annotations

import warnings
from collections import deque

import numpy as np

from textcw.learners.calibrated import MIN_HONEST_SCORES
from textcw.learners.temperature import (
    CalibrationWarning,
    TemperatureScaling,
    fit_temperature,
    informative_scores,
    weight_norm,
)

__all__ = ["MAX_HONEST_SCORES", "RECORD", "HonestScores"]

# Documents whose scores are kept (the latest): a temperature is one number, which tens of
# thousands of scores fix well; fitting it costs about 0.15 s of a core per 50,000 (binary).
MAX_HONEST_SCORES = 50_000
RECORD = "stream"  # TemperatureScaling.record of a stream's temperature


class HonestScores:
    """The pre-update scores of a stream's chunks, at most ``limit`` documents (plus one chunk)."""

    def __init__(self, limit: int = MAX_HONEST_SCORES, total: int | None = None):
        self.limit = limit
        self.total = total  # documents of the pass, when known: earlier chunks are not scored
        self._parts: deque = deque()  # (scores, variances or None, labels, tuning, weight length or None)
        self._held = 0

    def add(self, model, X, labels, *, tuning: bool, stop: int | None = None) -> None:
        """Score chunk ``(X, labels)`` with ``model`` as it is before learning it (``tuning``:
        the model is still comparing self-tuning candidates). The first chunk, before any
        update, is skipped: an empty model scores every document 0. So is a chunk ending at
        document ``stop`` of a pass of ``total`` documents with ``limit`` or more after it:
        it would leave the window before the end, so its scores are not computed at all."""
        if not hasattr(model, "classes_") or X.shape[0] == 0:
            return
        if self.total is not None and stop is not None and self.total - stop >= self.limit:
            return
        if not tuning and self._parts and self._parts[-1][3]:
            self._parts.clear()  # the tuning chunks' scores give way to honest ones
            self._held = 0
        scores = np.asarray(model.decision_function(X), dtype=float)
        variances = np.asarray(model.margin_variance(X), dtype=float) if hasattr(model, "margin_variance") else None
        self._parts.append((scores, variances, np.asarray(labels), tuning, weight_norm(model)))
        self._held += X.shape[0]
        while self._held - len(self._parts[0][2]) >= self.limit:
            self._held -= len(self._parts.popleft()[2])

    @property
    def n_documents(self) -> int:
        return self._held

    def fit(self, model) -> TemperatureScaling | None:
        """The temperature of ``model``'s probabilities, or ``None`` when no scores that tell
        the labels apart were recorded (a stream of one chunk)."""
        if not self._parts:
            return None
        scores = np.concatenate([p[0] for p in self._parts])
        informative = informative_scores(scores)
        if informative == 0:
            return None
        if informative < MIN_HONEST_SCORES:
            warnings.warn(
                f"the stream's temperature rests on {informative} honest scores (documents scored by a "
                f"model that had not learned them; fewer than {MIN_HONEST_SCORES}), so its probabilities "
                "are uncertain; stream more documents, or smaller chunks, for reliable probabilities",
                CalibrationWarning, stacklevel=3,
            )
        gaussian = all(p[1] is not None for p in self._parts)
        variances = np.concatenate([p[1] for p in self._parts]) if gaussian else None
        labels = np.concatenate([p[2] for p in self._parts])
        classes = np.asarray(model.classes_)
        position = {label: i for i, label in enumerate(classes.tolist())}
        target = np.fromiter((position[label] for label in labels.tolist()), dtype=np.int64, count=len(labels))
        linear = all(p[4] is not None for p in self._parts)
        norms = np.concatenate([np.full(len(p[2]), p[4]) for p in self._parts]) if linear else None
        return fit_temperature(scores, variances, target, margin="auto", record=RECORD, norms=norms)
