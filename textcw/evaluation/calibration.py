"""``calibration``: how well a learner's label probabilities describe its own accuracy.

EMNLP 2009 (section 7, Figure 2) compares the label distributions of multi-class CW, which come
from the Gaussian over weights (``predict_proba``: quadrature, or the papers' sampling), with
those of maxent:

- the **normalized prediction entropy** ``-(1/m) sum_i sum_z P(z|x_i) log P(z|x_i) / log K``
  (first panel: error against entropy; CW's distributions are less peaked than maxent's);
- the **prediction probability** ``P(y_hat | x)`` of the predicted label, binned as
  ``[0, 0.1), [0.1, 0.2), ..., [0.9, 1]``: the number of test documents per bin (second panel),
  each bin's mistakes as a share of all test documents, so that the bars add up to the test
  error (third panel), and the accuracy within each bin (fourth panel, as conditional error);
- the average probability given to correct and to incorrect predictions (the paper: 0.75 and
  0.44 for CW against 0.83 and 0.56 for maxent on Enron B).

The report adds the expected calibration error, ``sum_b (n_b / m) |accuracy_b - mean
probability_b|``. :func:`plot_calibration` draws the four panels for one or more reports
(matplotlib, imported only when drawing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from textcw.errors import InputError, ParameterError
from textcw.evaluation import plot as figures
from textcw.evaluation.report import Report
from textcw.metrics import BINS, expected_calibration_error, probability_bin_stats
from textcw.pipeline import load_corpus, make_learner, train
from textcw.plugins import deprecated_registries, in_registries

__all__ = ["BINS", "CalibrationReport", "ProbabilityBin", "calibration", "calibration_report",
           "expected_calibration_error", "normalized_entropy", "plot_calibration", "probability_bins"]


@dataclass
class ProbabilityBin(Report):
    """Test documents whose prediction probability lies in ``[low, high)`` (the last bin: ``[low, 1]``).

    Attributes
    ----------
    count : int
        Documents in the bin.
    mistakes : int
        Wrong predictions among them.
    accuracy : float or None
        ``1 - mistakes / count``; None for an empty bin.
    mean_probability : float or None
        Mean prediction probability in the bin; None for an empty bin.
    error_share : float
        ``mistakes / n_test``: the bin's part of the total test error (EMNLP 2009 Figure 2, third
        panel); the shares add up to the test error.
    """

    low: float
    high: float
    count: int
    mistakes: int
    accuracy: float | None
    mean_probability: float | None
    error_share: float


@dataclass
class CalibrationReport(Report):
    """Calibration of one learner's label probabilities on a test set."""

    learner: str
    task: str
    n_test: int
    n_classes: int
    accuracy: float
    normalized_entropy: float
    mean_probability_correct: float | None
    mean_probability_incorrect: float | None
    expected_calibration_error: float
    bins: list[ProbabilityBin] = field(default_factory=list)
    params: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.learner

    def plot(self, path, *, title: str = "") -> Path:
        """The four panels of EMNLP 2009 Figure 2 for this report (see :func:`plot_calibration`)."""
        return plot_calibration([self], path, title=title)


def normalized_entropy(proba) -> float:
    """Mean entropy of the rows of ``proba`` divided by ``log K`` (1: uniform, 0: certain)."""
    proba = np.asarray(proba, dtype=float)
    if proba.ndim != 2 or proba.shape[1] < 2:
        raise InputError(f"probabilities must have shape (n, K) with K >= 2; got {proba.shape}")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(proba > 0, proba * np.log(proba), 0.0)
    return float(-terms.sum(axis=1).mean() / np.log(proba.shape[1]))


def probability_bins(confidence, correct, bins: int = BINS) -> list[ProbabilityBin]:
    """Bin documents by prediction probability into ``bins`` equal-width bins of ``[0, 1]``
    (:func:`textcw.metrics.probability_bin_stats`, the bins of the expected calibration error)."""
    return [ProbabilityBin(**stats) for stats in probability_bin_stats(confidence, correct, bins)]


def calibration_report(proba, y_true, classes, *, predicted=None, bins: int = BINS, learner: str = "",
                       task: str = "", params: dict | None = None) -> CalibrationReport:
    """The calibration of ``proba`` (columns in the order of ``classes``) against ``y_true``.

    ``predicted`` are the learner's predictions (default: the most probable label); the
    prediction probability of a document is the probability of its predicted label. For CW the
    prediction is the label with the largest mean score, which is almost always the most
    probable one too.
    """
    proba = np.asarray(proba, dtype=float)
    classes = np.asarray(classes)
    y_true = np.asarray(y_true)
    if proba.ndim != 2 or proba.shape != (y_true.shape[0], classes.shape[0]):
        raise InputError(
            f"probabilities of shape {proba.shape} do not match {y_true.shape[0]} documents and "
            f"{classes.shape[0]} classes"
        )
    if y_true.shape[0] == 0:
        raise InputError("no test documents to measure calibration on")
    if not np.allclose(proba.sum(axis=1), 1.0, atol=1e-6):
        raise InputError("probability rows must sum to 1")
    index = np.argmax(proba, axis=1) if predicted is None else _positions(classes, predicted)
    confidence = proba[np.arange(proba.shape[0]), index]
    correct = classes[index] == y_true
    binned = probability_bins(confidence, correct, bins)
    n = y_true.shape[0]
    ece = expected_calibration_error(confidence, correct, bins)
    return CalibrationReport(
        learner=learner, task=task, n_test=int(n), n_classes=int(classes.shape[0]),
        accuracy=float(correct.mean()), normalized_entropy=normalized_entropy(proba),
        mean_probability_correct=float(confidence[correct].mean()) if correct.any() else None,
        mean_probability_incorrect=float(confidence[~correct].mean()) if (~correct).any() else None,
        expected_calibration_error=float(ece), bins=binned, params=dict(params or {}),
    )


def _positions(classes, labels) -> np.ndarray:
    labels = np.asarray(labels)
    order = np.argsort(classes)
    found = np.searchsorted(classes[order], labels)
    found = np.clip(found, 0, classes.shape[0] - 1)
    index = order[found]
    if not np.array_equal(classes[index], labels):
        raise InputError("predicted labels must be among the classes")
    return index


def calibration(*, bins: int = BINS, seed: int | None = 0, registries=None):
    """Evaluator factory: ``run(corpus, learner, *, params=None, epochs=None, featurizer=None)``.

    ``run`` trains ``learner`` (a registered name) on the training split of ``corpus`` (for
    example ``"newsgroups"``) as :func:`textcw.pipeline.train` does, and returns the
    :class:`CalibrationReport` of its ``predict_proba`` on the test split. A learner without
    probabilities (the first-order ones) is refused.
    """
    if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1:
        raise ParameterError(f"bins={bins!r} is invalid; bins must be an integer >= 1")

    def run(corpus: str, learner: str, *, params: dict | None = None, epochs: int | None = None,
            featurizer: str | None = None) -> CalibrationReport:
        if not hasattr(make_learner(learner, **(params or {})), "predict_proba"):
            raise ParameterError(
                f"learner {learner!r} gives no label probabilities (no predict_proba); calibration "
                "needs a probabilistic learner such as cw-var, cw-stdev, arow or maxent"
            )
        result = train(corpus, learner, params=params, epochs=epochs, seed=seed, featurizer=featurizer)
        test = load_corpus(corpus, "test")
        model = result.model
        return calibration_report(model.predict_proba(test.data), test.labels, model.classes_,
                                  predicted=model.predict(test.data), bins=bins, learner=learner,
                                  task=corpus, params=result.params)

    return in_registries(deprecated_registries(registries, "textcw.evaluation.evaluators.calibration"), run)


def plot_calibration(reports: list[CalibrationReport], path, *, title: str = "") -> Path:
    """EMNLP 2009 Figure 2 for one or more reports, at ``path`` (PNG, or SVG for ``.svg``).

    Panels: test error against normalized entropy (one point per report); documents per
    prediction-probability bin; each bin's share of the test error; accuracy per bin against its
    mean probability (a reliability diagram, with the diagonal of perfect calibration). The three
    probability panels show the whole axis, 0 to 1; every report is in the legend, beside the
    panels, even one without a filled bin.
    """
    plt = figures.require_matplotlib()
    if not reports:
        raise InputError("no calibration reports to plot")
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    n_bins = len(reports[0].bins)
    width = 1.0 / n_bins / (len(reports) + 1)
    for r, report in enumerate(reports):
        label = report.label or f"report {r + 1}"
        axes[0].scatter([report.normalized_entropy], [1.0 - report.accuracy], label=label)
        left = np.array([b.low for b in report.bins]) + r * width
        axes[1].bar(left, [b.count for b in report.bins], width=width, align="edge", label=label)
        axes[2].bar(left, [b.error_share for b in report.bins], width=width, align="edge", label=label)
        filled = [b for b in report.bins if b.count]
        axes[3].plot([b.mean_probability for b in filled], [b.accuracy for b in filled], marker="o",
                     markersize=4, label=label)
    axes[0].set_xlabel("normalized prediction entropy")
    axes[0].set_ylabel("test error")
    axes[1].set_xlabel("prediction probability")
    axes[1].set_ylabel("test documents")
    axes[2].set_xlabel("prediction probability")
    axes[2].set_ylabel("share of test error")
    axes[3].plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="calibrated")
    for ax in axes[1:]:
        ax.set_xlim(0, 1)
    axes[3].set_ylim(0, 1.02)
    axes[3].set_xlabel("prediction probability")
    axes[3].set_ylabel("accuracy in bin")
    for ax in axes:
        ax.grid(alpha=0.3)
    figures.legend_beside(axes[3])
    if title:
        fig.suptitle(title)
    return figures.save_figure(fig, path)
