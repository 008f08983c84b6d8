"""The ``active`` design: each round's labels are the strategy's choice, checked against the
strategy computed by hand; shared start and ceiling rows; refusals; the command line and the kit."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import ndtr

from cli_run import one_line_error, run
from textcw.errors import ParameterError
from textcw.evaluation.data import featurize, fold_indices, load_task
from textcw.evaluation.designs import Active
from textcw.evaluation.measures import Error
from textcw.evaluation.specs import LearnerSpec, TaskSpec
from textcw.evaluation.training import build, error_percent
from textcw.testing import design_under_test, parametrize_with_checks

TASK = "synthetic-text:300"
OPTIONS = {"start": 20, "batch": 15, "rounds": 2, "folds": 2}


@pytest.fixture(scope="module")
def report():
    return Active(**OPTIONS).run([TASK], ["arow", "pa1"], metrics={"error": Error()})


@pytest.fixture(scope="module")
def gaussian_report():
    return Active(**OPTIONS).run([TASK], ["arow"], metrics={"error": Error()})


def test_rows_are_strategies_and_labels_used_and_columns_the_learners(report, gaussian_report):
    assert report.row_title == "strategy, labels"
    assert report.rows(TASK) == ["margin 20", "margin 35", "margin 50", "random 20", "random 35", "random 50", "all"]
    assert [s.label for s in report.learners] == ["arow", "pa1"]  # mistake: not every learner has it
    assert gaussian_report.rows(TASK)[:3] == ["mistake 20", "mistake 35", "mistake 50"]
    for learner in ("arow", "pa1"):  # every strategy starts from the same labelled documents
        starts = {tuple(report.cell(TASK, learner, row=f"{s} 20").fold_errors) for s in ("margin", "random")}
        assert len(starts) == 1


def by_hand(data, k, pool, test, strategy):
    """The fold's curve of arow with ``strategy`` (mistake: Phi(-|m| / sqrt(v)), highest first;
    random: the seeded draw of textcw.suggest), computed without the design."""
    X_pool, X_test = featurize(data, pool, test)
    y_pool = data.labels[pool]
    labelled = list(np.random.RandomState([0, k, 104729]).permutation(len(pool))[:OPTIONS["start"]])
    errors = []
    for round_ in range(OPTIONS["rounds"] + 1):
        est = build(LearnerSpec("arow"), seed=k).fit(X_pool[labelled], y_pool[labelled])
        errors.append(error_percent(data.labels[test], est.predict(X_test)))
        rest = np.setdiff1d(np.arange(len(pool)), labelled)
        if strategy == "mistake":
            m, v = est.decision_function(X_pool[rest]), est.margin_variance(X_pool[rest])
            priority = ndtr(-np.abs(m) / np.sqrt(v))
        else:
            priority = np.random.default_rng(k + round_).random(rest.size)
        labelled += rest[np.argsort(-priority, kind="stable")[:OPTIONS["batch"]]].tolist()
    return errors


@pytest.mark.parametrize("strategy", ["mistake", "random"])
def test_each_round_labels_the_documents_the_strategy_ranks_first(gaussian_report, strategy):
    data = load_task(TaskSpec(TASK), seed=0)
    expected = [by_hand(data, k, pool, test, strategy) for k, (pool, test) in enumerate(fold_indices(data, 2, 0))]
    for i, n in enumerate([20, 35, 50]):
        got = gaussian_report.cell(TASK, "arow", row=f"{strategy} {n}").fold_errors
        assert got == pytest.approx([fold[i] for fold in expected], abs=1e-12)


def test_what_cannot_run_is_refused_naming_the_fix():
    with pytest.raises(ParameterError, match="strategy 'mistake' needs a Gaussian learner .* strategies=margin,random"):
        Active(**OPTIONS, strategies="mistake").run([TASK], ["pa1"], metrics={"error": Error()})
    with pytest.raises(ParameterError, match="lists a strategy twice"):
        Active(strategies="random,random")
    report = Active(start=20, batch=100, rounds=2, folds=2).run([TASK], ["pa1"], metrics={"error": Error()})
    assert report.cells == [] and "start + rounds * batch = 220 labels, more than the 200 documents" in report.failures[0]


def test_the_command_line_prints_the_curves(capsys):
    code, out, err = run(capsys, "evaluate", "--corpus", TASK, "--learner", "pa1",
                         "--design", "active:start=20:batch=15:rounds=1:folds=2:strategies=margin,random")
    assert code == 0, err
    assert "strategy, labels\tpa1\n" in out and f"{TASK}\trandom 35\t" in out and f"{TASK}\tall\t" in out
    code, _, err = run(capsys, "evaluate", "--corpus", TASK, "--learner", "pa1", "--design", "active:strategies=best")
    assert code == 2 and "best" in one_line_error(err)


@parametrize_with_checks([design_under_test(Active, start=20, batch=10, rounds=1, folds=2)])
def test_the_active_design_passes_the_kit(component, check):
    check(component)


def test_the_figure_draws_each_strategys_curve_from_the_table(gaussian_report, tmp_path):
    pytest.importorskip("matplotlib")
    from textcw.evaluation.plot import strategy_curves, suite_figures

    curves, ceiling = strategy_curves(gaussian_report, TASK, "arow")
    assert list(curves) == ["mistake", "margin", "random"]
    cell = gaussian_report.cell(TASK, "arow", row="random 35")
    assert curves["random"][0] == [20, 35, 50] and curves["random"][1][1] == pytest.approx(100 - cell.mean_error)
    assert ceiling == pytest.approx(100 - gaussian_report.cell(TASK, "arow", row="all").mean_error)
    written = suite_figures(gaussian_report, tmp_path, formats=["svg"])
    assert [p.name for p in written] == [f"active-{TASK.replace(':', '_')}-arow.svg"]
    assert "labels used" in written[0].read_text()
