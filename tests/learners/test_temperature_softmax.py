"""The temperature's probabilities computed in place are scipy's softmax of numpy's standardized
scores, bit for bit (:func:`textcw.learners.temperature.softmax_rows`,
:func:`~textcw.learners.temperature.standardized_scores`)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import softmax

from textcw.learners.temperature import TemperatureScaling, softmax_rows, standardized_scores


def reference_standardized(scores, variances):
    """The formula as numpy states it: the mean variance by row, zero where it is not positive."""
    scale = variances if scores.ndim == 1 else variances.mean(axis=1, keepdims=True)
    out = np.zeros_like(scores, dtype=float)
    np.divide(scores, np.sqrt(np.maximum(scale, 0.0)), out=out, where=np.broadcast_to(scale > 0, scores.shape))
    return out


class _Scored:
    """A learner whose scores and margin variances are given."""

    def __init__(self, scores, variances):
        self.scores, self.variances = scores, variances

    def decision_function(self, X):
        return self.scores.copy()

    def margin_variance(self, X):
        return self.variances.copy()


def _cases(rng):
    for shape in [(1, 2), (32, 20), (7, 3), (5,), (64,)]:
        scores = rng.normal(scale=rng.choice([1e-3, 1.0, 30.0]), size=shape)
        variances = rng.gamma(0.5, size=shape)
        yield scores, variances
        zeroed = variances.copy()
        zeroed.flat[:: max(1, variances.size // 3)] = 0.0  # a document or label without variance
        yield scores, zeroed
        yield scores, -variances  # never from a learner, but defined: zero
        if len(shape) == 2:
            nan = variances.copy()
            nan[0, 0] = np.nan
            yield scores, nan


def test_standardized_scores_equal_the_formula_bit_for_bit():
    rng = np.random.default_rng(5)
    for scores, variances in _cases(rng):
        got = standardized_scores(scores, variances)
        want = reference_standardized(scores, variances)
        assert got.dtype == want.dtype == np.float64 and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), (scores.shape, variances)


def test_standardized_scores_of_other_dtypes_keep_numpy_mean():
    scores = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    variances = np.arange(1, 13, dtype=np.int64).reshape(3, 4)
    got = standardized_scores(scores, variances)
    assert got.tobytes() == reference_standardized(scores, variances).tobytes()


def test_softmax_rows_is_scipy_softmax_bit_for_bit_in_place():
    rng = np.random.default_rng(11)
    for n, k in [(1, 2), (32, 20), (3, 7), (100, 2)]:
        for scale in (1e-6, 1.0, 50.0, 800.0):  # 800: exp overflows without the shift
            x = rng.normal(scale=scale, size=(n, k))
            want = softmax(x, axis=1)
            work = x.copy()
            got = softmax_rows(work)
            assert got is work  # overwritten, no new array
            assert got.tobytes() == want.tobytes()


def test_softmax_rows_leaves_arrays_it_does_not_own_to_scipy():
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    frozen = x.copy()
    frozen.flags.writeable = False
    strided = np.asfortranarray(x)
    for given in (frozen, strided, x.astype(np.float32)):
        kept = given.copy()
        assert np.array_equal(softmax_rows(given), softmax(given, axis=1))
        assert np.array_equal(given, kept)  # unchanged


@pytest.mark.parametrize("margin", ["standardized", "raw"])
@pytest.mark.parametrize("top_bias", [0.0, 1.7])
@pytest.mark.parametrize("k", [1, 20])
def test_predict_proba_is_the_softmax_of_the_scaled_scores(margin, top_bias, k):
    rng = np.random.default_rng(k)
    shape = (40,) if k == 1 else (40, k)
    scores, variances = rng.normal(size=shape), rng.gamma(1.0, size=shape)
    scaling = TemperatureScaling(margin=margin, inverse_temperature=2.3, record="first", top_bias=top_bias)
    got = scaling.predict_proba(_Scored(scores, variances), None)
    z = reference_standardized(scores, variances) if margin == "standardized" else scores
    logits = np.column_stack([np.zeros_like(z), z]) if z.ndim == 1 else z
    scaled = 2.3 * logits
    if top_bias:
        ordered = np.sort(logits, axis=1)
        unique = ordered[:, -1] > ordered[:, -2]
        top = np.zeros(logits.shape)
        rows = np.arange(len(logits))
        top[rows[unique], np.argmax(logits, axis=1)[unique]] = 1.0
        scaled = scaled + top_bias * top
    want = softmax(scaled, axis=1)
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
