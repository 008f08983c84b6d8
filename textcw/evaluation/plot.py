"""Figures of evaluation reports, PNG or SVG (matplotlib, the ``plot`` extra; imported only when
drawing). The format follows the file's suffix; :func:`suite_figures` writes each figure in every
format of ``formats``.

- learning curves: test accuracy after each pass (JMLR 2012 Figures 3-4);
- cumulative online mistakes (NIPS 2008 Figure 2a, AROW 2013 Figure 5);
- noise curves: mean test error against the label-noise rate (AROW 2013 Figure 9);
- active learning: test accuracy against labels used, one line per strategy, with the accuracy
  of the model trained on the whole pool and 95 % of it (the ``active`` design);
- reliability: observed accuracy against the probability a learner gave its prediction, in
  bins of width 0.1 (EMNLP 2009 Figure 2, fourth panel), with the number of documents per bin.

Legends stand to the right of the axes, never over the lines: with eight learners a legend
inside the axes hides the curves it names.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from textcw.atomic import atomic_output
from textcw.errors import InputError, TextcwError

BINS = 10
FORMATS = ("png", "svg")  # the formats a figure can be written in
# The row heading of a design whose rows are "STRATEGY N" plus a last row "all" (the active design)
STRATEGY_ROWS = "strategy, labels"
RELIABILITY_AXIS = ("probability of the predicted label\n"
                    "(the learner's own predict_proba; models saved by textcw train are calibrated)")


def require_matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise TextcwError("plots need matplotlib: pip install 'textcw[plot]'") from None
    matplotlib.use("Agg")  # files only: never open a window, work without a display
    import matplotlib.pyplot as plt

    return plt


def slug(text: str) -> str:
    """A file-name-safe version of a task or learner label."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "figure"


def figure_format(path) -> str:
    """The format ``path``'s suffix names (``png`` without a suffix); an unknown one is refused."""
    suffix = Path(path).suffix.lstrip(".").lower() or "png"
    if suffix not in FORMATS:
        raise InputError(f"cannot write a figure as {Path(path).name}: the suffix must be one of "
                         + ", ".join(f".{f}" for f in FORMATS))
    return suffix


def save_figure(fig, path) -> Path:
    """Write ``fig`` to ``path`` (PNG, or SVG for a ``.svg`` suffix) atomically, and close it.

    The bounding box is the drawing's own (``bbox_inches="tight"``), so a legend placed beside
    the axes is part of the file.
    """
    path = Path(path)
    fmt = figure_format(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    with atomic_output(path) as fh:
        fig.savefig(fh, dpi=110, format=fmt, bbox_inches="tight")
    fig.clf()
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def legend_beside(ax) -> None:
    """The legend to the right of ``ax``, outside it, so that it hides no line."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)


def plot_learning_curves(accuracy: dict[str, list[float]], path, *, title: str = "") -> Path:
    """Test accuracy (%) after each pass, one line per learner."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    for label, values in accuracy.items():
        ax.plot(range(1, len(values) + 1), values, marker="o", markersize=3, label=label)
    ax.set_xlabel("passes over the training data")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    legend_beside(ax)
    return save_figure(fig, path)


def plot_online(curves, path, *, title: str = "") -> Path:
    """Cumulative mistakes against documents seen (``curves``: :class:`OnlineCurve` list)."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    for c in curves:
        ax.plot(c.positions, c.mistakes, label=c.learner)
    ax.set_xlabel("documents seen")
    ax.set_ylabel("cumulative mistakes")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    legend_beside(ax)
    return save_figure(fig, path)


def plot_active(curves: dict[str, tuple[list[int], list[float]]], ceiling: float, path, *, title: str = "") -> Path:
    """Test accuracy (%) against labels used, one line per strategy (``curves``: strategy ->
    (labels, accuracies)), with the whole pool's accuracy ``ceiling`` and 95 % of it."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    for strategy, (labels, values) in curves.items():
        ax.plot(labels, values, marker="o", markersize=3, label=strategy)
    ax.axhline(ceiling, color="black", linewidth=0.8, label="whole pool")
    ax.axhline(0.95 * ceiling, color="black", linewidth=0.8, linestyle=":", label="95 % of it")
    ax.set_xlabel("labels used")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    legend_beside(ax)
    return save_figure(fig, path)


def strategy_curves(report, task: str, learner: str) -> tuple[dict, float | None]:
    """``({strategy: (labels, accuracies)}, whole-pool accuracy)`` of one task and learner of a
    report with :data:`STRATEGY_ROWS` (accuracy = 100 - mean error, in %)."""
    curves: dict[str, tuple[list[int], list[float]]] = {}
    ceiling = None
    for row in report.rows(task):
        cell = report.cell(task, learner, row=row)
        if cell is None or cell.mean_error is None:
            continue
        if row == "all":
            ceiling = 100.0 - cell.mean_error
            continue
        strategy, _, n = row.rpartition(" ")
        labels, values = curves.setdefault(strategy, ([], []))
        labels.append(int(n))
        values.append(100.0 - cell.mean_error)
    return curves, ceiling


def plot_noise(levels: list[float], errors: dict[str, list[float]], path, *, title: str = "") -> Path:
    """Mean test error (%) against the training label-noise rate."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(7.0, 3.8))
    for label, values in errors.items():
        ax.plot([100 * p for p in levels], values, marker="o", markersize=3, label=label)
    ax.set_xlabel("training labels flipped (%)")
    ax.set_ylabel("mean test error (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    legend_beside(ax)
    return save_figure(fig, path)


def reliability(confidence, correct, bins: int = BINS):
    """``(mean confidence, accuracy, count)`` per bin of the predicted label's probability.

    Bins are ``[0, 0.1), ..., [0.9, 1]``; empty bins give NaN accuracy and confidence.
    """
    confidence = np.asarray(confidence, dtype=float)
    correct = np.asarray(correct, dtype=float)
    which = np.clip((confidence * bins).astype(int), 0, bins - 1)
    count = np.bincount(which, minlength=bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.bincount(which, weights=correct, minlength=bins) / count
        mean_conf = np.bincount(which, weights=confidence, minlength=bins) / count
    return mean_conf, accuracy, count


def plot_reliability(series: dict[str, tuple[list, list]], path, *, title: str = "", bins: int = BINS,
                     without: Sequence[str] = (), xlabel: str = RELIABILITY_AXIS) -> Path:
    """Reliability diagram: ``series`` maps a label to ``(confidence, correct)`` per document.

    Both panels show the whole probability axis, 0 to 1 (a binary learner's predicted label has
    probability at least 1/2, and the empty left half says so). Every learner asked for is
    accounted for: one line and one bar series per entry of ``series`` (a learner whose
    documents all fall in one bin is one point), and the learners of ``without``, which give no
    probabilities, named under the figure. ``xlabel`` says which probabilities are drawn.
    """
    plt = require_matplotlib()
    if not series:
        raise InputError("no learner with probabilities to draw a reliability diagram for"
                         + (f" (no probabilities: {', '.join(without)})" if without else ""))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7.0, 5.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.3]})
    top.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfectly calibrated")
    width = 1.0 / bins / (len(series) + 1)
    for k, (label, (confidence, correct)) in enumerate(series.items()):
        mean_conf, accuracy, count = reliability(confidence, correct, bins)
        shown = count > 0
        line, = top.plot(mean_conf[shown], accuracy[shown], marker="o", markersize=4, label=label)
        left = np.arange(bins) / bins + k * width
        bottom.bar(left, count, width=width, align="edge", label=label, color=line.get_color())
    top.set_ylabel("observed accuracy")
    top.set_ylim(0, 1.02)
    top.set_title(title)
    top.grid(alpha=0.3)
    legend_beside(top)
    bottom.set_xlim(0, 1)
    bottom.set_xticks(np.linspace(0, 1, 6))
    bottom.set_xticks(np.linspace(0, 1, 11), minor=True)  # the bin edges
    # What users deploy from `textcw train` is calibrated (a temperature fitted in training);
    # evaluate scores each learner's own predict_proba, so the axis says which one is drawn.
    bottom.set_xlabel(xlabel)
    bottom.set_ylabel("documents")
    bottom.set_yscale("log")
    bottom.set_ylim(bottom=0.7)  # bars rise from below one document, so a bin of one shows
    bottom.grid(alpha=0.3)
    if without:
        fig.text(0.01, 0.005, "no probabilities: " + ", ".join(without), fontsize=8, ha="left", va="bottom")
        fig.subplots_adjust(bottom=0.14)
    return save_figure(fig, path)


def suite_figures(report, directory, *, online_reports=(), formats: Sequence[str] = ("png",)) -> list[Path]:
    """Every figure a :class:`SuiteReport` has data for, once per format of ``formats`` (``png``,
    ``svg``); returns the paths written."""
    directory = Path(directory)
    formats = [figure_format(f"figure.{f}") for f in formats]
    written = []

    def each_format(draw, stem: str, *args, **kwargs) -> None:
        for fmt in formats:
            written.append(draw(*args, directory / f"{stem}.{fmt}", **kwargs))

    for task in report.tasks:
        for p in report.noise:
            cells = [report.cell(task.label, s.label, p) for s in report.learners]
            suffix = "" if p == 0 else f"-noise{p:g}"
            curves = {c.learner: [100.0 - e for e in c.curve] for c in cells if c is not None and c.curve}
            if curves:
                each_format(plot_learning_curves, f"curve-{slug(task.label)}{suffix}", curves,
                            title=f"{task.label}: test accuracy after each pass" + (f" (noise {p:g})" if p else ""))
            done = [c for c in cells if c is not None]
            series = {c.learner: _confidence_series(c) for c in done if _has_confidence(c)}
            if series:
                each_format(plot_reliability, f"reliability-{slug(task.label)}{suffix}", series,
                            title=f"{task.label}: reliability" + (f" (noise {p:g})" if p else ""),
                            without=[c.learner for c in done if c.learner not in series])
    if getattr(report, "row_title", "") == STRATEGY_ROWS:
        for task in report.tasks:
            for s in report.learners:
                curves, ceiling = strategy_curves(report, task.label, s.label)
                if curves and ceiling is not None:
                    each_format(plot_active, f"active-{slug(task.label)}-{slug(s.label)}", curves, ceiling,
                                title=f"{task.label}, {s.label}: accuracy against labels used")
    if len(report.noise) > 1:
        errors = {}
        for s in report.learners:
            values = []
            for p in report.noise:
                row = report.errors(p)
                done = [row[t][s.label] for t in row if s.label in row[t]]
                values.append(float(np.mean(done)) if done else float("nan"))
            errors[s.label] = values
        each_format(plot_noise, "noise", report.noise, errors, title="mean test error over the tasks")
    for online in online_reports:
        each_format(plot_online, f"online-{slug(online.task)}", online.curves,
                    title=f"{online.task}: cumulative mistakes, one pass")
    return written


def _has_confidence(cell) -> bool:
    return any(c is not None for c in cell.confidence)


def _confidence_series(cell):
    keep = [i for i, c in enumerate(cell.confidence) if c is not None and cell.outcomes[i] != "."]
    return [cell.confidence[i] for i in keep], [cell.outcomes[i] == "1" for i in keep]
