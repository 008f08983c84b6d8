"""The offset on the predicted label (``method="top-bias"``/``"auto"`` of fit_temperature): it
recovers a known offset, is never negative, keeps the argmax, round-trips as data, and the
held-out choice keeps the temperature alone where the offset does not help."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from textcw.errors import ParameterError
from textcw.learners.temperature import (
    BIAS_MAX,
    MIN_TOP_BIAS_SCORES,
    TemperatureScaling,
    fit_inverse_temperature,
    fit_temperature,
    fit_top_bias,
    held_out_log_losses,
    temperature_log_loss,
    top_bias_log_loss,
)


def _sample(n, k, beta, bias, seed):
    """Scores ``z`` and labels drawn from ``softmax(beta * z + bias * e_top)``."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n, k))
    logits = beta * z
    logits[np.arange(n), np.argmax(z, axis=1)] += bias
    p = softmax(logits, axis=1)
    y = (p.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return z, y


def test_the_fit_recovers_a_known_offset_and_temperature():
    z, y = _sample(20000, 10, 2.0, 1.0, seed=0)
    beta, bias = fit_top_bias(z, y, smoothing=False)
    assert beta == pytest.approx(2.0, abs=0.1) and bias == pytest.approx(1.0, abs=0.1)
    # one temperature alone must make the scores sharper to reach the top, which the offset spares
    assert fit_inverse_temperature(z, y, smoothing=False) > beta + 0.3


def test_the_fit_is_a_minimum_of_the_loss_it_states():
    z, y = _sample(3000, 6, 1.5, 0.7, seed=1)
    beta, bias = fit_top_bias(z, y)
    best = top_bias_log_loss(beta, bias, z, y, smoothing=True)
    for db, dc in ((1e-3, 0), (-1e-3, 0), (0, 1e-3), (0, -1e-3)):
        assert top_bias_log_loss(beta + db, bias + dc, z, y, smoothing=True) >= best - 1e-12


def test_over_confident_scores_get_no_offset_and_the_temperature_alone():
    # drawn with a negative offset: the best offset >= 0 is 0, where the fit is the temperature's
    z, y = _sample(5000, 8, 2.0, -1.0, seed=2)
    beta, bias = fit_top_bias(z, y)
    assert bias == 0.0
    assert beta == fit_inverse_temperature(z, y)


def test_no_offset_is_the_temperature_exactly():
    z, y = _sample(500, 5, 1.0, 0.0, seed=3)
    for beta in (0.0, 0.3, 2.0):
        assert top_bias_log_loss(beta, 0.0, z, y) == temperature_log_loss(beta, z, y)


def test_scores_without_information_get_neither():
    z = np.zeros((200, 4))
    y = np.arange(200) % 4
    assert fit_top_bias(z, y) == (0.0, 0.0)


@pytest.mark.parametrize("binary", [False, True])
def test_the_most_probable_label_is_the_highest_score_and_ties_stay_even(binary):
    rng = np.random.default_rng(4)
    z = rng.normal(size=300) if binary else rng.normal(size=(300, 7))
    z[:5] = 0.0  # empty documents: every label scores 0
    if not binary:
        z[5:10, :2] = 3.0  # a tie at the top between two labels

    class Scores:
        def decision_function(self, X):
            return z

    scaling = TemperatureScaling("raw", 1.3, "cross-fit", top_bias=2.0)
    proba = scaling.predict_proba(Scores(), None)
    logits = np.column_stack([np.zeros_like(z), z]) if binary else z
    np.testing.assert_array_equal(np.argmax(proba, axis=1), np.argmax(logits, axis=1))
    np.testing.assert_allclose(proba[:5], 1.0 / logits.shape[1])
    if not binary:
        np.testing.assert_allclose(proba[5:10, 0], proba[5:10, 1])
    # elsewhere the predicted label's odds against each other label are exp(1.3 * gap + 2)
    row = 20
    top = np.argmax(logits[row])
    other = (top + 1) % logits.shape[1]
    gap = logits[row, top] - logits[row, other]
    assert proba[row, top] / proba[row, other] == pytest.approx(np.exp(1.3 * gap + 2.0))


def test_auto_keeps_the_offset_only_when_it_lowers_the_held_out_log_loss():
    z, y = _sample(4000, 10, 2.0, 1.0, seed=5)
    losses = held_out_log_losses(z, y)
    assert losses["top-bias"] < losses["temperature"]
    assert fit_temperature(z, None, y, margin="raw", record="cross-fit", method="auto").top_bias > 0.5
    z, y = _sample(4000, 10, 2.0, -1.0, seed=6)
    plain = fit_temperature(z, None, y, margin="raw", record="cross-fit")
    chosen = fit_temperature(z, None, y, margin="raw", record="cross-fit", method="auto")
    assert chosen == plain and chosen.top_bias == 0.0


def test_auto_weighs_no_offset_on_few_scores():
    z, y = _sample(MIN_TOP_BIAS_SCORES - 1, 10, 2.0, 3.0, seed=7)
    assert fit_temperature(z, None, y, margin="raw", record="first", method="top-bias").top_bias > 0
    assert fit_temperature(z, None, y, margin="raw", record="first", method="auto").top_bias == 0.0


def test_the_offset_round_trips_as_data_and_a_plain_temperature_keeps_its_old_data():
    plain = TemperatureScaling("normalized", 2.5, "cross-fit", {"normalized": 0.4})
    assert "top_bias" not in plain.to_dict()
    assert TemperatureScaling.from_dict(plain.to_dict()) == plain
    biased = TemperatureScaling("normalized", 2.5, "cross-fit", {"normalized": 0.4}, top_bias=0.75)
    assert biased.to_dict()["top_bias"] == 0.75
    assert TemperatureScaling.from_dict(biased.to_dict()) == biased


@pytest.mark.parametrize("bad", [-0.1, BIAS_MAX * 2, True, "1", float("nan")])
def test_a_damaged_offset_is_refused_with_its_range(bad):
    data = {**TemperatureScaling("raw", 1.0, "first").to_dict(), "top_bias": bad}
    with pytest.raises(ParameterError, match=r"top_bias must be a number in \[0, 10\]"):
        TemperatureScaling.from_dict(data)


def test_an_unknown_method_is_refused_with_the_choices():
    with pytest.raises(ParameterError, match="method must be one of 'temperature', 'top-bias', 'auto'"):
        fit_temperature(np.zeros((4, 3)), None, np.arange(4) % 3, margin="raw", record="first", method="bias")


@pytest.mark.parametrize("name, n_classes", [("arow", 2), ("scw1", 4)])
def test_k_fold_cross_fitting_fits_the_out_of_fold_scores_of_k_clones(name, n_classes):
    """``folds=k``: the final model is the learner's own fit; the temperature is the one fitted
    to the scores each clone, fitted on k - 1 of k stratified folds, gives the fold it did not
    learn, divided by that clone's weight length."""
    from sklearn.base import clone
    from sklearn.model_selection import StratifiedKFold

    import textcw
    from sparse_data import random_sparse
    from textcw.learners.calibrated import Calibrated
    from textcw.learners.temperature import weight_norm

    X = random_sparse(400, 30, 0.25, seed=7)
    rng = np.random.default_rng(8)
    y = np.argmax(np.asarray(X @ rng.normal(size=(30, n_classes))) + rng.normal(size=(400, n_classes)), axis=1)
    learner = textcw.make_learner(name, n_epochs=2, random_state=3)
    done = []
    model = Calibrated(learner, folds=4, margin="normalized").fit(X, y, progress=lambda d, t: done.append((d, t)))
    assert model.folds_ == 4 and done[-1] == (4 * 2 * 400, 4 * 2 * 400)
    np.testing.assert_array_equal(model.estimator_.coef_, clone(learner).fit(X, y).coef_)
    z = np.zeros((400,) if n_classes == 2 else (400, n_classes))
    for fitted_on, scored in StratifiedKFold(4, shuffle=True, random_state=3).split(X, y):
        part = clone(learner).fit(X[fitted_on], y[fitted_on])
        z[scored] = part.decision_function(X[scored]) / weight_norm(part)
    expected = fit_temperature(z, None, np.searchsorted(np.unique(y), y), margin="raw", record="cross-fit")
    assert model.inverse_temperature_ == pytest.approx(expected.inverse_temperature, rel=1e-9)


def test_no_more_folds_than_the_rarest_label_has_documents():
    import textcw
    from sparse_data import random_sparse
    from textcw.learners.calibrated import Calibrated

    X = random_sparse(200, 20, 0.3, seed=1)
    y = np.where(np.arange(200) < 3, 2, np.arange(200) % 2)  # label 2 has 3 documents
    model = Calibrated(textcw.make_learner("arow", n_epochs=2), folds=5).fit(X, y)
    assert model.record_ == "cross-fit" and model.folds_ == 3
    with pytest.raises(ParameterError, match="folds=1 is invalid"):
        Calibrated(textcw.make_learner("arow"), folds=1).fit(X, y)
