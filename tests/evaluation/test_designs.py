"""The designs beyond cross-validation: ``online``, ``curve``, ``timing``, ``tune`` and
``combination``, each checked against the same measurement done by hand, through
``textcw evaluate`` (text and ``--json``) and by the kit's design checks."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_run import one_line_error, run
from textcw.errors import ParameterError
from textcw.evaluation.contract import Option, check_options
from textcw.evaluation.data import featurize, fold_indices, load_task
from textcw.evaluation.designs import Combination, Curve, Online, Timing, Tune
from textcw.evaluation.measures import Error, LogLoss, MacroF1
from textcw.evaluation.specs import LearnerSpec, TaskSpec
from textcw.evaluation.suite import SuiteReport
from textcw.evaluation.training import build, error_percent
from textcw.testing import design_under_test, parametrize_with_checks

TASK = "synthetic-text:300"
LEARNERS = ["cw-var", "pa1"]


def pooled():
    return load_task(TaskSpec(TASK), seed=0)


@pytest.fixture(scope="module")
def online_report():
    return Online(runs=2).run([TASK], LEARNERS, metrics={"error": Error(), "macro-f1": MacroF1()})


def test_online_mistakes_are_a_hand_run_predict_then_learn_loop(online_report):
    from textcw.evaluation.online import cumulative_mistakes

    data = pooled()
    everything = np.arange(len(data))
    X, _ = featurize(data, everything, everything[:1])
    for run_index in range(2):
        order = np.random.RandomState([0, run_index]).permutation(len(data))
        Xs, ys = X[order], data.labels[order]
        for name in LEARNERS:
            est = build(LearnerSpec.parse(name), seed=run_index)
            wrong = [True]  # the first document comes before any model
            est.partial_fit(Xs[:1], ys[:1], classes=data.classes)
            for i in range(1, len(ys)):
                wrong.append(est.predict(Xs[i:i + 1])[0] != ys[i])
                est.partial_fit(Xs[i:i + 1], ys[i:i + 1])
            cell = online_report.cell(TASK, name)
            assert cell.fold_errors[run_index] == pytest.approx(100.0 * sum(wrong) / len(ys), abs=1e-12)
            assert cell.metrics["error"] == cell.fold_errors
            # the learner's own count of its mistakes before each update agrees
            own = cumulative_mistakes(build(LearnerSpec.parse(name), seed=run_index), Xs, ys, points=len(ys))[1]
            assert own[-1] == sum(wrong)
            if run_index == 0:  # the outcomes are the first run's, at each document's place in the pool
                expected = np.empty(len(ys), dtype="<U1")
                expected[order] = np.where(wrong, "0", "1")
                assert cell.outcomes == "".join(expected)
    assert online_report.row_title == "" and all(c.n_folds == 2 and c.passes == 1 for c in online_report.cells)


def test_online_with_noise_counts_the_mistakes_the_online_evaluator_counts():
    from textcw.evaluation.online import online

    report = Online(noise=[0.0, 0.2], runs=2).run([TASK], LEARNERS, metrics={"error": Error()})
    assert report.noise == [0.0, 0.2] and len(report.cells) == 4
    n = len(pooled())
    for p in (0.0, 0.2):
        # the online evaluator streams the same orders and flipped labels, and reads the
        # learners' own counts of their mistakes before each update
        direct = online(noise=p, runs=2, points=n)(TASK, LEARNERS)
        for curve in direct.curves:
            cell = report.cell(TASK, curve.learner, p)
            assert np.mean(cell.fold_errors) * n / 100 == pytest.approx(curve.mistakes[-1], abs=1e-9)
    assert report.cell(TASK, "pa1", 0.2).mean_error > report.cell(TASK, "pa1", 0.0).mean_error


def test_online_refuses_what_its_folds_do_not_hold():
    with pytest.raises(ParameterError, match="cannot compute metric 'log-loss', which needs proba: its folds hold "
                                             "only labels"):
        Online().run([TASK], ["pa1"], metrics={"log-loss": LogLoss()})
    with pytest.raises(ParameterError, match="learner 'nb' has no partial_fit"):
        Online().run([TASK], ["pa1", "nb"], metrics={"error": Error()})


def test_curve_cells_are_fits_on_the_first_n_documents_of_each_fold():
    report = Curve(sizes=[40, 120], folds=3).run([TASK], LEARNERS, metrics={"error": Error()})
    assert report.row_title == "train docs" and report.rows(TASK) == ["40", "120"]
    assert [(c.row, c.learner) for c in report.cells] == [("40", "cw-var"), ("40", "pa1"),
                                                          ("120", "cw-var"), ("120", "pa1")]
    data = pooled()
    for size in (40, 120):
        for name in LEARNERS:
            expected = []
            for k, (train, test) in enumerate(fold_indices(data, 3, 0)):
                first = np.sort(np.random.RandomState([0, k, 7919]).permutation(train)[:size])
                X_train, X_test = featurize(data, first, test)
                est = build(LearnerSpec.parse(name), seed=0).fit(X_train, data.labels[first])
                expected.append(error_percent(data.labels[test], est.predict(X_test)))
            assert report.cell(TASK, name, row=str(size)).fold_errors == pytest.approx(expected, abs=1e-12)
    # the ranks compare learners at equal size: one entry per task x size
    assert report.ranks["0.0"].tasks == [f"{TASK} train docs=40", f"{TASK} train docs=120"]


def test_curve_size_larger_than_a_fold_fails_the_task_naming_the_limit():
    report = Curve(sizes=[5000], folds=3).run([TASK], ["pa1"], metrics={"error": Error()})
    assert report.cells == [] and len(report.failures) == 1
    assert "sizes has 5000, more than the 266 documents of a fold's training part; give sizes up to 266" \
        in report.failures[0]


def test_timing_repeats_the_first_fold_and_tables_its_seconds():
    report = Timing(repeats=3, folds=3).run([TASK], LEARNERS, metrics={"error": Error()})
    data = pooled()
    train, test = fold_indices(data, 3, 0)[0]
    X_train, X_test = featurize(data, train, test)
    for name in LEARNERS:
        cell = report.cell(TASK, name)
        est = build(LearnerSpec.parse(name), seed=0).fit(X_train, data.labels[train])
        assert cell.fold_errors == [error_percent(data.labels[test], est.predict(X_test))] * 3
        assert len(cell.train_seconds) == 3 and all(s > 0 for s in cell.train_seconds)
    verdict = report.verdicts["timing"]
    assert verdict.columns == ["task", *LEARNERS] and [row[0] for row in verdict.rows] == [TASK]
    mean = np.mean(report.cell(TASK, "pa1").train_seconds)
    assert verdict.rows[0][2].startswith(f"{mean:.4f} (min ")


def test_tune_cells_are_the_tuning_runs_held_out_errors():
    report = Tune(quick=True).run([TASK], LEARNERS, metrics={"error": Error()})
    assert report.tuned and [t.learner for t in report.tuning] == LEARNERS
    for result in report.tuning:
        cell = report.cell(TASK, result.learner)
        assert (cell.params, cell.passes) == (result.params, result.passes)
        assert cell.fold_errors == [pytest.approx(result.dev_error, abs=1e-12)]
        assert cell.outcomes.count("0") + cell.outcomes.count("1") == result.n_dev


@pytest.mark.parametrize("method", ["uniform", "kl"])
def test_combination_equals_textcw_combine_of_the_shard_models(method):
    import textcw
    from textcw.evaluation.combination import combination
    from textcw.scale import train_sharded

    report = Combination(shards=[4], method=method).run([TASK], ["cw-var"], metrics={"error": Error()})
    assert report.row_title == "shards" and report.rows(TASK) == ["1", "4"]
    for n in (1, 4):
        trained = train_sharded(TASK, "cw-var", shards=n, combine=method, epochs=1, seed=0, workers=1)
        assert report.cell(TASK, "cw-var", row=str(n)).fold_errors == [pytest.approx(100 * (1 - trained.accuracy),
                                                                                     abs=1e-9)]
    shards = []
    combination(shard_counts=[4], seed=0)(TASK, ["cw-var"], on_model=lambda label, n, run, kind, model, X, y: (
        shards.append((model, X, y)) if kind == "shard" and n == 4 else None))
    combined = textcw.combine([m for m, _, _ in shards], method=method)
    _, X_test, y_test = shards[0]
    assert report.cell(TASK, "cw-var", row="4").fold_errors == [error_percent(y_test, combined.predict(X_test))]
    rows = report.verdicts["combination"].rows
    errors = [error_percent(y, m.predict(X)) for m, X, y in shards]
    assert rows == [[TASK, "4", "75", f"{np.mean(errors):.2f} ± {np.std(errors):.2f}"]]  # 300 / 4 documents


def test_combination_refuses_what_cannot_be_combined():
    with pytest.raises(ParameterError, match="learner 'pa1': PassiveAggressiveI keeps no covariance, which "
                                             "method=kl weights"):
        Combination(method="kl").run([TASK], ["cw-var", "pa1"], metrics={"error": Error()})
    with pytest.raises(ParameterError, match="learner 'nb' is not an online learner"):
        Combination().run([TASK], ["nb"], metrics={"error": Error()})
    with pytest.raises(ParameterError, match="method='avg' is invalid; give one of kl, uniform"):
        Combination(method="avg")


def test_list_options_read_the_command_lines_comma_separated_text():
    declared = {"sizes": Option("ints", None, "sizes", minimum=2), "rates": Option("floats", [0.0], "rates")}
    assert check_options("x", declared, {"sizes": "100,400,1600", "rates": "0,0.5"}) == {
        "sizes": [100, 400, 1600], "rates": [0.0, 0.5]}
    assert check_options("x", declared, {"sizes": 4, "rates": 0.1}) == {"sizes": [4], "rates": [0.1]}
    for given, message in [({"sizes": "100,x"}, "give a list of integers"), ({"sizes": [1.5]}, "list of integers"),
                           ({"sizes": "1,100"}, r"\(>= 2\)"), ({"sizes": True}, "list of integers")]:
        with pytest.raises(ParameterError, match=message):
            check_options("x", declared, given)


@parametrize_with_checks([design_under_test(Online, runs=2), design_under_test(Curve, sizes=[30, 60], folds=2),
                          design_under_test(Timing, repeats=2, folds=2), design_under_test(Tune, quick=True),
                          design_under_test(Combination, shards=[2, 4])])
def test_the_new_designs_pass_the_kit(component, check):
    check(component)


# ===================================================================== textcw evaluate --design
@pytest.mark.parametrize("argv,fragment", [
    (["--design", "curve"], "design 'curve' needs sizes=...: training sizes, e.g. sizes=100,400,1600"),
    (["--design", "curve:sizes=1"], "design 'curve': sizes=[1] is invalid"),
    (["--design", "curve:size=100"], "did you mean 'sizes'?"),
    (["--design", "online:runs=0"], "design 'online': runs=0 is invalid"),
    (["--design", "online", "--folds", "3"], "--folds does not apply to design 'online'"),
    (["--design", "online", "--metric", "error,log-loss"], "design 'online' cannot compute metric 'log-loss'"),
    (["--design", "combination:shards=1"], "design 'combination': shards=[1] is invalid"),
    (["--design", "combination:method=mean"], "method='mean' is invalid; give one of kl, uniform"),
    (["--design", "timing:repeats=0"], "design 'timing': repeats=0 is invalid"),
    (["--design", "curve:sizes=100,400,100"], "design 'curve': sizes lists 100 twice; list each once"),
    (["--design", "combination:shards=4,4"], "design 'combination': shards lists 4 twice"),
    (["--design", "curve:sizes=" + ",".join(str(n) for n in range(2, 103))],
     "design 'curve': sizes has 101 values; give at most 100"),
    (["--design", "tune", "--noise", "0.1"], "--noise does not apply to design 'tune'"),
])
def test_bad_design_options_exit_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, "evaluate", "--corpus", "synthetic-text:100", "--learner", "pa1", *argv)
    assert code == 2 and out == ""
    assert fragment in one_line_error(err)


def test_curve_prints_a_row_per_size_and_its_json_round_trips(capsys, tmp_path):
    argv = ["evaluate", "--corpus", TASK, "--learner", "cw-var,pa1", "--design", "curve:sizes=40,120:folds=3"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "# test error (%), 3-fold CV, trained on the first n documents of each fold"
    assert lines[1] == "task\ttrain docs\tcw-var\tpa1"
    assert [line.split("\t")[:2] for line in lines[2:5]] == [[TASK, "40"], [TASK, "120"], ["mean rank", ""]]
    code, text, err = run(capsys, *argv, "--json")
    assert code == 0, err
    report = SuiteReport.from_json(text)
    assert SuiteReport.from_json(report.to_json()) == report
    assert report.design == "curve" and report.row_title == "train docs"
    assert [(c.row, c.learner) for c in report.cells] == [("40", "cw-var"), ("40", "pa1"), ("120", "cw-var"),
                                                          ("120", "pa1")]
    for line, size in zip(lines[2:4], ("40", "120")):  # the text rows are the JSON cells' means
        shown = line.split("\t")[2:]
        means = [report.cell(TASK, name, row=size).mean_error for name in ("cw-var", "pa1")]
        assert [s.lstrip("•") for s in shown] == [f"{m:.2f}" for m in means]


def test_online_combination_timing_and_tune_print_and_round_trip(capsys):
    for design, title, extra in [
        ("online", "# test error (%), online mistakes of one pass", None),
        ("combination:shards=2", "# test error (%), the uniform combination of n shard models",
         "# test error (%) of the shard models themselves, mean ± standard deviation"),
        ("timing:repeats=2:folds=3", "# test error (%), first of 3 folds, fitted 2 times",
         "# training seconds per fit, mean of 2 (fit only, on the first of 3 folds' training part)"),
        ("tune:quick=true", "# test error (%), held-out 10% of the tuning run", "# chosen on the tuning run"),
    ]:
        argv = ["evaluate", "--corpus", TASK, "--learner", "cw-var,pa1", "--design", design, "--baseline", "pa1"]
        code, out, err = run(capsys, *argv)
        assert code == 0, err
        assert out.splitlines()[0] == title and (extra is None or extra in out.splitlines())
        assert "McNemar vs pa1" in out
        code, text, err = run(capsys, *argv, "--json")
        assert code == 0, err
        report = SuiteReport.from_json(text)
        assert SuiteReport.from_json(report.to_json()) == report == SuiteReport.from_dict(json.loads(text))
        assert report.design == design.split(":")[0] and report.compared == ["mcnemar", "rank"]
        assert [c.learner for c in report.comparisons] == ["cw-var"] * len(report.rows(TASK))


@pytest.mark.slow
def test_the_documented_design_commands_run_as_written(capsys):
    # docs/evaluation.md, "Tuning, timing, learning curves, online mistakes and shard combination"
    import shlex
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "evaluation.md").read_text(encoding="utf-8")
    section = page.split("### Tuning, timing, learning curves", 1)[1].split("\n### ", 1)[0]
    commands = [block.split("\n", 1)[0] for block in section.split("```sh\n")[1:]]
    designs = [shlex.split(c)[shlex.split(c).index("--design") + 1].split(":")[0] for c in commands]
    assert designs == ["tune", "timing", "curve", "online", "combination"]
    for command in commands:
        argv = shlex.split(command)
        assert argv[0] == "textcw"
        code, out, err = run(capsys, *argv[1:])
        assert code == 0, f"{command}: {err}"
        assert out.startswith("# test error (%), "), out
