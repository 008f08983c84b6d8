"""Balanced Winnow on textcw's per-feature epoch loop equals its former hand-written kernels
(tests/winnow_kernels_before.py) bit for bit: state and counters, over shuffled epochs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
import winnow_kernels_before as before
from numpy.testing import assert_array_equal
from test_balanced_winnow import SETTINGS, random_csr

from textcw_example import kernels
from textcw_example.winnow import BalancedWinnow


def problem(binary, seed, index_dtype):
    X = random_csr(300, 50, 0.15, seed, empty_rows=(3, 17))
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    rng = np.random.default_rng(seed)
    if binary:
        y = np.where(X @ rng.normal(size=50) > 0.1, 1.0, -1.0)
    else:
        y = np.argmax(X @ rng.normal(size=(50, 5)), axis=1).astype(np.int64)
    return X, y


@pytest.mark.parametrize("alpha, beta, theta, margin", SETTINGS + [(40.0, 1e-3, 0.5, 2.0)])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("binary", [True, False])
def test_the_loop_equals_the_hand_written_kernels_exactly(binary, index_dtype, alpha, beta, theta,
                                                          margin):
    """(40, 1e-3) on values 50 times larger drives weights to the saturation bounds, so the
    clipping is compared too."""
    X, y = problem(binary, 5, index_dtype)
    if alpha == 40.0:
        X.data *= 50.0
    shape = (50,) if binary else (50, 5)
    u, v = np.full(shape, 0.9), np.full(shape, 0.9)
    bu, bv = u.copy(), v.copy()
    new, old = ((kernels.binary_epoch, before.binary_epoch) if binary
                else (kernels.multiclass_epoch, before.multiclass_epoch))
    rng = np.random.default_rng(11)
    args = (np.log(alpha), np.log(beta), theta, margin)
    for _ in range(4):
        order = rng.permutation(300).astype(np.int64)
        got = new(X.indptr, X.indices, X.data, y, order, u, v, *args)
        want = old(X.indptr, X.indices, X.data, y, order, bu, bv, *args)
        assert tuple(got) == tuple(want)
        assert_array_equal(u, bu)
        assert_array_equal(v, bv)
    assert want[1] > 0
    if alpha == 40.0:
        assert u.max() == before.WEIGHT_MAX and v.min() == before.WEIGHT_MIN


@pytest.mark.parametrize("binary", [True, False])
def test_fit_equals_the_hand_written_kernels_exactly(binary):
    """Through fit (shuffled epochs, fit_intercept): the learner binds the loop's kernels by name."""
    X, y = problem(binary, 6, np.int64)
    labels = np.where(y > 0, "yes", "no") if binary else y
    model = BalancedWinnow(alpha=1.4, beta=0.7, theta=0.3, margin=0.1, n_epochs=3, random_state=3,
                           fit_intercept=True).fit(X, labels)
    Xb = sp.hstack([X, np.ones((300, 1))], format="csr")
    Xb.indices, Xb.indptr = Xb.indices.astype(np.int64), Xb.indptr.astype(np.int64)
    shape = (51,) if binary else (51, 5)
    u, v = np.ones(shape), np.ones(shape)
    epoch = before.binary_epoch if binary else before.multiclass_epoch
    rng = np.random.RandomState(3)
    counts = [epoch(Xb.indptr, Xb.indices, Xb.data, y, rng.permutation(300), u, v,
                    np.log(1.4), np.log(0.7), 0.3, 0.1) for _ in range(3)]
    state = model.fitted_state()
    assert_array_equal(state["u"], u)
    assert_array_equal(state["v"], v)
    assert list(zip(model.mistakes_, model.n_updates_)) == counts
