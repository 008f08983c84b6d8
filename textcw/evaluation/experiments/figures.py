"""The figures of a reproduction (``textcw reproduce NAME --plot DIR``)."""

from __future__ import annotations

from pathlib import Path

from textcw.evaluation.online import OnlineCurve
from textcw.evaluation.plot import plot_online, suite_figures


def experiment_figures(result, directory, *, formats=("png",)) -> list[Path]:
    """Learning curves and reliability (table experiments), noise curves (several noise rates),
    online mistake curves (the synthetic experiment), in every format of ``formats``."""
    directory = Path(directory)
    written = []
    if result.suite is not None:
        written += suite_figures(result.suite, directory, formats=formats)
    learners = result.extra.get("learners") if isinstance(result.extra, dict) else None
    if learners:
        curves = [OnlineCurve.from_dict(s["curve"]) for s in learners.values()]
        for fmt in formats:
            written.append(plot_online(curves, directory / f"{result.name}-mistakes.{fmt}",
                                       title=f"cumulative mistakes, mean of {result.extra['runs']} runs"))
    return written
