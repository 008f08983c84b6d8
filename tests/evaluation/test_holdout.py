"""The ``holdout`` evaluator: ``train`` on the training split, accuracy on the test split."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.errors import ParameterError, UnknownNameError
from textcw.evaluation.holdout import holdout
from textcw.pipeline import train

SMALL_HASH = {"n_features": 2**12}


def test_named_in_the_evaluators():
    from textcw.evaluation import evaluators

    assert evaluators.holdout is holdout and "holdout" in evaluators.__all__


def test_a_run_is_train_with_the_evaluator_options():
    run = holdout(epochs=2, seed=5, featurizer_params=SMALL_HASH)
    result = run("synthetic-text:1500", "cw-var")
    direct = train("synthetic-text:1500", "cw-var", epochs=2, seed=5, featurizer_params=SMALL_HASH)
    np.testing.assert_array_equal(result.model.named_steps["learner"].coef_,
                                  direct.model.named_steps["learner"].coef_)
    assert (result.accuracy, result.n_train, result.n_test) == (direct.accuracy, 1500, 300)
    report = result.to_dict()
    assert report["accuracy"] == direct.accuracy and report["corpus"] == "synthetic-text:1500"


def test_options_of_a_run_override_those_of_the_evaluator():
    run = holdout(epochs=1, seed=5, featurizer_params=SMALL_HASH)
    overridden = run("synthetic-text:1500", "cw-var", epochs=3)
    direct = train("synthetic-text:1500", "cw-var", epochs=3, seed=5, featurizer_params=SMALL_HASH)
    assert overridden.mistakes == direct.mistakes and len(direct.mistakes) == 3


def test_bad_names_and_options_are_textcw_errors():
    run = holdout(featurizer_params=SMALL_HASH)
    with pytest.raises(UnknownNameError, match="^unknown learner 'no-such'"):
        run("synthetic-text:1500", "no-such")
    with pytest.raises(ParameterError, match=r"^CWVar: n_epochs=0 is invalid; n_epochs must be an integer in \[1, 1000000\]$"):
        run("synthetic-text:1500", "cw-var", epochs=0)
