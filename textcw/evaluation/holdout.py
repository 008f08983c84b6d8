"""The simplest evaluator: train on the training split, measure accuracy on the test split."""

from __future__ import annotations

from textcw.pipeline import TrainResult, train


def holdout(**options):
    """Return a runner ``run(corpus, learner, **train_options) -> TrainResult``.

    ``TrainResult.to_dict()`` is the report.
    """

    def run(corpus: str, learner: str, **train_options) -> TrainResult:
        return train(corpus, learner, **{**options, **train_options})

    return run
