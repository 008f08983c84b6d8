"""``online``: cumulative mistakes over a single pass (predict, then update).

The online measure of the papers (NIPS 2008 Figure 2a, AROW 2013 Figures 5 and 7): every
document is first predicted by the current model, counted if wrong, then learned from. The
featurizer is fitted on the whole stream; for these learners that equals a vocabulary growing
with the stream, since a feature not seen yet has zero mean and its initial variance either way.
Mistakes are read from the learners' own online count (``mistakes_`` after each ``partial_fit``
call); another learner is scored by predicting each chunk before learning from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from textcw.errors import ParameterError
from textcw.evaluation.data import featurize, load_task
from textcw.evaluation.noise import check_noise, corrupt_labels
from textcw.evaluation.report import Report
from textcw.evaluation.specs import as_learner, as_task, check_specs
from textcw.evaluation.training import build, one_thread
from textcw.learners.base import OnlineLinearClassifier
from textcw.plugins import deprecated_registries, in_registries

POINTS = 100


@dataclass
class OnlineCurve(Report):
    """Cumulative mistakes of one learner after ``positions[i]`` documents, mean over runs."""

    learner: str
    positions: list[int]
    mistakes: list[float]
    std_final: float | None = None


@dataclass
class OnlineReport(Report):
    task: str
    n_docs: int
    runs: int
    noise: float = 0.0
    curves: list[OnlineCurve] = field(default_factory=list)


def cumulative_mistakes(est, X, y, *, points: int = POINTS) -> tuple[list[int], list[int]]:
    """One pass of ``est`` over ``(X, y)`` in order; ``(positions, cumulative mistakes)``.

    The stream is fed in about ``points`` chunks. textcw's learners count each document's
    mistake before updating on it, so the count is exact at every chunk boundary; another
    learner is scored by predicting each chunk before learning from it (its first chunk, with
    nothing learned yet, counts as all wrong). The first chunk runs at least until both labels
    have been seen, because a first ``partial_fit`` call needs two classes.
    """
    if not hasattr(est, "partial_fit"):
        raise ParameterError(f"{type(est).__name__} has no partial_fit, so it cannot learn online")
    y = np.asarray(y)
    n = y.shape[0]
    classes = np.unique(y)
    if classes.size < 2:
        raise ParameterError("an online run needs documents of at least two labels")
    second_label = int(np.argmax(y != y[0]))  # first position whose label differs from the first
    bounds = np.linspace(0, n, min(points, n) + 1).round().astype(int)
    bounds = np.unique(np.concatenate([[0], bounds[bounds > second_label]]))
    own_count = _counts_mistakes(est)
    positions, cumulative, total = [], [], 0
    for start, stop in zip(bounds[:-1], bounds[1:]):
        Xc, yc = X[start:stop], y[start:stop]
        if own_count:
            est.partial_fit(Xc, yc, classes=classes if start == 0 else None)
            total += int(est.mistakes_[-1])
        else:
            total += int(np.sum(est.predict(Xc) != yc)) if start > 0 else int(stop - start)
            est.partial_fit(Xc, yc, classes=classes if start == 0 else None)
        positions.append(int(stop))
        cumulative.append(total)
    return positions, cumulative


def progressive_predictions(est, X, y, classes) -> np.ndarray:
    """One online pass of ``est`` over ``(X, y)`` in order, one document at a time: each
    document is predicted by the model learned from the documents before it, then learned
    (progressive validation, Blum, Kalai and Langford, COLT 1999). Returns the predictions.

    The first document comes before any model: it counts as a mistake (its prediction is
    recorded as the first of ``classes`` that is not its label). A prediction is ``predict``'s,
    so a document the model scores exactly at a tie is predicted as ``predict`` breaks ties.
    """
    if not hasattr(est, "partial_fit"):
        raise ParameterError(f"{type(est).__name__} has no partial_fit, so it cannot learn online")
    y = np.asarray(y)
    classes = np.asarray(classes)
    if y.shape[0] == 0:
        raise ParameterError("an online pass needs at least one document")
    predicted = np.empty(y.shape[0], dtype=y.dtype if y.dtype != object else object)
    predicted[0] = classes[classes != y[0]][0] if np.any(classes != y[0]) else y[0]
    est.partial_fit(X[0:1], y[0:1], classes=classes)
    for i in range(1, y.shape[0]):
        row = X[i:i + 1]
        predicted[i] = est.predict(row)[0]
        est.partial_fit(row, y[i:i + 1])
    return predicted


def _counts_mistakes(est) -> bool:
    return isinstance(est, OnlineLinearClassifier)


def online(*, points: int = POINTS, runs: int = 1, noise: float = 0.0, seed: int = 0, registries=None):
    """Evaluator factory: ``run(task, learners, settings=None) -> OnlineReport``.

    Each run streams the task's pool once in a different seeded order; ``noise`` flips the
    streamed labels, and mistakes are counted against the labels the learner sees (AROW 2013
    Figure 5). ``settings`` maps ``(learner label, noise)`` to ``(params, passes)``; passes are
    ignored (one pass).
    """
    check_noise(noise)

    @one_thread
    def run(task, learners, settings=None) -> OnlineReport:
        task = as_task(task)
        learners = [as_learner(s) for s in learners]
        check_specs([task], learners, None)
        data = load_task(task, seed=seed)
        everything = np.arange(len(data))
        X, _ = featurize(data, everything, everything[:1])
        labels = data.labels
        curves = {spec.label: [] for spec in learners}
        for r in range(runs):
            rng = np.random.RandomState([seed, r])
            order = rng.permutation(len(data))
            truth = labels[order]
            y = corrupt_labels(truth, noise, data.classes, rng)[0] if noise > 0 else truth
            for spec in learners:
                params, _ = (settings or {}).get((spec.label, noise), ({}, None))
                est = build(spec, params, seed=seed + r)
                curves[spec.label].append(dict(zip(*cumulative_mistakes(est, X[order], y, points=points))))
        out = []
        for label, counts in curves.items():
            # A run's first point waits for its second label, so runs may start at different
            # positions: the mean is taken where every run has a point (always the last one).
            positions = sorted(set.intersection(*(set(c) for c in counts)))
            rows = np.asarray([[c[k] for k in positions] for c in counts], dtype=float)
            out.append(OnlineCurve(label, positions, rows.mean(axis=0).tolist(),
                                   float(rows[:, -1].std(ddof=1)) if runs > 1 else None))
        return OnlineReport(task.label, len(data), runs, noise, out)

    return in_registries(deprecated_registries(registries, "textcw.evaluation.evaluators.online"), run)
