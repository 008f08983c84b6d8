"""Cumulative online mistakes: exact at chunk boundaries, for textcw's and other learners."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import Perceptron as SkPerceptron

from textcw.errors import ParameterError
from textcw.evaluation.data import featurize, load_task
from textcw.evaluation.online import OnlineReport, cumulative_mistakes, online
from textcw.evaluation.specs import LearnerSpec, TaskSpec
from textcw.evaluation.training import build


@pytest.fixture(scope="module")
def stream(regs):
    task = load_task(TaskSpec("toy:binary"))
    everything = np.arange(len(task))
    X, _ = featurize(task, everything, everything[:1])
    return X, task.labels


def test_total_equals_one_unshuffled_epoch(stream):
    X, y = stream
    positions, mistakes = cumulative_mistakes(build(LearnerSpec("cw-stdev")), X, y, points=10)
    one_pass = build(LearnerSpec("cw-stdev", {"shuffle": False}), passes=1).fit(X, y)
    assert positions[-1] == len(y) and mistakes[-1] == one_pass.mistakes_[0]
    assert all(a <= b for a, b in zip(mistakes, mistakes[1:]))


def test_one_document_per_point_matches_predict_then_update(stream):
    X, y = stream
    positions, mistakes = cumulative_mistakes(build(LearnerSpec("perceptron")), X[:40], y[:40], points=1000)
    # the first chunk runs until both labels have appeared, then one document per point
    first_other = int(np.argmax(y[:40] != y[0]))
    assert positions[0] == first_other + 1 and positions[1:] == list(range(first_other + 2, 41))
    manual = build(LearnerSpec("perceptron"))
    manual.partial_fit(X[: first_other + 1], y[: first_other + 1], classes=np.unique(y[:40]))
    count = manual.mistakes_[0]
    for i in range(first_other + 1, 40):
        # textcw's learners count a tie (score 0, e.g. only unseen features) as a mistake
        tie = manual.decision_function(X[i:i + 1])[0] == 0
        count += int(tie or manual.predict(X[i:i + 1])[0] != y[i])
        manual.partial_fit(X[i:i + 1], y[i:i + 1])
    assert mistakes[-1] == count


def test_other_learners_are_scored_chunk_by_chunk(stream):
    X, y = stream
    positions, mistakes = cumulative_mistakes(SkPerceptron(random_state=0), X, y, points=6)
    assert len(positions) == len(mistakes) and 0 < mistakes[-1] < len(y)
    with pytest.raises(ParameterError, match="partial_fit"):
        cumulative_mistakes(build(LearnerSpec("svm")), X, y)


def test_online_evaluator_report(regs):
    report = online(runs=2, points=5)("toy:binary", ["perceptron", "cw-var"])
    assert [c.learner for c in report.curves] == ["perceptron", "cw-var"]
    assert report.runs == 2 and report.curves[0].std_final is not None
    assert OnlineReport.from_json(report.to_json()) == report
