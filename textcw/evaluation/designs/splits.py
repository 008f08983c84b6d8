"""The papers' protocols, each a :class:`~textcw.evaluation.contract.SplitDesign` with its own
splits: ``cv`` (JMLR 2012 section 7.6), ``holdout`` and ``noise`` (AROW 2013 section 5.3).
"""

from __future__ import annotations

from textcw.evaluation.contract import Option, SplitDesign
from textcw.evaluation.data import fold_indices
from textcw.evaluation.designs.options import NOISE, QUICK, SEED, TUNE
from textcw.evaluation.specs import CV as CV_PROTOCOL
from textcw.evaluation.specs import SPLIT

__all__ = ["CV", "Holdout", "NOISE_LEVELS", "Noise"]

NOISE_LEVELS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3]


class CV(SplitDesign):
    """Stratified, seeded k-fold cross-validation over the pooled task (JMLR 2012 section 7.6)."""

    protocol = CV_PROTOCOL
    options = {"folds": Option("int", 10, "how many folds (cross-validation needs at least 2 folds)", minimum=2),
               "sample": Option("int", None, "cross-validate a class-balanced sample of this many documents",
                                minimum=2),
               "seed": SEED, "tune": TUNE, "quick": QUICK, "noise": NOISE}

    def splits(self, task, seed):
        return fold_indices(task, self.settings["folds"], seed)

    def caption(self, report) -> str:
        return f", {report.folds}-fold CV"


class Holdout(SplitDesign):
    """Train on the corpus's train split, test on its test split (AROW 2013 section 5.3)."""

    protocol = SPLIT
    options = {"seed": SEED, "tune": TUNE, "quick": QUICK, "noise": NOISE}

    def splits(self, task, seed):
        return [(task.train_index, task.test_index)]


class Noise(CV):
    """:class:`CV`, tuned, at the label-noise rates of AROW 2013 section 5.3 (0 to 0.3)."""

    options = {**CV.options, "tune": Option("bool", True, TUNE.help),
               "noise": Option("floats", NOISE_LEVELS, NOISE.help)}
