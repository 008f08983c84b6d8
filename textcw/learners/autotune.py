"""``"auto"`` hyperparameters: a learner that tunes itself in one pass over its own stream.

A learner whose tunable parameter (``eta`` for CW, ``r`` for AROW, ``eta`` and ``C`` for SCW,
``C`` for PA-I and PA-II; each class declares them in ``tuning``, a tuple of
:class:`textcw.learners.selftune.Axis`) is ``"auto"`` runs the candidates its class declares
for those parameters side by side
and keeps the one with the fewest online mistakes, counted before each update (progressive
validation; :mod:`textcw.learners.selftune` explains the grids, stated in the units of the data,
and what it costs). The learner then *is* the winning candidate: its state, ``mistakes_`` and
predictions are those of the learner fitted with the winning values, which ``tuned_params_``
records; the parameter itself stays ``"auto"`` (scikit-learn's ``fit`` does not change
parameters).

- ``fit``: every candidate over the first pass, the winner alone over the other passes; the
  choice is then fixed, and a later ``partial_fit`` continues the winner.
- ``partial_fit`` from scratch: every call updates every candidate and adds to its online
  mistakes, so the choice follows the stream; the learner holds the candidates (their states
  take ``G`` times the memory of one model, for ``G`` candidates).
"""

from __future__ import annotations

from dataclasses import dataclass

from sklearn.base import clone

from textcw.errors import ParameterError
from textcw.learners.inputs import check_features
from textcw.learners.params import AnyOf
from textcw.learners.selftune import SelfTuning, auto_params, default_grid

AUTO = "auto"


@dataclass(frozen=True)
class _Auto:
    """The constraint that accepts exactly ``"auto"``."""

    def contains(self, value) -> bool:
        return _is_auto(value)

    def describe(self) -> str:
        return repr(AUTO)


def auto_or(constraint) -> AnyOf:
    """``constraint``, or the value ``"auto"`` (described after it: "a number > 0 or 'auto'")."""
    return AnyOf((constraint, _Auto()))


def auto_names(learner) -> list[str]:
    """The learner's tunable parameters that are set to ``"auto"``."""
    return [name for name in auto_params(learner) if _is_auto(getattr(learner, name, None))]


def _is_auto(value) -> bool:
    return isinstance(value, str) and value == AUTO


def candidates(learner, X, names) -> list[dict]:
    """The default grid's values for ``names`` in the units of ``X``, each combination once."""
    grid = default_grid(learner, X)
    missing = sorted(set(names) - set(grid[0]))
    if missing:
        raise ParameterError(
            f"{type(learner).__name__}: {missing[0]}='auto' is not supported (self-tuning: "
            f"{', '.join(auto_params(learner)) or 'none'})"
        )
    out: list[dict] = []
    for combination in grid:
        chosen = {name: combination[name] for name in names}
        if chosen not in out:
            out.append(chosen)
    return out


def _as_grid(cands: list[dict]) -> list[dict]:
    """Candidates as SelfTuning's grid: one single-valued dict per candidate, in order."""
    return [{name: [value] for name, value in c.items()} for c in cands]


def fit(learner, X, y):
    """``learner.fit(X, y)`` with its ``"auto"`` parameters chosen by progressive validation."""
    learner.__dict__.pop("_tuner", None)
    grid = candidates(learner, _features(learner, X), auto_names(learner))
    tuner = SelfTuning(clone(learner), grid=_as_grid(grid)).fit(X, y)
    _become(learner, tuner)
    return learner


def partial_fit(learner, X, y, classes):
    """One pass of every candidate over ``(X, y)``; the learner becomes the best so far."""
    tuner = learner.__dict__.get("_tuner")
    if tuner is None:
        grid = candidates(learner, _features(learner, X), auto_names(learner))
        tuner = SelfTuning(clone(learner), grid=_as_grid(grid))
    tuner.partial_fit(X, y, classes=classes)
    _become(learner, tuner)
    learner.__dict__["_tuner"] = tuner
    return learner


def _features(learner, X):
    """``X`` as the canonical CSR the grid's data scale is read from (the candidates check it
    again, with ``y``, as every fit does)."""
    return check_features(X, None, estimator=type(learner).__name__)


def _become(learner, tuner) -> None:
    """Make ``learner`` the tuner's best candidate (its arrays, not copies), recording the values
    and every candidate's online error."""
    best = tuner.best_estimator_
    learner.load_state_dict({**best.state_dict(), "tuned": dict(tuner.best_params_)})
    learner.tuning_ = {
        "candidates": [dict(c) for c in tuner.candidates_],
        "online_error": [float(e) for e in tuner.online_error_],
        "n_online": int(tuner.n_online_),
    }
