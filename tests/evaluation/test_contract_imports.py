"""What a plugin imports to write a metric, design or comparison (textcw.evaluation.contract) does
not load the engine that runs them: defining and registering a component stays cheap, and the
engine, which builds on the same leaves (textcw.evaluation.folds), never imports the contract
back. Checked in a fresh interpreter, where nothing else has imported textcw yet."""

from __future__ import annotations

import json
import subprocess
import sys

LOADED = """
import json, sys
import textcw.evaluation.contract as contract
from textcw.evaluation.contract import Fold, Metric, SplitDesign

class Halves(SplitDesign):
    def splits(self, task, seed):
        return []

class Right(Metric):
    better = "higher"
    def __call__(self, fold):
        return float((fold.y_true == fold.y_pred).mean())

Halves()
import numpy as np
value = Right()(Fold(np.array(["a", "b"]), np.array(["a", "a"]), np.array(["a", "b"])))
print(json.dumps({"modules": sorted(m for m in sys.modules if m.startswith("textcw.evaluation")),
                  "sklearn": "sklearn" in sys.modules, "value": value}))
"""


def test_defining_components_loads_only_the_contract_and_its_leaves():
    out = subprocess.run([sys.executable, "-c", LOADED], check=True, capture_output=True, text=True, timeout=600)
    loaded = json.loads(out.stdout.splitlines()[-1])
    assert loaded["modules"] == ["textcw.evaluation", "textcw.evaluation.contract", "textcw.evaluation.folds",
                                 "textcw.evaluation.report", "textcw.evaluation.specs"]
    assert loaded["sklearn"] is False and loaded["value"] == 0.5


def test_the_contract_reexports_the_shared_leaves_unchanged():
    from textcw.evaluation import contract, cv, folds, mcnemar, report, suite

    assert contract.Fold is folds.Fold is cv.Fold
    assert contract.NOT_APPLICABLE is folds.NOT_APPLICABLE == "n/a"
    assert cv.check_splits is folds.check_splits
    assert contract.Verdict is report.Verdict and suite.Comparison is mcnemar.Comparison
    # a report read back from JSON rebuilds the verdicts and McNemar records as those classes
    made = suite.SuiteReport([], [], 2, 0, verdicts={"bootstrap": contract.Verdict("t", ["a", "b"], [["x", 1.5]])},
                             comparisons=[mcnemar.Comparison("t", "pa", "perceptron", 0.0,
                                                             mcnemar.mcnemar_from_counts(3, 9), "")])
    again = suite.SuiteReport.from_json(made.to_json())
    assert again == made and type(again.verdicts["bootstrap"]) is contract.Verdict
    assert type(again.comparisons[0]) is mcnemar.Comparison and again.comparisons[0].result.method == "exact"
