"""parametrize_with_checks: one pytest item per check, with readable ids and strict xfails."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from kit_components import Backwards, CentroidLearner
from sklearn.feature_extraction.text import CountVectorizer
from textcw.learners.perceptron import Perceptron
from textcw.testing import (
    FEATURIZER_CHECKS,
    LEARNER_CHECKS,
    check_learner,
    check_names,
    featurizer_under_test,
    iter_checks,
    learner_under_test,
    parametrize_with_checks,
)
from hang import HANG_SECONDS

LEARNER_CHECK_NAMES = [
    "builds_unfitted", "params_round_trip", "fits_and_predicts", "is_deterministic",
    "sparse_and_dense_agree", "handles_empty_rows", "refuses_bad_input", "survives_joblib",
    "clone_after_fit_is_unfitted", "reports_mistakes", "learns_from_mistakes", "partial_fit_streams",
    "overrides_only_hooks", "parameters_take_effect", "passes_sklearn_contract",
]
FEATURIZER_CHECK_NAMES = [
    "builds_unfitted", "fits_and_transforms", "transforms_unseen_documents", "is_deterministic",
    "leaves_input_alone", "survives_joblib", "feeds_a_learner",
]


def words():
    return CountVectorizer(decode_error="replace")


def test_the_checks_are_listed_in_order():
    assert check_names("learner") == LEARNER_CHECK_NAMES
    assert check_names("featurizer") == FEATURIZER_CHECK_NAMES
    assert [c.name for c in LEARNER_CHECKS] == LEARNER_CHECK_NAMES
    assert [c.name for c in FEATURIZER_CHECKS] == FEATURIZER_CHECK_NAMES
    with pytest.raises(ValueError, match="kind must be one of learner, featurizer; got 'corpus'"):
        check_names("corpus")


def test_the_example_plugin_readme_lists_the_checks_in_order():
    readme = (Path(__file__).resolve().parents[2] / "plugins" / "textcw-example" / "README.md").read_text()
    for kind, names in (("learner", LEARNER_CHECK_NAMES), ("featurizer", FEATURIZER_CHECK_NAMES)):
        listed = re.search(rf"^- {kind}: (.*?)(?=^- |^$)", readme, re.M | re.S).group(1)
        assert re.findall(r"`(\w+)`", listed)[:len(names)] == names


def test_one_param_per_check_with_readable_ids():
    mark = parametrize_with_checks([CentroidLearner, featurizer_under_test(words, name="words")])
    argnames, params = mark.args
    assert argnames == "component, check"
    ids = [p.id for p in params]
    assert ids == ([f"CentroidLearner-{n}" for n in LEARNER_CHECK_NAMES]
                   + [f"words-{n}" for n in FEATURIZER_CHECK_NAMES])
    assert all(not p.marks for p in params)
    kinds = {p.values[0].label for p in params}
    assert kinds == {"learner CentroidLearner", "featurizer words"}


def test_the_kind_of_a_bare_factory_is_told_by_what_it_builds():
    pairs = list(iter_checks([Perceptron, words, CountVectorizer(decode_error="replace")]))
    assert [component.kind for component, _ in pairs] == (
        ["learner"] * len(LEARNER_CHECKS) + ["featurizer"] * 2 * len(FEATURIZER_CHECKS))
    with pytest.raises(ValueError, match="builds dict, which has neither predict.*learner_under_test"):
        list(iter_checks([dict]))
    with pytest.raises(ValueError, match="takes learners and featurizers.*got 3"):
        list(iter_checks([3]))


def test_each_check_fails_on_its_own_with_the_all_in_one_message():
    component = learner_under_test(Backwards)
    results = {}
    for _, check in iter_checks([component]):
        try:
            check(component)
            results[check.name] = "passed"
        except AssertionError as exc:
            results[check.name] = str(exc)
    failed = [name for name, result in results.items() if result != "passed"]
    # Scoring backwards loses accuracy after fit and after a streamed pass; nothing else breaks.
    assert failed == ["fits_and_predicts", "partial_fit_streams"]
    assert results["partial_fit_streams"].startswith(
        "learner Backwards fails partial_fit_streams: 2-class: held-out accuracy 0.")
    with pytest.raises(AssertionError) as first:
        check_learner(Backwards)
    assert str(first.value) == results["fits_and_predicts"]


def test_expected_failures_become_strict_xfails():
    component = learner_under_test(Backwards, expected_failures={
        "fits_and_predicts": "scores backwards", "partial_fit_streams": "same"})
    _, params = parametrize_with_checks([component]).args
    marked = {p.id: p.marks[0] for p in params if p.marks}
    assert sorted(marked) == ["Backwards-fits_and_predicts", "Backwards-partial_fit_streams"]
    mark = marked["Backwards-fits_and_predicts"]
    assert mark.name == "xfail"
    assert mark.kwargs == {"strict": True, "raises": AssertionError, "reason": "scores backwards"}
    with pytest.raises(ValueError, match=r"unknown checks \['fits'\]; the checks of learner "
                                         r"Backwards are: builds_unfitted, params_round_trip"):
        learner_under_test(Backwards, expected_failures={"fits": "typo"})


def test_featurizer_documents_are_checked_when_the_component_is_made():
    rows = list(np.eye(5))
    with pytest.raises(ValueError, match="at least 6 documents"):
        featurizer_under_test(lambda: None, rows)
    with pytest.raises(TypeError, match="needs a class, a factory function or an instance"):
        learner_under_test(3)


def test_pytest_reports_every_failing_check(tmp_path):
    """In a real run, each check is an item: both failures show, the rest pass, and an expected
    failure that starts passing fails the run (strict)."""
    (tmp_path / "test_plugin_kit.py").write_text(textwrap.dedent('''
        from textcw.learners.perceptron import Perceptron
        from textcw.testing import learner_under_test, parametrize_with_checks

        class Backwards(Perceptron):
            def decision_function(self, X):
                return -super().decision_function(X)

        @parametrize_with_checks([
            learner_under_test(Backwards, sklearn_checks=False),
            learner_under_test(Perceptron, sklearn_checks=False,
                               expected_failures={"is_deterministic": "it is not"}),
        ])
        def test_contract(component, check):
            check(component)
    '''))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE",
                          str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=HANG_SECONDS)
    out = run.stdout
    assert run.returncode == 1, out + run.stderr
    failed = sorted(line.split("::")[1].split(" ")[0] for line in out.splitlines()
                    if line.startswith("FAILED"))
    assert failed == ["test_contract[Backwards-fits_and_predicts]",
                      "test_contract[Backwards-partial_fit_streams]",
                      "test_contract[Perceptron-is_deterministic]"], out
    assert "[XPASS(strict)] it is not" in out
    assert "3 failed, 27 passed" in out
