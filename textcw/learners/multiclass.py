"""The multi-class update strategies shared by CW, AROW, PA and the perceptron.

``multiclass`` chooses how an example with true label ``y`` constrains the model against the
other labels (docs/algorithms.md "Multi-class"; EMNLP 2009 section 5; MLJ 2013 section 3.3),
``k`` how many competitors (the highest-scoring labels other than ``y``) take part:

- ``"top1"``: the single top competitor, one binary update (the default; ``k`` is 1);
- ``"seq"``: the top-k competitors in order, one binary update each from the current parameters;
- ``"par"``: k binary updates from the same start, means and precisions averaged;
- ``"exact"``: the k-constraint problem solved jointly (:mod:`textcw.learners._kernels.hildreth`).

``k`` is an integer in ``1..K-1``, ``"all"`` (``K - 1``), or ``None``: 1 for ``top1``, every
competitor for the others. Binary problems have one competitor and use the binary update for
every strategy.
"""

from __future__ import annotations

import math

from textcw.errors import ParameterError
from textcw.learners._kernels.constants import MC_EXACT, MC_PAR, MC_SEQ, MC_TOP1
from textcw.learners.params import AnyOf, Interval, Options

MULTICLASS_CODES = {"top1": MC_TOP1, "seq": MC_SEQ, "par": MC_PAR, "exact": MC_EXACT}
MULTICLASS = Options(tuple(MULTICLASS_CODES))
K_COMPETITORS = AnyOf((Options((None, "all")), Interval(1, math.inf, closed="left", integer=True)))
CONSTRAINTS = {"multiclass": MULTICLASS, "k": K_COMPETITORS}


def check_strategy(estimator) -> None:
    """Refuse ``k`` with ``top1`` (combinations are checked by each learner)."""
    k = estimator.k
    if estimator.multiclass == "top1" and k not in (None, 1):
        raise ParameterError(
            f"{type(estimator).__name__}: k={k!r} needs multiclass='seq', 'par' or 'exact'; "
            "multiclass='top1' updates against the single highest-scoring competitor (k=1)"
        )


def competitors(estimator, n_classes: int) -> int:
    """The number of competitors for ``n_classes`` labels; a ``k`` out of range is an error."""
    k = estimator.k
    if k is None:
        return 1 if estimator.multiclass == "top1" else n_classes - 1
    if k == "all":
        return n_classes - 1
    if not 1 <= k <= n_classes - 1:
        raise ParameterError(
            f"{type(estimator).__name__}: k={k!r} is out of range for K={n_classes} classes; k "
            f"must be an integer in 1..{n_classes - 1} (1..K-1: the labels other than the true "
            "one) or 'all'"
        )
    return int(k)

