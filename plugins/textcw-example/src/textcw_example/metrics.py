"""Two metrics: AUC of each class against the rest, from scores; error weighted by a cost matrix."""

import numpy as np
from sklearn.metrics import roc_auc_score
from textcw.evaluation.contract import Fold, Metric, Option


class AUCPerClass(Metric):
    """Area under the ROC curve of each class against the rest, from decision scores (Fawcett 2006)."""

    needs, better, per_class, title = frozenset({"labels", "scores"}), "higher", True, "AUC per class"

    def __call__(self, fold: Fold) -> dict[str, float]:
        scores, column = fold.class_scores(), fold.class_index(fold.y_true)
        return {str(c): float(roc_auc_score(column == j, scores[:, j]))  # needs both outcomes
                for j, c in enumerate(fold.classes) if 0 < np.sum(column == j) < len(column)}


class CostError(Metric):
    """Mean cost of the predictions, costs[true][predicted] from a CSV matrix (classes sorted)."""

    title = "mean misclassification cost"
    options = {"costs": Option("path", required=True, help="a CSV cost matrix, one row per true class")}

    def __init__(self, **options):
        super().__init__(**options)
        self.costs = np.loadtxt(self.settings["costs"], delimiter=",", ndmin=2)

    def __call__(self, fold: Fold) -> float:
        if self.costs.shape != (len(fold.labels),) * 2 or not np.all(self.costs >= 0):
            raise ValueError(f"the cost matrix must be {len(fold.labels)}x{len(fold.labels)} and non-negative")
        return float(self.costs[fold.label_index(fold.y_true), fold.label_index(fold.y_pred)].mean())
