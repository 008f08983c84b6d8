"""``sgd`` takes scikit-learn's loss names: ``log_loss``, with ``log`` a deprecated alias."""

import json
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from tests.cli_run import run
from textcw.errors import ParameterError
from textcw.pipeline import make_learner


def _data():
    rng = np.random.default_rng(0)
    X = sp.random(60, 20, density=0.3, format="csr", random_state=1)
    y = np.where(rng.random(60) < 0.5, "a", "b")
    return X, y


def test_log_loss_is_accepted_and_fits_the_log_alias_model_exactly():
    X, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log_loss itself warns about nothing
        new = make_learner("sgd", loss="log_loss").fit(X, y)
    with pytest.warns(FutureWarning, match=r"loss='log' is deprecated.*use loss='log_loss'"):
        old = make_learner("sgd", loss="log").fit(X, y)
    np.testing.assert_array_equal(new.coef_, old.coef_)
    np.testing.assert_array_equal(new.decision_function(X), old.decision_function(X))
    hinge = make_learner("sgd", loss="hinge").fit(X, y)
    assert not np.array_equal(hinge.coef_, new.coef_)


def test_an_unknown_loss_names_log_loss():
    X, y = _data()
    with pytest.raises(ParameterError, match="log_loss"):
        make_learner("sgd", loss="logistic").fit(X, y)


def test_the_command_line_takes_log_loss(capsys):
    code, out, err = run(capsys, "train", "--corpus", "synthetic-text:600", "--learner", "sgd",
                         "--param", "loss=log_loss", "--json")
    assert code == 0, err
    assert json.loads(out)["params"]["loss"] == "log_loss"
