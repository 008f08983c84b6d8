"""An evaluation design: repeated stratified random splits (Monte Carlo cross-validation)."""

import numpy as np
from sklearn.model_selection import StratifiedShuffleSplit
from textcw.evaluation.contract import Option, SplitDesign


class ShuffleSplit(SplitDesign):
    """``rounds`` seeded, stratified random train/test splits of the pooled task; unlike k-fold
    CV a document may be tested in several rounds or in none (Picard and Cook, JASA 1984)."""

    options = {"rounds": Option("int", 5, "how many random splits", minimum=1, maximum=100),
               "test_size": Option("float", 0.2, "share of the documents tested in each round",
                                   minimum=0.05, maximum=0.5),
               "seed": Option("int", 0, "seed of the splits and of shuffling", minimum=0),
               "tune": Option("bool", False, "choose parameters and passes on a tuning run first")}

    def splits(self, task, seed):
        splitter = StratifiedShuffleSplit(self.settings["rounds"], test_size=self.settings["test_size"],
                                          random_state=seed)
        return list(splitter.split(np.zeros(len(task)), task.target))

    def caption(self, report) -> str:
        return f", {self.settings['rounds']} random {1 - self.settings['test_size']:.0%}/" \
               f"{self.settings['test_size']:.0%} splits"
