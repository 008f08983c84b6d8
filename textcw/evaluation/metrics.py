"""The classification metrics of ``textcw train`` and ``textcw evaluate``: :mod:`textcw.metrics`.

They live below :mod:`textcw.pipeline`, whose ``train`` reports them; this module re-exports
them under the name earlier code imports.
"""

from __future__ import annotations

from textcw.metrics import (
    BINS,
    ProbabilityScores,
    classification_metrics,
    expected_calibration_error,
    label_metrics,
    probability_bin_stats,
)

__all__ = ["BINS", "ProbabilityScores", "classification_metrics", "expected_calibration_error",
           "label_metrics", "probability_bin_stats"]
