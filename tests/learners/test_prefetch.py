"""The prefetch hints of the epoch loops (textcw.learners._kernels.prefetch): which cache lines
they hint, and that the compiled loops carry them inline rather than as calls.

The hint is a no-op without the JIT, so the lines are checked by recording the hints the plain
Python functions (``py_func``) make with a recorder in place of the intrinsic.
"""

from __future__ import annotations

import numpy as np
import pytest

from textcw._jit import DISABLED
from textcw.learners._kernels import prefetch as hints
from textcw.learners.interleaved import paired_state

LINE = 64


def plain(function):
    return getattr(function, "py_func", function)


@pytest.fixture
def recorded(monkeypatch):
    """The ``(array, i, k)`` of every hint the plain functions make."""
    calls = []
    monkeypatch.setattr(hints, "prefetch", lambda a, i, k: calls.append((a, int(i), int(k))))
    return calls


def lines_of(a, positions):
    """The cache lines (absolute address // 64) of the entries ``a[p]``."""
    return {(a.ctypes.data + p * a.strides[0]) // LINE for p in positions}


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.int64, np.float32])
def test_hint_lines_covers_every_line_of_the_range(recorded, dtype):
    a = np.zeros(300, dtype)
    step = plain(hints.line_step)(a)
    assert int(step) == LINE // a.itemsize
    rng = np.random.default_rng(0)
    for _ in range(200):
        start, stop = sorted(int(v) for v in rng.integers(0, a.size + 1, 2))
        recorded.clear()
        plain(hints.hint_lines)(a, np.uint64(start), np.uint64(stop), step)
        hinted = [p for arr, p, _ in recorded if arr is a]
        assert len(hinted) == len(recorded)
        assert all(start <= p < stop for p in hinted)
        # every line of a[start:stop] hinted, and no more hints than lines plus the last one
        assert lines_of(a, hinted) == lines_of(a, range(start, stop))
        assert len(hinted) <= len(lines_of(a, range(start, stop))) + 1


def test_row_ahead_is_the_row_ahead_in_order_and_empty_past_the_end():
    indptr = np.array([0, 3, 3, 7, 12], np.int32)
    order = np.array([2, 0, 3, 1], np.int64)
    row_ahead = plain(hints.row_ahead)
    ahead = [tuple(map(int, row_ahead(indptr, order, t, 2))) for t in range(4)]
    assert ahead == [(7, 12), (3, 3), (0, 0), (0, 0)]
    assert tuple(map(int, row_ahead(indptr, order, 0, 0))) == (3, 7)


def test_hint_features_hints_each_feature_of_a_vector_once(recorded):
    mu, _ = paired_state(50, 1.0)
    indices = np.array([4, 9, 31, 49, 0], np.int32)
    plain(hints.hint_features)(mu, indices, np.uint64(1), np.uint64(4), plain(hints.line_step)(mu))
    assert [(arr is mu, p) for arr, p, _ in recorded] == [(True, 9), (True, 31), (True, 49)]


@pytest.mark.parametrize("labels", [1, 3, 8, 20])
def test_hint_features_hints_every_line_of_a_feature_row(recorded, labels):
    W = np.zeros((30, labels))
    indices = np.array([7, 2, 29], np.int32)
    plain(hints.hint_features)(W, indices, np.uint64(0), np.uint64(3), plain(hints.line_step)(W))
    assert [int(i) for _, i, _ in recorded] == [int(j) for j in indices for _ in range(0, labels, LINE // 8)]
    for j in indices:  # one hint per 64 bytes of the row, from its start
        assert [k for _, i, k in recorded if i == j] == list(range(0, labels, LINE // W.itemsize))


@pytest.mark.skipif(DISABLED, reason="machine code exists only with the JIT")
def test_compiled_binary_loops_carry_the_hints_inline():
    """A call of a hint function would cost reference counting of its arrays on every row
    (prefetch.py's docstring): the binary epoch loops must have the hints inlined, so their
    machine code calls no function of the prefetch module (numba calls a function through its
    address, loaded by its mangled name). Compiled afresh (``uncached``):
    numba shows no machine code of a kernel loaded from its cache."""
    from textcw._jit import uncached
    from textcw.learners._kernels import diagonal_loop, feature_loop, first_order, gaussian_diag
    from textcw.learners._kernels.constants import AROW_SQUARED_HINGE, DIAG_KL, N_COUNTS, PA1

    indptr = np.array([0, 2, 3], np.int32)
    indices = np.array([1, 3, 0], np.int32)
    data = np.ones(3)
    y = np.array([1.0, -1.0])
    order = np.array([1, 0], np.int64)
    mu, s = paired_state(5, 1.0)
    w = np.zeros(5)
    diagonal = uncached(diagonal_loop.binary_loop)
    diagonal(indptr, indices, data, y, order, mu, s, gaussian_diag.STEP, gaussian_diag.VARIANCE,
             gaussian_diag.EXAMPLE, (AROW_SQUARED_HINGE, 0.0, 0.0, 1.0), DIAG_KL, 1e-12,
             np.zeros(N_COUNTS, np.int64), None, None, None)
    first = uncached(feature_loop.binary_loop)
    first(indptr, indices, data, y, order, (w,), first_order.WEIGHT, first_order.STEP, first_order.UPDATE,
          first_order.EXAMPLE, (PA1, 1.0, 1.0, 0.0), 0.0, None, None, None)
    assert mu.any() and w.any()  # both loops ran and updated
    for loop in (diagonal, first):
        (signature,) = loop.signatures
        code = loop.inspect_asm(signature)
        assert "prefetcht0" in code, f"{loop.__name__} hints no cache line"
        called = [line for line in code.splitlines()
                  if "$_ZN6textcw8learners8_kernels8prefetch" in line]  # the address of such a function
        assert not called, f"{loop.__name__} calls a function of the prefetch module: {called}"
