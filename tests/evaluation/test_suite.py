"""A whole evaluation on the toy corpus: cells, McNemar against the baseline, ranks, tables, JSON."""

from __future__ import annotations

import json

import pytest

from textcw.errors import ParameterError, UnknownNameError
from textcw.evaluation.evaluators import cv
from textcw.evaluation.suite import SuiteReport, run_suite
from textcw.evaluation.table import error_table, markdown, noise_table, tuning_table


@pytest.fixture(scope="module")
def report(regs):
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    warnings.simplefilter("ignore", ConvergenceWarning)  # liblinear on 160 random documents
    return run_suite(["toy:binary", "toy:multi"], ["perceptron", "cw-var", "svm"], folds=3, tune=True, quick=True,
                     noise=[0.0, 0.2], baseline="perceptron", curves=True, probabilities=True)


def test_cells_and_spread(report):
    assert len(report.cells) == 2 * 3 * 2 and not report.interrupted
    cell = report.cell("toy:binary", "cw-var")
    assert cell.complete and len(cell.fold_errors) == 3 and "." not in cell.outcomes
    assert cell.mean_error == pytest.approx(sum(cell.fold_errors) / 3)
    assert cell.std_error is not None and cell.passes is not None and "eta" in cell.params
    assert len(cell.curve) == 10                      # test error after each of 10 passes
    assert report.cell("toy:binary", "svm").curve == []  # no passes, no curve
    assert all(c is not None for c in cell.confidence)   # cw-var has predict_proba


def test_mcnemar_against_the_baseline(report):
    learners = {c.learner for c in report.comparisons}
    assert learners == {"cw-var", "svm"} and all(c.baseline == "perceptron" for c in report.comparisons)
    comp = report.comparison("toy:binary", "cw-var")
    a, b = report.cell("toy:binary", "cw-var").outcomes, report.cell("toy:binary", "perceptron").outcomes
    assert comp.result.b == sum(x == "1" and y == "0" for x, y in zip(a, b))
    assert comp.result.c == sum(x == "0" and y == "1" for x, y in zip(a, b))


def test_ranks_per_noise_rate(report):
    ranks = report.ranks["0.0"]
    assert ranks.tasks == ["toy:binary", "toy:multi"]
    assert sorted(ranks.ranks["toy:binary"].values())[0] == 1.0
    assert set(report.ranks) == {"0.0", "0.2"}


def test_error_table_marks_best_and_ranks(report):
    columns, rows = error_table(report, 0.0)
    assert columns == ["task", "perceptron", "cw-var", "svm"]
    assert rows[-1][0] == "mean rank" and len(rows) == 3
    for row, task in zip(rows, ("toy:binary", "toy:multi")):
        errors = {name: report.cell(task, name).mean_error for name in columns[1:]}
        best = min(round(e, 2) for e in errors.values())
        for name, text in zip(columns[1:], row[1:]):
            assert text.startswith("•") == (round(errors[name], 2) == best)
    assert "[bold]" in " ".join(error_table(report, 0.0, markup=True)[1][0] + error_table(report, 0.0, markup=True)[1][1])
    assert len(tuning_table(report)[1]) == 4 and len(noise_table(report)[1]) == 2
    assert markdown(columns, rows).count("\n") == len(rows) + 1


def test_json_round_trip(report, tmp_path):
    path = tmp_path / "report.json"
    report.to_json(path)
    again = SuiteReport.from_json(path)
    assert again == report
    assert json.loads(path.read_text())["cells"][0]["outcomes"]


def test_interrupt_keeps_finished_folds(regs, monkeypatch):
    import textcw.evaluation.cv as cv_module

    calls = {"n": 0}
    real = cv_module.fit_timed

    def flaky(est, X, y):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(est, X, y)

    monkeypatch.setattr(cv_module, "fit_timed", flaky)
    report = run_suite(["toy:binary", "toy:multi"], ["perceptron"], folds=5)
    assert report.interrupted
    cell = report.cell("toy:binary", "perceptron")
    assert len(cell.fold_errors) == 3 and not cell.complete and "." in cell.outcomes
    assert report.cell("toy:multi", "perceptron") is None
    assert "(3/5 folds)" in error_table(report)[1][0][1]


def test_bad_specs_fail_before_any_work(regs):
    with pytest.raises(UnknownNameError, match="unknown learner 'nope'"):
        run_suite(["toy:binary"], ["nope"])
    with pytest.raises(UnknownNameError, match="toy:binary"):
        run_suite(["toy:nope"], ["perceptron"])
    with pytest.raises(ParameterError, match="baseline 'svm' is not among"):
        run_suite(["toy:binary"], ["perceptron"], baseline="svm")
    with pytest.raises(ParameterError, match="listed twice"):
        run_suite(["toy:binary"], ["perceptron", "perceptron"])


def test_cv_evaluator_factory(regs):
    report = cv(folds=2)(["toy:binary"], ["pa"])
    assert report.cell("toy:binary", "pa").complete and report.folds == 2


def test_probabilities_belong_to_the_chosen_pass(report):
    # the curve trains past the chosen pass; the recorded confidence must be the chosen model's
    for cell in report.cells:
        if cell.confidence and cell.noise == 0.0 and cell.task == "toy:binary":
            assert all(c is None or c >= 0.5 for c in cell.confidence), cell.learner


def test_evaluators_are_library_functions_and_the_designs_are_registered(regs):
    from textcw.evaluation import evaluators

    builtin = {kind: sorted(e.name for e in regs[kind] if e.provider == "textcw")
               for kind in ("evaluators", "metrics", "comparisons")}
    assert builtin == {"evaluators": ["active", "combination", "curve", "cv", "holdout", "noise", "online", "timing",
                                      "tune"],
                       # what `textcw evaluate --design` runs
                       "metrics": ["brier", "ece", "error", "hamming-loss", "log-loss", "macro-f1", "micro-f1",
                                   "precision@k", "subset-accuracy"],
                       "comparisons": ["bootstrap", "mcnemar", "rank"]}
    factory = {name: getattr(evaluators, name) for name in evaluators.__all__}
    assert set(factory) == {"holdout", "cv", "tune", "mcnemar", "curve", "online", "noise", "rank", "timing",
                            "calibration", "combination"}
    noisy = factory["noise"](levels=(0, 0.2), folds=2, tune=False)(["toy:binary"], ["pa"])
    assert noisy.noise == [0.0, 0.2] and noisy.cell("toy:binary", "pa", 0.2).complete
    tuned = factory["tune"](quick=True)("toy:binary", ["cw-var", "pa1"])
    assert [r.learner for r in tuned.results] == ["cw-var", "pa1"] and tuned.to_dict()["task"] == "toy:binary"
    curve = factory["curve"](max_passes=3, folds=2)("toy:binary", ["perceptron"])
    assert curve.passes == [1, 2, 3] and len(curve.accuracy["perceptron"]) == 3
    timed = factory["timing"](repeats=2, folds=2)("toy:binary", ["perceptron", "svm"])
    assert [len(r.seconds) for r in timed.results] == [2, 2] and timed.results[0].passes == 5
    for report in (noisy, tuned, curve, timed):
        assert type(report).from_json(report.to_json()) == report
    with pytest.raises(ParameterError, match="no passes"):
        factory["curve"]()("toy:binary", ["svm"])


def test_failing_task_is_recorded_and_the_rest_run(regs):
    report = run_suite(["toy:tiny", "toy:binary"], ["pa"], folds=5)
    assert len(report.failures) == 1 and report.failures[0].startswith("toy:tiny: ")
    assert "fewer than the 5 folds" in report.failures[0]
    assert report.cell("toy:binary", "pa").complete and not report.interrupted


def test_specialise_adapts_learners_per_task(regs):
    from textcw.evaluation.experiments.emnlp_table3 import cap_k
    from textcw.evaluation.specs import LearnerSpec

    spec = LearnerSpec("cw-var", {"multiclass": "seq", "k": 5}, "CW K=5")
    report = run_suite(["toy:multi", "toy:binary"], [spec], folds=2, specialise=cap_k)
    assert not report.failures, report.failures
    info = {i.label: i for i in report.task_info}
    assert info["toy:multi"].learner_params == {"CW K=5": {"multiclass": "seq", "k": "all"}}
    assert report.cell("toy:multi", "CW K=5").complete


def test_bad_folds_fail_before_any_work(regs):
    with pytest.raises(ParameterError, match="at least 2 folds"):
        run_suite(["toy:binary"], ["pa"], folds=1)
