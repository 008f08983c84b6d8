"""The learner check ``learns_from_mistakes``: a learner learns something on separable data.

A learner whose kernel never updates (a state array rebound instead of written in place, a step
that is always zero, a parameter that disables the update) hands back the model it started
from: the zero model predicts one label, yet ``fit`` returns without a word. Neither may a
kernel's default stand in for a value the learner never passes. textcw warns about both while
training (:class:`~textcw.learners.protocol.LearnerContractWarning`); this check makes them
failures of the kit, and asks of any learner (not only textcw's subclasses) that its scores on
held-out documents differ.
"""

from __future__ import annotations

import warnings

import numpy as np

from textcw.learners.protocol import LearnerContractWarning
from textcw.testing.runner import fail

__all__ = ["learns_from_mistakes"]


def learns_from_mistakes(s) -> None:
    """Fit on the kit's binary and 3-class problems: no contract warning, some update (where
    the learner counts them in ``n_updates_``) and scores that are not the same for every
    held-out document."""
    for what, X, y, Xt, _ in s.problems:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("ignore")
            warnings.simplefilter("always", LearnerContractWarning)
            est = s.make().fit(X, y)
        contract = [w for w in caught if issubclass(w.category, LearnerContractWarning)]
        if contract:
            fail(f"{what}: fit warned {contract[0].category.__name__}: {contract[0].message}")
        updates = getattr(est, "n_updates_", None)
        if isinstance(updates, list) and updates and sum(updates) == 0:
            fail(f"{what}: fit made no update in {len(updates)} epochs (n_updates_={updates}, "
                 f"mistakes_={getattr(est, 'mistakes_', '?')}) on a separable problem: the model "
                 "is the one it started from; the kernel must write the state arrays in place and "
                 "return (mistakes, updates)")
        if hasattr(est, "decision_function"):
            scores = np.asarray(est.decision_function(Xt), dtype=float)
            if scores.size and np.all(scores == scores.flat[0]):
                fail(f"{what}: every held-out document gets the score {float(scores.flat[0])!r}: the "
                     "model learned nothing from the training data")
        elif len(np.unique(np.asarray(est.predict(Xt)).astype(str))) < 2:
            fail(f"{what}: it predicts one label for every held-out document of a separable "
                 "problem: the model learned nothing from the training data")
