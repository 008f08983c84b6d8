"""Averaged perceptron (Freund and Schapire, Machine Learning 1999; Collins, EMNLP 2002).

The online learner is the plain perceptron (``w += y x`` on a mistake, counted with ``w``); the
model it returns is the average of the weight vectors after each of the ``T`` examples seen so
far (over all epochs and ``partial_fit`` calls). Keeping that average explicitly would cost
``O(d)`` per example; instead, with the example counter ``c`` (1-based), every update also adds
``(c - 1) y x`` to ``u``, and ``mean_{t=1..T} w_t = w - u / T`` (Daume's trick): an update made at
example ``c`` is present in ``T - c + 1`` of the ``T`` averaged vectors. ``mu = w - u / T`` is
written at the end of every call.

Multi-class (top-1): on a mistake against the top competitor ``r``, ``w_y += x`` and ``w_r -= x``.
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw.learners._kernels.common import column, row_dot, row_scores, top_competitor


@kernel
def binary_epoch(indptr, indices, data, y, order, mu, w, u, count):
    mistakes = 0
    updates = 0
    for step in range(order.shape[0]):
        i = order[step]
        count[0] += 1.0
        if y[i] * row_dot(indptr, indices, data, i, w) <= 0.0:
            mistakes += 1
            if indptr[i + 1] > indptr[i]:
                updates += 1
                lag = (count[0] - 1.0) * y[i]
                for p in range(column(indptr[i]), column(indptr[i + 1])):
                    j = column(indices[p])
                    w[j] += y[i] * data[p]
                    u[j] += lag * data[p]
    if count[0] > 0.0:
        inv = 1.0 / count[0]
        for j in range(mu.shape[0]):
            mu[j] = w[j] - u[j] * inv
    return mistakes, updates


@kernel
def multiclass_top1_epoch(indptr, indices, data, y, order, mu, w, u, count):
    mistakes = 0
    updates = 0
    scores = np.empty(w.shape[1])
    for step in range(order.shape[0]):
        i = order[step]
        yi = y[i]
        count[0] += 1.0
        row_scores(indptr, indices, data, i, w, scores)
        rc = top_competitor(scores, yi)
        if scores[yi] - scores[rc] <= 0.0:
            mistakes += 1
            if indptr[i + 1] > indptr[i]:
                updates += 1
                lag = count[0] - 1.0
                for p in range(column(indptr[i]), column(indptr[i + 1])):
                    j = column(indices[p])
                    w[j, yi] += data[p]
                    w[j, rc] -= data[p]
                    u[j, yi] += lag * data[p]
                    u[j, rc] -= lag * data[p]
    if count[0] > 0.0:
        inv = 1.0 / count[0]
        for j in range(mu.shape[0]):
            for k in range(mu.shape[1]):
                mu[j, k] = w[j, k] - u[j, k] * inv
    return mistakes, updates
