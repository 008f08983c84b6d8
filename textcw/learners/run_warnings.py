"""Warnings about a Gaussian learner's pass that its per-epoch counters reveal.

The kernels count the updates that left a variance at its floor and the joint solves whose
fallback did not reach the KKT conditions (``counts``, :mod:`textcw.learners._kernels.constants`);
``n_variance_floored_`` and ``n_solver_fallbacks_`` keep them per epoch, and these warnings say
once per fit when they matter (docs/learners.md).
"""

from __future__ import annotations

import warnings

from textcw.errors import VarianceFloorWarning
from textcw.learners._kernels.constants import COUNT_FLOORED, COUNT_SOLVER_UNCERTIFIED, VARIANCE_FLOOR

# VarianceFloorWarning when more than this fraction of an epoch's updates were floored, and at
# least this many (a handful of floored updates on a toy problem says nothing about the model).
FLOORED_WARNING_FRACTION = 0.1
FLOORED_WARNING_MIN = 10


def warn_about_counts(learner, counts) -> None:
    """Warn once per fit when a pass floored many variances or left joint solves uncertified."""
    updates = learner.n_updates_[-1]
    floored = int(counts[COUNT_FLOORED])
    warned = learner.__dict__.setdefault("_warned", set())
    if (floored >= FLOORED_WARNING_MIN and floored > FLOORED_WARNING_FRACTION * updates
            and "floor" not in warned):
        warned.add("floor")
        # The parameter that sets how fast variances shrink: eta for CW and SCW, r for AROW.
        knob = next((k for k in ("eta", "r") if k in learner.get_params(deep=False)), None)
        advice = ("a lower eta (e.g. 0.7)" if knob == "eta" else "a larger r" if knob == "r"
                  else "fewer epochs")
        depends = f" and stops depending on {knob}={getattr(learner, knob)!r}" if knob else ""
        warnings.warn(
            f"{type(learner).__name__}: {floored:,} of {updates:,} updates in this pass left a "
            f"variance at its floor (a * {VARIANCE_FLOOR:g}); there the model no longer "
            f"follows the update rule{depends}. Typical of dense, low-dimensional data: try "
            f"{advice}, or check n_variance_floored_",
            VarianceFloorWarning, stacklevel=4,
        )
    failed = int(counts[COUNT_SOLVER_UNCERTIFIED])
    if failed and "solver" not in warned:
        warned.add("solver")
        warnings.warn(
            f"{type(learner).__name__}: the joint multi-class solver (multiclass='exact') did not "
            f"reach the KKT conditions on {failed:,} example(s) in this pass, even after its "
            "fallback; their updates are approximate. multiclass='seq' avoids the joint solve",
            RuntimeWarning, stacklevel=4,
        )
