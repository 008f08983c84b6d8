"""The online mistake curve of a fitted learner's first pass.

In its first pass every training document is predicted by the model before the model learns it,
so the mistakes counted there are mistakes on unseen documents (progressive validation, Blum,
Kalai and Langford, COLT 1999; the cumulative-mistakes figures of NIPS 2008 Figure 2a and AROW
2013 Figure 5). ``fit`` keeps only each pass's total (``mistakes_``); :func:`first_pass_curve`
replays the first pass to read the running count along it.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import clone

from textcw.learners.selftune import check_training_data, epoch_orders

CURVE_POINTS = 100


def first_pass_curve(learner, fitted, X, y, *, points: int = CURVE_POINTS) -> dict | None:
    """``{"documents": [...], "mistakes": [...]}``: the cumulative online mistakes of ``fitted``'s
    first pass after each of about ``points`` evenly spaced numbers of documents (every 1% by
    default; the last is every document).

    ``learner`` is the unfitted learner ``fitted`` was fitted from. The replay is a copy of it
    with one epoch and the values fitting chose for its ``"auto"`` parameters
    (``tuned_params_``), fed the first pass's documents in the order ``fit`` drew, in ``points``
    chunks through ``partial_fit``. The learner counts each document's mistake before updating
    on it, so the count at every chunk boundary is exact, per document, and the pass is the
    one ``fit`` made: the last point equals ``fitted.mistakes_[0]`` (for SGD, whose weights
    are rescaled at the end of every call, up to rounding). Costs one pass of one model.

    ``None`` when it cannot be replayed: a learner that does not count its mistakes
    (``mistakes_``) or has no ``partial_fit``, or an order that cannot be drawn again
    (``shuffle`` with a ``random_state`` that is not a number).
    """
    params = learner.get_params(deep=False)
    if not (hasattr(learner, "partial_fit") and getattr(fitted, "mistakes_", None)
            and {"n_epochs", "shuffle", "random_state"} <= set(params)):
        return None
    seed = params["random_state"]
    if params["shuffle"] and not isinstance(seed, numbers.Integral):
        return None
    X, y, labels = check_training_data(X, y, "first_pass_curve")
    n = X.shape[0]
    order = next(epoch_orders(n, 1, params["shuffle"], seed))
    Xe, ye = (X[order], y[order]) if params["shuffle"] else (X, y)
    replay = clone(learner).set_params(**dict(getattr(fitted, "tuned_params_", {})), n_epochs=1)
    bounds = np.unique(np.linspace(0, n, min(points, n) + 1).round().astype(int))
    documents, mistakes, total = [], [], 0
    for start, stop in zip(bounds[:-1], bounds[1:]):
        replay.partial_fit(Xe[start:stop], ye[start:stop], classes=labels)
        total += int(replay.mistakes_[-1])
        documents.append(int(stop))
        mistakes.append(total)
    return {"documents": documents, "mistakes": mistakes}
