"""Which scores the temperature scales: raw decision scores, or scores over the weight length.

``Calibrated`` fits its temperature to honest scores of models that learned fewer documents than
the final one (two half-size models when cross-fitting). ``margin="auto"`` used to choose
between the raw scores and, for the Gaussian learners, the standardized ones, by the recorded
log-loss; it now chooses between the normalized scores (over each scoring model's weight
length, :func:`textcw.learners.temperature.normalized_scores`) and the standardized ones.
For the learners as ``textcw train`` fits them (the registry's train defaults, 5 epochs), this
prints test accuracy (the same for every margin: the model does not change), the margin each
rule chooses, and the test ECE and log-loss of both, on the tasks of ``bench_cross_fit.py``
(held-out tasks, text on textcw's ``tfidf``; ``newsgroups``, ``newsgroups:sci``, ``reuters``).

The earlier rule is rebuilt from public settings: ``Calibrated(margin="raw")`` and
``margin="standardized"`` fit the same model, and the one with the lower recorded log-loss is
what ``"auto"`` chose (raw on a tie).

Run by hand: ``python benchmarks/bench_margins.py [--tasks ...] [--learners ...] [--json out.json]``;
results in docs/quality.md "Normalized scores".
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

from sklearn.base import clone

from textcw.learners.calibrated import Calibrated

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cross_fit import arguments, metrics, run_table  # noqa: E402
from bench_out_of_box import train_default_learner  # noqa: E402

LEARNERS = ("scw1", "scw2", "cw-stdev", "cw-var", "arow", "pa1")


def measure(name: str, data) -> dict:
    X, y, X_test, y_test = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        now = Calibrated(train_default_learner(name)).fit(X, y)
        earlier = {margin: clone(now).set_params(margin=margin).fit(X, y)
                   for margin in ("raw", "standardized") if margin == "raw" or hasattr(now.estimator_, "margin_variance")}
    before = min(earlier.values(), key=lambda m: m.recorded_log_loss_[m.margin_])  # raw first: kept on a tie
    predicted = now.predict(X_test)
    return {
        "before": {**metrics(y_test, predicted, before.predict_proba(X_test), now.classes_), "margin": before.margin_},
        "now": {**metrics(y_test, predicted, now.predict_proba(X_test), now.classes_), "margin": now.margin_},
    }


def main(argv=None) -> None:
    args = arguments(argv, __doc__.splitlines()[0], LEARNERS)
    run_table(args, measure, "ECE: earlier auto / now | log-loss: earlier / now | margin: earlier / now",
              lambda r: f"{r['before']['margin']} / {r['now']['margin']}")

if __name__ == "__main__":
    main()
