"""scikit-learn conformance: every registered learner (and every variant) passes sklearn's checks
and works in Pipeline, GridSearchCV, cross_val_score, clone and a joblib round trip."""

from __future__ import annotations

import io

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

import textcw
from textcw.default_plugins import learners as learners_plugin
from textcw.learners.gaussian import GaussianLinearClassifier

# The learners this package registers; a test below checks the list is complete, so a new
# learner cannot silently skip the conformance checks.
REGISTERED = ["perceptron", "averaged-perceptron", "pa", "pa1", "pa2", "sgd", "sop", "cw-var",
              "cw-stdev", "arow", "scw1", "scw2"]
# Every estimator is seeded (``random_state=0``), so each check's outcome is a fixed fact of
# the configuration: an expected failure is listed per configuration and per check, and is strict
# (a listed check that passes fails the run, so the entry has to be removed). The design
# decisions behind them are documented in docs/learners.md ("Expected scikit-learn check failures").
SEED = 0
PER_DOCUMENT_VARIANCE = (
    "design decision: predict_proba is Phi(mu.x / sqrt(x' Sigma x)) (CW's Gaussian margin), so each "
    "score is divided by that document's own standard deviation and probabilities can rank "
    "documents differently from decision_function; on this check's data they do for this configuration"
)
WINNER_PROBABILITY = (
    "design decision: multi-class predict_proba is P(label k has the highest score) under "
    "independent Gaussian scores, while predict is the argmax of the mean scores as in the papers; "
    "the two disagree on this check's data for documents whose competing labels have very "
    "different variances (the check's other assertions are repeated in test_learners.py)"
)
NON_NUMERIC_INPUT = (
    "design decision: non-numeric X raises textcw.errors.InputError (a ValueError carrying numpy's "
    "'argument must be a string or a real number' message), not a TypeError: every bad input is "
    "one textcw error class, which the command line reports on one line"
)
PROBA = "check_decision_proba_consistency"
TRAIN = "check_classifiers_train"

# (learner, parameters, checks that fail by design). A configuration whose outcome changes - a
# listed check passing or an unlisted one failing - fails the run.
CONFIGS = [
    ("perceptron", {}, ()), ("averaged-perceptron", {}, ()), ("pa", {}, ()), ("pa1", {}, ()),
    ("pa2", {}, ()), ("sgd", {}, ()), ("sop", {}, ()),
    ("cw-var", {}, (TRAIN, PROBA)), ("cw-stdev", {}, (PROBA,)), ("arow", {}, (PROBA,)),
    ("scw1", {}, (PROBA,)), ("scw2", {}, ()),
    ("sgd", {"loss": "log_loss", "learning_rate": "constant", "eta0": 0.1}, ()),
    ("sgd", {"loss": "modified_huber", "learning_rate": "invscaling", "eta0": 0.1}, ()),
    ("sop", {"covariance": "full"}, ()),
    ("cw-var", {"covariance": "diag-l2"}, (TRAIN, PROBA)),
    ("cw-var", {"covariance": "exact"}, (TRAIN, PROBA)),
    ("cw-var", {"covariance": "full"}, (TRAIN, PROBA)),
    ("cw-stdev", {"covariance": "diag-l2"}, (PROBA,)), ("cw-stdev", {"covariance": "exact"}, (PROBA,)),
    ("cw-stdev", {"covariance": "full"}, (PROBA,)),
    ("arow", {"covariance": "diag-l2"}, (PROBA,)), ("arow", {"covariance": "full", "loss": "hinge"}, (PROBA,)),
    ("scw1", {"covariance": "full"}, (PROBA,)), ("scw1", {"covariance": "diag-l2"}, ()),
    ("scw2", {"covariance": "full"}, (PROBA,)), ("scw2", {"covariance": "diag-l2"}, ()),
    # multi-class strategies: every strategy of every learner that has them, the covariance forms
    # they combine with, and the sampling probabilities (k is 1, "all" or the default: the
    # checks also fit two-class data, where k = 2 is out of range)
    ("perceptron", {"multiclass": "seq"}, ()), ("perceptron", {"multiclass": "par", "k": "all"}, ()),
    ("pa", {"multiclass": "seq"}, ()), ("pa", {"multiclass": "par"}, ()), ("pa", {"multiclass": "exact"}, ()),
    ("pa1", {"multiclass": "exact", "k": 1}, ()), ("pa2", {"multiclass": "exact", "k": "all"}, ()),
    ("cw-var", {"multiclass": "seq", "proba": "sampling"}, (TRAIN, PROBA)),
    ("cw-var", {"multiclass": "par", "covariance": "diag-l2"}, (TRAIN, PROBA)),
    ("cw-var", {"multiclass": "exact", "covariance": "full"}, (TRAIN, PROBA)),
    ("cw-stdev", {"multiclass": "seq", "covariance": "exact"}, (PROBA,)),
    ("cw-stdev", {"multiclass": "par", "covariance": "exact"}, (PROBA,)),
    ("cw-stdev", {"multiclass": "exact", "covariance": "diag-l2", "proba": "sampling"}, (TRAIN, PROBA)),
    ("arow", {"multiclass": "seq", "loss": "hinge"}, ()), ("arow", {"multiclass": "par", "covariance": "full"}, (PROBA,)),
    ("arow", {"multiclass": "exact", "proba": "sampling"}, ()),
    ("scw1", {"proba": "sampling"}, ()), ("scw2", {"proba": "sampling", "covariance": "full"}, (PROBA,)),
    ("scw1", {"multiclass": "seq"}, (PROBA,)), ("scw1", {"multiclass": "par", "covariance": "diag-l2"}, ()),
    ("scw2", {"multiclass": "par", "covariance": "full"}, (PROBA,)), ("scw2", {"multiclass": "seq"}, ()),
]
REASONS = {PROBA: PER_DOCUMENT_VARIANCE, TRAIN: WINNER_PROBABILITY}


def configured(name: str, params: dict):
    return textcw.make_learner(name, random_state=SEED, **params)


# Weighted examples (docs/algorithms.md "Weighted examples"): the learners and forms with a derived
# weighted update; the rest accept only weights of 0 (skip) and 1 (as is).
WEIGHTED = {"perceptron", "pa1", "pa2", "sgd", "arow", "scw1", "scw2"}
ONLINE_WEIGHTS = (
    "design decision: an online update depends on the model it starts from, so a weight of k is "
    "not k repetitions of the document (test_sample_weight.py checks where it is)"
)
ZERO_ONE_WEIGHTS = (
    "design decision: this configuration has no weighted update (a hard constraint, a full or "
    "exact covariance, or a k-competitor strategy on the check's multi-class data), so it refuses "
    "weights other than 0 and 1 with a ParameterError"
)
CLASS_WEIGHTS = (
    "design decision: the check asks for more than 87% of one class from weights of 1000 : 0.0001 "
    "on noisy blobs, which an online learner's capped or regularised step does not give "
    "(test_sample_weight.py checks that 'balanced' raises the minority class's recall)"
)


def weight_failures(name: str, params: dict) -> dict[str, str]:
    """The scikit-learn sample-weight checks this configuration fails by design."""
    weighted_form = name in WEIGHTED and params.get("covariance", "diag-kl") in ("diag-kl", "diag-l2")
    failures = {"check_sample_weight_equivalence_on_dense_data": ONLINE_WEIGHTS,
                "check_sample_weight_equivalence_on_sparse_data": ONLINE_WEIGHTS}
    if name in WEIGHTED:
        failures["check_class_weight_classifiers"] = CLASS_WEIGHTS
    if not (weighted_form and params.get("multiclass", "top1") == "top1"):
        failures["check_sample_weights_list"] = ZERO_ONE_WEIGHTS  # its data has three classes
    if not weighted_form:
        failures["check_sample_weights_not_overwritten"] = ZERO_ONE_WEIGHTS  # two classes
    return failures


# repr() names every non-default parameter, so it identifies a configuration.
EXPECTED = {repr(configured(name, params)): {"check_dtype_object": NON_NUMERIC_INPUT,
                                             **weight_failures(name, params),
                                             **{check: REASONS[check] for check in checks}}
            for name, params, checks in CONFIGS}


def expected_failures(estimator) -> dict[str, str]:
    return EXPECTED[repr(estimator)]


def all_estimators():
    return [configured(name, params) for name, params, _ in CONFIGS]


def test_every_configuration_is_listed_once_and_only_gaussian_learners_fail_by_design():
    assert len(EXPECTED) == len(CONFIGS)
    assert [name for name, params, _ in CONFIGS if not params] == REGISTERED
    for name, params, checks in CONFIGS:
        if checks:
            assert isinstance(configured(name, params), GaussianLinearClassifier), (name, params)


@parametrize_with_checks(all_estimators(), expected_failed_checks=expected_failures, xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_every_builtin_learner_is_checked():
    names = []
    learners_plugin.register_learners(lambda name, factory, summary="", **details: names.append(name))
    assert sorted(names) == sorted(REGISTERED)
    # every variant value of every choice parameter appears in the checked list
    for name in REGISTERED:
        constraints = type(textcw.make_learner(name)).constraints
        for param in ("covariance", "loss", "learning_rate", "multiclass", "proba"):
            if param in constraints:
                seen = {e.get_params()[param] for e in all_estimators()
                        if type(e) is type(textcw.make_learner(name))}
                allowed = set(constraints[param].values)
                if param == "multiclass" and name == "perceptron":
                    allowed.discard("exact")  # refused: the perceptron solves no problem jointly
                if param == "multiclass" and name in ("pa1", "pa2"):
                    # seq and par run PA's code with another step-size constant (checked with
                    # "pa"); exact solves a different problem per rule, so each is checked
                    allowed -= {"seq", "par"}
                if param == "loss" and name == "sgd":
                    allowed.discard("log")  # the deprecated alias of log_loss: the same model
                assert seen == allowed, (name, param)


DOCS = ["good great fine", "bad awful poor", "great good nice", "poor bad terrible",
        "fine nice good", "terrible awful bad"] * 5
LABELS = ["pos", "neg"] * 15


@pytest.mark.parametrize("name", REGISTERED)
def test_pipeline_grid_search_cross_val_and_joblib(name):
    pipe = Pipeline([("bow", CountVectorizer(binary=True)),
                     ("learner", textcw.make_learner(name, random_state=0))])
    assert np.mean(cross_val_score(pipe, DOCS, LABELS, cv=3)) == 1.0
    grid = GridSearchCV(pipe, {"learner__n_epochs": [1, 2]}, cv=3).fit(DOCS, LABELS)
    assert grid.best_params_["learner__n_epochs"] in (1, 2)
    fitted = clone(pipe).fit(DOCS, LABELS)
    buffer = io.BytesIO()
    joblib.dump(fitted, buffer)
    buffer.seek(0)
    loaded = joblib.load(buffer)
    np.testing.assert_array_equal(loaded.predict(DOCS), fitted.predict(DOCS))
    np.testing.assert_array_equal(loaded.decision_function(DOCS), fitted.decision_function(DOCS))
    # the loaded model keeps learning exactly like the original
    fitted[-1].partial_fit(fitted[0].transform(DOCS[:4]), LABELS[:4])
    loaded[-1].partial_fit(loaded[0].transform(DOCS[:4]), LABELS[:4])
    np.testing.assert_array_equal(loaded[-1].coef_, fitted[-1].coef_)
