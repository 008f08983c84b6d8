"""Averaged perceptron (Freund and Schapire, Machine Learning 1999; Collins, EMNLP 2002).

The online learner is the plain perceptron (``w += y x`` on a mistake, counted with ``w``); the
model it returns is the average of the weight vectors after each of the ``T`` examples seen so
far (over all epochs and ``partial_fit`` calls). Keeping that average explicitly would cost
``O(d)`` per example; instead, with the example counter ``c`` (1-based), every update also adds
``(c - 1) y x`` to ``u``, and ``mean_{t=1..T} w_t = w - u / T`` (Daume's trick): an update made at
example ``c`` is present in ``T - c + 1`` of the ``T`` averaged vectors. ``mu = w - u / T`` is
written at the end of every call.

Multi-class (top-1): on a mistake against the top competitor ``r``, ``w_y += x`` and ``w_r -= x``.

The epochs are the perceptron's rule on the per-feature loop (:mod:`.feature_loop`, with the
functions of :mod:`.first_order`) with its running average: ``(c - 1) y x`` is that average's
``lag * delta`` (:func:`.common.move_mean`), the same number since ``y = +-1``.
"""

from __future__ import annotations

from textcw._jit import kernel
from textcw.learners._kernels.constants import PERCEPTRON
from textcw.learners._kernels.feature_loop import binary_loop, top1_loop
from textcw.learners._kernels.first_order import EXAMPLE, STEP, UPDATE, WEIGHT

_PARAMS = (PERCEPTRON, 1.0, 1.0, 0.0)  # first_order's (rule, C, scale, lag)


@kernel
def _write_average(mu, w, u, count):
    """``mu = w - u / T`` (flattened arrays), after ``T = count[0]`` examples."""
    if count[0] > 0.0:
        inv = 1.0 / count[0]
        for j in range(mu.shape[0]):
            mu[j] = w[j] - u[j] * inv


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, w, u, count):
    mistakes, updates = binary_loop(indptr, indices, data, y, order, (w, u), WEIGHT, STEP, UPDATE,
                                    EXAMPLE, _PARAMS, 0.0, None, count, None)
    _write_average(mu, w, u, count)
    return mistakes, updates


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, w, u, count):
    mistakes, updates = top1_loop(indptr, indices, data, y, order, (w.reshape(w.size), u.reshape(u.size)),
                                  w.shape[1], WEIGHT, STEP, UPDATE, EXAMPLE, _PARAMS, None, count, None)
    _write_average(mu.reshape(mu.size), w.reshape(w.size), u.reshape(u.size), count)
    return mistakes, updates
