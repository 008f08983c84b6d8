"""textcw.kernels.per_feature_kernels: the epoch loop of variants whose state is per-feature
vectors. A recording update shows what the loop calls, in which order, with which arguments; the
guards are checked one by one; a passive-aggressive step on the loop equals textcw's own PA-I
kernels bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal

from textcw.kernels import bind_kernel, kernel, per_feature_kernels
from textcw.learners._kernels import first_order
from textcw.learners._kernels.constants import PA1


@kernel
def first_weight(state, c):
    return state[0][c]


@kernel
def offset_step(m, q, params):
    """``tau = offset + scale q - m``: the recorded ``g`` tells which ``m`` and ``q`` it saw."""
    return params[0] + params[1] * q - m


@kernel
def recording_update(state, c, x, g, params):
    """``w[c] += g x``, and the call appended to ``log`` as ``(c, x, g)`` (``log[0]``: count)."""
    w, log = state
    w[c] += g * x
    n = int(log[0])
    log[1 + 3 * n] = c
    log[2 + 3 * n] = x
    log[3 + 3 * n] = g
    log[0] = n + 1


RECORDING = per_feature_kernels(first_weight, offset_step, recording_update, state=("w", "log"),
                                params=("offset", "scale", "theta"), threshold="theta")


def csr(rows, d):
    X = sp.csr_matrix(np.array(rows, dtype=float).reshape(-1, d))
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    return X


def calls(log):
    n = int(log.ravel()[0])
    return [tuple(log.ravel()[1 + 3 * k: 4 + 3 * k]) for k in range(n)]


# Row 0: x = (1, 0, 2), y = +1; row 1: empty, y = -1; row 2: x = (0, 3, 0), y = -1.
ROWS = [[1, 0, 2], [0, 0, 0], [0, 3, 0]]


def run_binary(offset, scale, theta, order=(0, 1, 2, 0)):
    X = csr(ROWS, 3)
    w, log = np.zeros(16), np.zeros(16)
    got = RECORDING.binary(X.indptr, X.indices, X.data, np.array([1.0, -1.0, -1.0]),
                           np.array(order, np.int64), w, log, offset, scale, theta)
    return got, w, calls(log)


def test_binary_loop_by_hand():
    """theta = 0.5, tau = 1 - m.
    Row 0: m = +1 (0 - 0.5) = -0.5, a mistake; tau = 1.5, g = +1.5 on features 0 and 2.
    Row 1 is empty: no mistake (m = 0.5), and its step is not called (it would return 0.5 > 0).
    Row 2: m = -1 (0 - 0.5) = 0.5, correct; tau = 0.5, g = -0.5 on feature 1.
    Row 0 again: score 1.5 + 3 = 4.5, m = 4, tau = -3: no update."""
    (mistakes, updates), w, log = run_binary(1.0, 0.0, 0.5)
    assert (mistakes, updates) == (1, 2)
    assert log == [(0, 1, 1.5), (2, 2, 1.5), (1, 3, -0.5)]
    assert_array_equal(w[:3], [1.5, -1.5, 3.0])


def test_the_step_sees_the_squared_norm():
    """tau = q - m: row 0 has q = 1 + 4 = 5 and m = -0.5 (theta 0.5), row 2 q = 9 and m = 0.5."""
    _, _, log = run_binary(0.0, 1.0, 0.5, order=(0, 2))
    assert log == [(0, 1, 5.5), (2, 2, 5.5), (1, 3, -8.5)]


def test_a_tie_is_a_mistake_counted_before_the_update():
    """theta = 0 and w = 0: row 0 ties (m = 0), a mistake; the update then makes it correct, and
    the second visit is not a mistake. Row 2 ties too."""
    (mistakes, updates), _, log = run_binary(1.0, 0.0, 0.0, order=(0, 0, 2))
    assert mistakes == 2  # the first visit of row 0 and row 2; not the second visit of row 0
    assert updates == 2 and [c for c, _, _ in log] == [0, 2, 1]


@pytest.mark.parametrize("offset, scale", [(math.nan, 0.0), (0.0, math.inf), (-10.0, 0.0), (-0.5, 0.0)])
def test_a_step_that_is_not_finite_and_positive_makes_no_update(offset, scale):
    """NaN, inf, a negative and a zero tau (-0.5 + 0.5 on row 0): the weights are untouched, the update is never
    called, and the mistakes are still counted (row 0 and row 0 again: m = -0.5 both times)."""
    (mistakes, updates), w, log = run_binary(offset, scale, 0.5)
    assert (mistakes, updates) == (2, 0)
    assert log == [] and not w.any()


def test_multiclass_loop_by_hand():
    """K = 3, cells j * 3 + k. Row 0 (x = (1, 0, 2), label 2): every score is 0, so the best other
    label is 0 (ties to the lowest index) and m = 0, a mistake; the step sees q = 2 |x|^2 = 10
    (tau = 10 - 0 with offset 0, scale 1), and each non-zero raises the label's cell (+tau) then
    lowers the competitor's (-tau). theta is a binary parameter: it changes nothing here."""
    X = csr([[1, 0, 2]], 3)
    for theta in (0.0, 7.0):
        W, log = np.zeros((16, 3)), np.zeros((16, 3))  # the log needs the room
        got = RECORDING.top1(X.indptr, X.indices, X.data, np.array([2]), np.array([0]), W, log,
                             0.0, 1.0, theta)
        assert tuple(got) == (1, 1)
        assert calls(log) == [(0 * 3 + 2, 1, 10.0), (0 * 3 + 0, 1, -10.0),
                              (2 * 3 + 2, 2, 10.0), (2 * 3 + 0, 2, -10.0)]
        assert_array_equal(W[:3], [[-10, 0, 10], [0, 0, 0], [-20, 0, 20]])
        assert not W[3:].any()


def test_the_state_arrays_must_agree_in_shape():
    X = csr(ROWS, 3)
    y, order = np.array([1.0, -1.0, -1.0]), np.arange(3)
    with pytest.raises(ValueError, match="shape"):
        RECORDING.binary(X.indptr, X.indices, X.data, y, order, np.zeros(16), np.zeros(15), 1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="shape"):
        RECORDING.top1(X.indptr, X.indices, X.data, np.array([0, 1, 0]), order, np.zeros((3, 2)),
                       np.zeros((3, 3)), 1.0, 0.0, 0.0)


def test_the_kernels_bind_by_the_names_they_were_built_with():
    from textcw.learners._kernels import feature_loop
    from textcw.learners.protocol import DATA_ARGUMENTS

    assert feature_loop.DATA_ARGUMENTS == DATA_ARGUMENTS
    call = bind_kernel(RECORDING.binary, ("w", "log"), {"theta": 0.5, "scale": 2.0, "offset": 1.0})
    assert call.args == (1.0, 2.0, 0.5)
    assert RECORDING.state == ("w", "log") and RECORDING.params == ("offset", "scale", "theta")
    with pytest.raises(Exception, match="state_names"):
        bind_kernel(RECORDING.top1, ("u", "v"), {"theta": 0.5, "scale": 2.0, "offset": 1.0})


@pytest.mark.parametrize("kwargs, message", [
    ({"state": (), "params": ("a",)}, "state must be a non-empty tuple of identifiers"),
    ({"state": ("w",), "params": ("a b",)}, "params must be a non-empty tuple of identifiers"),
    ({"state": ("w",), "params": ("lambda",)}, "params must be a non-empty tuple of identifiers"),
    ({"state": ("w", "w"), "params": ("a",)}, "'w' is used twice"),
    ({"state": ("data",), "params": ("a",)}, "'data' is used twice or is one of the kernel's other"),
    ({"state": ("w",), "params": ("w",)}, "'w' is used twice or is one of the kernel's other"),
    ({"state": ("w",), "params": ("float",)}, "'float' is used twice or is one of the kernel's other"),
    ({"state": ("w",), "params": ("a",), "threshold": "theta"}, "threshold must be one of params"),
])
def test_the_factory_refuses_names_it_cannot_build_a_kernel_with(kwargs, message):
    with pytest.raises(TypeError, match=message):
        per_feature_kernels(first_weight, offset_step, recording_update, **kwargs)


@kernel
def pa1_step(m, q, params):
    """PA-I (Crammer et al., JMLR 2006, eq. for PA-I): ``tau = min(C, max(0, 1 - m) / q)``."""
    loss = 1.0 - m
    if not loss > 0.0 or q <= 0.0:
        return 0.0
    return min(params[0], loss / q)


@kernel
def additive_update(state, c, x, g, params):
    state[0][c] += g * x


PA1_LOOP = per_feature_kernels(first_weight, pa1_step, additive_update, state=("mu",), params=("C",))


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("binary", [True, False])
def test_a_passive_aggressive_step_equals_textcws_own_kernel_exactly(binary, index_dtype):
    """PA-I written as a step, on the loop, against textcw's hand-written PA-I kernels: same
    weights to the bit, same counters, over shuffled epochs (the loop's scores, norms, margins,
    competitor and update order are those of the built-in kernels)."""
    rng = np.random.default_rng(4)
    X = sp.random(200, 30, density=0.2, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    if binary:
        y = np.where(X @ rng.normal(size=30) > 0, 1.0, -1.0)
        mine, theirs = np.zeros(30), np.zeros(30)
    else:
        y = np.argmax(X @ rng.normal(size=(30, 4)), axis=1).astype(np.int64)
        mine, theirs = np.zeros((30, 4)), np.zeros((30, 4))
    loop = PA1_LOOP.binary if binary else PA1_LOOP.top1
    builtin = first_order.binary_epoch if binary else first_order.multiclass_top1_epoch
    for _ in range(3):
        order = rng.permutation(200)
        got = loop(X.indptr, X.indices, X.data, y, order, mine, 0.5)
        want = builtin(X.indptr, X.indices, X.data, y, order, theirs, PA1, 0.5)
        assert tuple(got) == tuple(want)
        assert_array_equal(mine, theirs)
    assert want[1] > 0 and np.abs(mine).max() > 0


@kernel
def scaled_weight(state, c):
    return state[0][c] * state[1][c]


@kernel
def unit_step(m, q, params):
    return 1.0


@kernel
def multiplying_update(state, c, x, g, params):
    """``w[c] = w[c] * factor + g x``: with a factor of 1e200 it overflows on the second visit."""
    state[0][c] = state[0][c] * params[0] + g * x


OVERFLOWING = per_feature_kernels(scaled_weight, unit_step, multiplying_update, state=("w", "s"),
                                  params=("factor",))


@pytest.mark.parametrize("binary", [True, False])
def test_an_update_that_overflows_is_undone_and_refused(binary):
    """No non-finite value enters the state: the document whose update overflowed is undone
    (every cell it touched back to its value before it) and the loop raises."""
    X = csr([[1, 0, 2], [0, 3, 0]], 3)
    if binary:
        w, s, y, loop = np.zeros(3), np.ones(3), np.array([1.0, -1.0]), OVERFLOWING.binary
    else:
        w, s, y, loop = np.zeros((3, 2)), np.ones((3, 2)), np.array([1, 0]), OVERFLOWING.top1
    loop(X.indptr, X.indices, X.data, y, np.array([1, 0], np.int64), w, s, 1.0)  # finite
    w[1] *= 1e10  # row 1's cells now overflow at a factor of 1e300; row 0's do not
    before = w.copy()
    with pytest.raises(FloatingPointError, match="made a state value infinite or NaN"):
        loop(X.indptr, X.indices, X.data, y, np.array([1], np.int64), w, s, 1e300)
    assert_array_equal(w, before)
    loop(X.indptr, X.indices, X.data, y, np.array([0], np.int64), w, s, 1e300)  # still learns
    assert np.abs(w[0]).max() > 1e299
    assert np.isfinite(w).all() and np.isfinite(s).all()


@kernel
def nan_weight(state, c):
    return state[0][c] * math.nan


def test_a_nan_margin_counts_as_a_mistake():
    loop = per_feature_kernels(nan_weight, offset_step, additive_update, state=("w",), params=("a", "b"))
    X = csr(ROWS, 3)
    mistakes, _ = loop.binary(X.indptr, X.indices, X.data, np.array([1.0, -1.0, -1.0]),
                              np.array([0, 2], np.int64), np.zeros(3), -1.0, 0.0)
    assert mistakes == 2  # before: a NaN margin compared as "not <= 0" and counted as correct
