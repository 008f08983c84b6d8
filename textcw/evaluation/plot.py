"""PNG figures of evaluation reports (matplotlib, the ``plot`` extra; imported only when drawing).

- learning curves: test accuracy after each pass (JMLR 2012 Figures 3-4);
- cumulative online mistakes (NIPS 2008 Figure 2a, AROW 2013 Figure 5);
- noise curves: mean test error against the label-noise rate (AROW 2013 Figure 9);
- reliability: observed accuracy against the probability a learner gave its prediction, in
  bins of width 0.1 (EMNLP 2009 Figure 2, fourth panel), with the number of documents per bin.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from textcw._atomic import atomic_output
from textcw.errors import TextcwError

BINS = 10


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


def save_figure(fig, path) -> Path:
    """Write ``fig`` to ``path`` (PNG unless the suffix names another format) atomically, and close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    with atomic_output(path) as fh:
        fig.savefig(fh, dpi=110, format=path.suffix.lstrip(".") or "png")
    fig.clf()
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def plot_learning_curves(accuracy: dict[str, list[float]], path, *, title: str = "") -> Path:
    """Test accuracy (%) after each pass, one line per learner."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for label, values in accuracy.items():
        ax.plot(range(1, len(values) + 1), values, marker="o", markersize=3, label=label)
    ax.set_xlabel("passes over the training data")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def plot_online(curves, path, *, title: str = "") -> Path:
    """Cumulative mistakes against documents seen (``curves``: :class:`OnlineCurve` list)."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for c in curves:
        ax.plot(c.positions, c.mistakes, label=c.learner)
    ax.set_xlabel("documents seen")
    ax.set_ylabel("cumulative mistakes")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


def plot_noise(levels: list[float], errors: dict[str, list[float]], path, *, title: str = "") -> Path:
    """Mean test error (%) against the training label-noise rate."""
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(5.5, 3.8))
    for label, values in errors.items():
        ax.plot([100 * p for p in levels], values, marker="o", markersize=3, label=label)
    ax.set_xlabel("training labels flipped (%)")
    ax.set_ylabel("mean test error (%)")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
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


def plot_reliability(series: dict[str, tuple[list, list]], path, *, title: str = "", bins: int = BINS) -> Path:
    """Reliability diagram: ``series`` maps a label to ``(confidence, correct)`` per document."""
    plt = require_matplotlib()
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(5.5, 5.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 1.3]})
    top.plot([0, 1], [0, 1], color="grey", linestyle="--", linewidth=1, label="perfectly calibrated")
    width = 1.0 / bins / (len(series) + 1)
    for k, (label, (confidence, correct)) in enumerate(series.items()):
        mean_conf, accuracy, count = reliability(confidence, correct, bins)
        shown = count > 0
        top.plot(mean_conf[shown], accuracy[shown], marker="o", markersize=4, label=label)
        left = np.arange(bins) / bins + k * width
        bottom.bar(left, count, width=width, align="edge", label=label)
    top.set_ylabel("observed accuracy")
    top.set_xlim(0, 1)
    top.set_ylim(0, 1.02)
    top.set_title(title)
    top.grid(alpha=0.3)
    top.legend(fontsize=8)
    bottom.set_xlabel("probability of the predicted label")
    bottom.set_ylabel("documents")
    bottom.set_yscale("log")
    return save_figure(fig, path)


def suite_figures(report, directory, *, online_reports=()) -> list[Path]:
    """Every figure a :class:`SuiteReport` has data for; returns the paths written."""
    directory = Path(directory)
    written = []
    for task in report.tasks:
        for p in report.noise:
            cells = [report.cell(task.label, s.label, p) for s in report.learners]
            suffix = "" if p == 0 else f"-noise{p:g}"
            curves = {c.learner: [100.0 - e for e in c.curve] for c in cells if c is not None and c.curve}
            if curves:
                written.append(plot_learning_curves(
                    curves, directory / f"curve-{slug(task.label)}{suffix}.png",
                    title=f"{task.label}: test accuracy after each pass" + (f" (noise {p:g})" if p else "")))
            series = {c.learner: _confidence_series(c) for c in cells if c is not None and _has_confidence(c)}
            if series:
                written.append(plot_reliability(
                    series, directory / f"reliability-{slug(task.label)}{suffix}.png",
                    title=f"{task.label}: reliability" + (f" (noise {p:g})" if p else "")))
    if len(report.noise) > 1:
        errors = {}
        for s in report.learners:
            values = []
            for p in report.noise:
                row = report.errors(p)
                done = [row[t][s.label] for t in row if s.label in row[t]]
                values.append(float(np.mean(done)) if done else float("nan"))
            errors[s.label] = values
        written.append(plot_noise(report.noise, errors, directory / "noise.png",
                                  title="mean test error over the tasks"))
    for online in online_reports:
        written.append(plot_online(online.curves, directory / f"online-{slug(online.task)}.png",
                                   title=f"{online.task}: cumulative mistakes, one pass"))
    return written


def _has_confidence(cell) -> bool:
    return any(c is not None for c in cell.confidence)


def _confidence_series(cell):
    keep = [i for i, c in enumerate(cell.confidence) if c is not None and cell.outcomes[i] != "."]
    return [cell.confidence[i] for i in keep], [cell.outcomes[i] == "1" for i in keep]
