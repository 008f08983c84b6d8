"""``textcw evaluate`` through the registered evaluation components: designs, metrics, comparisons.

The default tables below were printed by ``textcw evaluate`` before it dispatched on registered
components; they must come out of the registry path unchanged, to the character.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from cli_run import one_line_error, run
from textcw.errors import ParameterError, PluginError
from textcw.evaluation.contract import Fold, Metric, Option, SplitDesign, check_options
from textcw.evaluation.designs import CV, Holdout, Noise
from textcw.evaluation.measures import ECE, Brier, Error, LogLoss, MacroF1
from textcw.testing import design_under_test, metric_under_test, parametrize_with_checks

DEFAULT_TABLE = '              test error (%), 3-fold CV              \n┏━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━┓\n┃ task               ┃ pa     ┃ cw-var ┃ perceptron ┃\n┡━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━┩\n│ synthetic-text:300 │ •32.51 │ 36.74  │ •32.51     │\n│ mean rank          │ 1.00   │ 3.00   │ 1.00       │\n└────────────────────┴────────┴────────┴────────────┘\n• lowest error in the row; mean rank: 1 = lowest error\n'

BASELINE_SPREAD_NOISE_TABLE = '  test error (%), 3-fold CV, training labels flipped with p=0  \n┏━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━┓\n┃ task               ┃ pa          ┃ cw-var     ┃ perceptron  ┃\n┡━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━┩\n│ synthetic-text:300 │ •32.51 ±2.4 │ 36.74 ±2.6 │ •32.51 ±4.7 │\n│ synthetic-text:200 │ •38.67 ±2.3 │ 39.67 ±3.2 │ 40.33 ±2.5  │\n│ mean rank          │ 1.00        │ 2.50       │ 2.00        │\n└────────────────────┴─────────────┴────────────┴─────────────┘\n test error (%), 3-fold CV, training labels flipped with p=0.1  \n┏━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━┓\n┃ task               ┃ pa          ┃ cw-var      ┃ perceptron  ┃\n┡━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━┩\n│ synthetic-text:300 │ •34.99 ±4.9 │ 41.25 ±1.4⋆ │ 37.50 ±4.9  │\n│ synthetic-text:200 │ 39.67 ±3.8  │ 41.00 ±4.6  │ •39.33 ±6.5 │\n│ mean rank          │ 1.50        │ 3.00        │ 1.50        │\n└────────────────────┴─────────────┴─────────────┴─────────────┘\n• lowest error in the row; McNemar vs pa: ⋆ p<0.05, ∗ p<0.01, † p<0.001; mean rank: 1 = lowest error\n  mean test error (%) over the tasks   \n┏━━━━━━━┳━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━┓\n┃ noise ┃ pa    ┃ cw-var ┃ perceptron ┃\n┡━━━━━━━╇━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━┩\n│ 0     │ 35.59 │ 38.21  │ 36.42      │\n│ 0.1   │ 37.33 │ 41.13  │ 38.42      │\n└───────┴───────┴────────┴────────────┘\n'

HOLDOUT_TABLE = '            test error (%)            \n┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━┳━━━━━━━┓\n┃ task                ┃ pa   ┃ arow  ┃\n┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━╇━━━━━━━┩\n│ synthetic:synthetic │ 3.33 │ •1.43 │\n│ mean rank           │ 2.00 │ 1.00  │\n└─────────────────────┴──────┴───────┘\n• lowest error in the row; mean rank: 1 = lowest error\n'

@pytest.fixture(autouse=True)
def terminal_tables(monkeypatch):
    """The tables as a terminal of 80 columns shows them: the tables above were captured before
    the registries served `evaluate` (off a terminal the same rows print tab-separated)."""
    from rich.console import Console

    from textcw.cli import output

    def console(**options):
        terminal = {} if options.get("stderr") else {"force_terminal": True, "color_system": None, "width": 80}
        return Console(**terminal, **options)

    monkeypatch.setattr(output, "Console", console)


SMALL = ["--corpus", "synthetic-text:300", "--learner", "pa,cw-var,perceptron", "--folds", "3"]


@pytest.mark.parametrize("extra", [[], ["--design", "cv", "--metric", "error", "--compare", "rank"],
                                   ["--design", "cv:folds=3"]])
def test_default_table_is_unchanged(capsys, extra):
    argv = SMALL if "cv:folds=3" not in extra else [a for a in SMALL if a not in ("--folds", "3")]
    code, out, err = run(capsys, "evaluate", *argv, *extra)
    assert code == 0, err
    assert out == DEFAULT_TABLE


def test_baseline_spread_and_noise_tables_are_unchanged(capsys):
    code, out, err = run(capsys, "evaluate", "--corpus", "synthetic-text:300,synthetic-text:200", "--learner",
                         "pa,cw-var,perceptron", "--folds", "3", "--baseline", "pa", "--spread", "--noise", "0,0.1")
    assert code == 0, err
    assert out == BASELINE_SPREAD_NOISE_TABLE


@pytest.mark.parametrize("design", [["--split"], ["--design", "holdout"]])
def test_holdout_table_is_unchanged(capsys, design):
    code, out, err = run(capsys, "evaluate", "--corpus", "synthetic:synthetic", "--learner", "pa,arow", *design)
    assert code == 0, err
    assert out == HOLDOUT_TABLE


def test_metrics_and_comparisons_from_the_registries(capsys, tmp_path):
    path = tmp_path / "r.json"
    code, out, err = run(capsys, "evaluate", "--corpus", "synthetic-text:300:3", "--learner", "pa,arow,nb",
                         "--folds", "3", "--metric", "error,macro-f1,log-loss,brier,ece",
                         "--compare", "mcnemar,bootstrap:rounds=200", "--json-out", str(path))
    assert code == 0, err
    assert "macro-F1, 3-fold CV" in out and "log-loss, 3-fold CV" in out and "Brier score" in out
    assert "McNemar vs pa" in out and "mean rank" not in out  # rank was not asked for
    assert "95% bootstrap interval" in out
    from textcw.evaluation.suite import SuiteReport

    report = SuiteReport.from_json(path)
    assert SuiteReport.from_json(report.to_json()) == report
    assert [m["name"] for m in report.metrics] == ["error", "macro-f1", "log-loss", "brier", "ece"]
    assert report.compared == ["mcnemar", "bootstrap"] and report.baseline == "pa"  # the first learner
    for cell in report.cells:
        assert cell.metrics["error"] == cell.fold_errors and cell.metrics["macro-f1"] == cell.fold_macro_f1
        # pa has no predict_proba: no probability metric for it, rather than a made-up one
        assert (cell.metrics["log-loss"] == [None] * 3) == (cell.learner == "pa")
    assert [row[2] for row in report.verdicts["bootstrap"].rows] == ["arow", "nb"]


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["--design", "cv:fold=3"], "design 'cv' has no option 'fold' (its options: folds, sample, seed, tune, "
                                    "quick, noise); did you mean 'folds'?"),
        (["--design", "holdout", "--folds", "3"], "--folds does not apply to design 'holdout'"),
        (["--design", "holdout", "--sample", "100"], "--sample does not apply to design 'holdout'"),
        (["--design", "cv:folds=3", "--folds", "4"], "folds is given twice"),
        (["--design", "cv:folds=1"], "at least 2 folds"),
        (["--design", "cv:folds=true"], "folds=True is invalid; give an integer"),
        (["--design", "crossval"], "unknown design 'crossval'; valid design names: active, combination, curve, cv, holdout, noise, online"),
        (["--split", "--design", "cv"], "--split is --design holdout"),
        (["--metric", "eror"], "did you mean 'error'?"),
        (["--metric", "error,error"], "metric 'error' is listed twice"),
        (["--metric", "error:bins=3"], "metric 'error' has no option 'bins' (its options: none)"),
        (["--compare", "mcnemer"], "did you mean 'mcnemar'?"),
        (["--compare", "rank", "--baseline", "pa"], "--baseline is the reference of a comparison"),
        (["--compare", "bootstrap:rounds=5"], "rounds=5 is invalid"),
        (["--design", "noise", "--quick"], None),  # noise tunes by default: --quick is fine (not run here)
    ],
)
def test_bad_components_exit_2_with_one_line(capsys, argv, fragment, monkeypatch):
    if fragment is None:
        import textcw.evaluation.dispatch as dispatch

        def stop(*args, **kwargs):
            raise ParameterError("stopped before running")

        monkeypatch.setattr(dispatch, "run_evaluation", stop)
        fragment = "stopped before running"
    code, out, err = run(capsys, "evaluate", "--corpus", "synthetic-text:100", "--learner", "pa", *argv)
    assert code == 2 and out == ""
    assert fragment in one_line_error(err)


@parametrize_with_checks([metric_under_test(m) for m in (Error, MacroF1, LogLoss, Brier, ECE)]
                         + [design_under_test(CV, folds=2), design_under_test(Holdout, task="synthetic:synthetic"),
                            design_under_test(Noise, folds=2, noise=[0.0, 0.2], tune=False)])
def test_builtin_components_pass_the_kit(component, check):
    check(component)


class Leaky(Metric):
    """Reads the scores without declaring them."""

    title = "leaky"

    def __call__(self, fold):
        return float(fold.class_scores().mean())


class Upside(Metric):
    """Calls a lower error better while returning accuracy."""

    title = "accuracy"

    def __call__(self, fold):
        return float(np.mean(fold.y_true == fold.y_pred))


class Overlapping(SplitDesign):
    options = {"seed": Option("int", 0, "seed")}

    def splits(self, task, seed):
        every = np.arange(len(task))
        return [(every, every[:10])]  # tests on documents it trained on


@pytest.mark.parametrize("component,check_name,message", [
    (metric_under_test(Leaky), "reads_only_what_it_declares", "add what it reads to needs"),
    (metric_under_test(Upside), "prefers_right_predictions", "check the direction or the formula"),
    (design_under_test(Overlapping), "splits_are_disjoint_and_seeded", "tests on documents it trains on"),
])
def test_the_kit_catches_broken_components(component, check_name, message):
    check = next(c for c in component.checks if c.name == check_name)
    with pytest.raises(AssertionError, match=message):
        check(component)


def test_a_metric_returning_nan_fails_the_task_in_one_line():
    from textcw.evaluation.cv import measure

    class NaNMetric(Metric):
        title = "nan"

        def __call__(self, fold):
            return float("nan")

    fold = Fold(np.array(["a", "b"]), np.array(["a", "a"]), np.array(["a", "b"]))
    with pytest.raises(PluginError, match="metric 'nan' returned nan; a metric returns a finite number"):
        measure({"nan": NaNMetric()}, fold, task="t", learner="pa")
    assert measure({"error": Error()}, fold, task="t", learner="pa") == {"error": 50.0}
    assert measure({"ll": LogLoss()}, fold, task="t", learner="pa") == {"ll": None}  # no probabilities


def test_options_are_checked_with_their_kind_and_bounds(tmp_path):
    declared = {"n": Option("int", 1, "how many", minimum=1), "rates": Option("floats", [0.0], "rates"),
                "path": Option("path", None, "a cost matrix")}
    assert check_options("x", declared, {"rates": [0, 1]}) == {"n": 1, "rates": [0.0, 1.0], "path": None}
    with pytest.raises(ParameterError, match=r"x: n=0 is invalid; how many \(>= 1\)"):
        check_options("x", declared, {"n": 0})
    with pytest.raises(ParameterError, match="is not a file"):
        check_options("x", declared, {"path": str(tmp_path)})
    big = tmp_path / "big.csv"
    big.write_bytes(b"0" * (1 << 20 | 1))
    with pytest.raises(ParameterError, match="larger than 1 MiB"):
        check_options("x", declared, {"path": str(big)})
    with pytest.raises(ValueError, match="Option kind 'list'"):
        Option("list")


def test_a_plugin_registers_a_metric_that_textcw_evaluate_runs(capsys, monkeypatch):
    import textcw
    from textcw.plugins import build_registries, get_plugin_manager, use_registries

    class Accuracy(Metric):
        title, better = "accuracy (%)", "higher"

        def __call__(self, fold):
            return 100.0 - Error()(fold)

    class Plugin:
        @textcw.hookimpl
        def register_metrics(self, register):
            register("accuracy", Accuracy, summary="Accuracy (%)")

    regs = build_registries(get_plugin_manager(entry_points=False, extra=[Plugin()]))
    with use_registries(regs):
        code, out, err = run(capsys, "evaluate", *SMALL, "--metric", "accuracy", "--json")
    assert code == 0, err
    report = json.loads(out)
    for cell in report["cells"]:
        assert cell["metrics"]["accuracy"] == [100.0 - e for e in cell["fold_errors"]]
    # higher is better: the best learner ranks 1 on accuracy as it did on error
    assert report["ranks"]["0.0"]["mean_rank"] == {"pa": 1.0, "cw-var": 3.0, "perceptron": 1.0}


def test_the_documented_commands_run_as_written(capsys):
    # docs/evaluation.md, "Designs, metrics and comparisons"
    code, out, err = run(capsys, *("evaluate --corpus synthetic-text:300:3 --learner pa,arow,nb --folds 3 "
                                   "--metric error,macro-f1,log-loss --compare mcnemar,bootstrap:rounds=200").split())
    assert code == 0, err
    titles = ["test error (%), 3-fold CV", "macro-F1, 3-fold CV", "log-loss, 3-fold CV", "95% bootstrap interval"]
    assert all(t in out for t in titles) and "mean rank" not in out
    assert [out.index(t) for t in titles] == sorted(out.index(t) for t in titles)
    code, out, err = run(capsys, *"evaluate --corpus synthetic-text:300 --learner pa --design holdout --folds 5".split())
    assert code == 2 and one_line_error(err) == (
        "error: --folds does not apply to design 'holdout' (its options: seed, tune, quick, noise); "
        "leave it out or choose another design")


def test_splits_are_checked_before_training():
    from textcw.evaluation.cv import check_splits
    from textcw.evaluation.data import TaskData
    from textcw.evaluation.specs import TaskSpec

    target = np.array([0, 1] * 5)
    pool = TaskData(TaskSpec("t:x"), list("abcdefghij"), target, ["neg", "pos"], "binary-bow")
    held = TaskData(TaskSpec("t:x", "split"), list("abcdefghij"), target, ["neg", "pos"], "binary-bow",
                    np.arange(6), np.arange(6, 10))
    assert [t.tolist() for t in check_splits(pool, [(np.arange(5), np.arange(5, 10))])[0]] == [
        [0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    for splits, message in [([], "gave no splits"),
                            ([(np.arange(5), np.arange(4, 10))], "tests on documents it trains on"),
                            ([(np.arange(5), np.array([5, 5]))], "distinct indices in 0..9"),
                            ([(np.arange(5), np.array([5, 10]))], "distinct indices in 0..9"),
                            ([(np.arange(5), np.array([], dtype=int))], "non-empty 1-d array"),
                            ([(np.arange(5), np.array([5.0, 6.0]))], "non-empty 1-d array"),
                            ([np.arange(5)], "not a (train, test) pair")]:
        with pytest.raises(PluginError, match=message.replace("(", r"\(").replace(")", r"\)")):
            check_splits(pool, splits)
    with pytest.raises(PluginError, match="tests outside the corpus's test split"):
        check_splits(held, [(np.arange(3), np.arange(3, 6))])


class Counting:
    """A majority-class learner that counts the scores and probabilities asked of it."""

    calls = {"decision_function": 0, "predict_proba": 0}

    def __init__(self):
        pass

    def get_params(self, deep=True):
        return {}

    def set_params(self, **params):
        return self

    def fit(self, X, y):
        self.classes_, counts = np.unique(y, return_counts=True)
        self.majority_ = self.classes_[np.argmax(counts)]
        return self

    def predict(self, X):
        return np.full(X.shape[0], self.majority_, dtype=object)

    def decision_function(self, X):
        Counting.calls["decision_function"] += 1
        return np.zeros(X.shape[0])

    def predict_proba(self, X):
        Counting.calls["predict_proba"] += 1
        return np.full((X.shape[0], len(self.classes_)), 1.0 / len(self.classes_))


@pytest.mark.parametrize("metrics,expected", [
    ({"error": Error(), "macro-f1": MacroF1()}, {"decision_function": 0, "predict_proba": 0}),
    ({"error": Error(), "ece": ECE()}, {"decision_function": 0, "predict_proba": 3}),
])
def test_only_what_a_chosen_metric_needs_is_computed(metrics, expected):
    import textcw
    from textcw.plugins import use_registries
    from textcw.testing import make_registries

    class Plugin:
        @textcw.hookimpl
        def register_learners(self, register):
            register("counting", Counting, summary="majority class, counting calls")

    Counting.calls.update(decision_function=0, predict_proba=0)
    with use_registries(make_registries(Plugin())):
        report = CV(folds=3).run(["synthetic-text:120"], ["counting"], metrics=metrics)
    assert Counting.calls == expected
    cell = report.cell("synthetic-text:120", "counting")
    assert cell.metrics["error"] == cell.fold_errors and len(cell.fold_errors) == 3
    if "ece" in metrics:  # uniform probabilities of the majority class: |accuracy - 0.5| per fold
        assert cell.metrics["ece"] == pytest.approx([abs(0.5 - (100 - e) / 100) for e in cell.fold_errors])


def test_a_per_class_first_metric_gets_no_rank_row(capsys):
    import textcw
    from textcw.plugins import build_registries, get_plugin_manager, use_registries

    class Recall(Metric):
        title, better, per_class = "recall per class", "higher", True

        def __call__(self, fold):
            return {str(c): float(np.mean(fold.y_pred[fold.y_true == c] == c)) for c in np.unique(fold.y_true)}

    class Plugin:
        @textcw.hookimpl
        def register_metrics(self, register):
            register("recall", Recall, summary="Recall of each class")

    with use_registries(build_registries(get_plugin_manager(entry_points=False, extra=[Plugin()]))):
        code, out, err = run(capsys, "evaluate", *SMALL, "--metric", "recall")
        assert code == 0, err
        assert out.splitlines()[-1] == "• highest recall in the row"  # no rank row, no McNemar
        assert "│ synthetic-text:300 │ neg   │" in out and "mean rank" not in out
        code, out, err = run(capsys, "evaluate", *SMALL, "--metric", "recall", "--compare", "rank")
        assert code == 2 and "put a metric with one number first (e.g. --metric error,recall)" in one_line_error(err)
