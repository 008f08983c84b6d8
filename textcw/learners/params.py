"""Declarative parameter checks for learners: one line per parameter, one clear error."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from textcw.errors import ParameterError


@dataclass(frozen=True)
class Interval:
    """A real (or integer) range; ``closed`` says which ends are included."""

    low: float = -math.inf
    high: float = math.inf
    closed: str = "neither"  # "neither" | "left" | "right" | "both"
    integer: bool = False
    # How to state the lower end when the range has a natural one (e.g. "> 0") and the bounds
    # only keep values numerically meaningful: "a number > 0, between 1e-100 and 1e+100".
    natural: str = ""

    def contains(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        # An integer parameter takes integers (Python's or numpy's), not floats that happen to
        # be whole: 1.0 epochs or a seed of 1e3 is a typo, and numpy would refuse it later.
        if self.integer and not isinstance(value, numbers.Integral):
            return False
        if math.isnan(value):
            return False
        lo_ok = value >= self.low if self.closed in ("left", "both") else value > self.low
        hi_ok = value <= self.high if self.closed in ("right", "both") else value < self.high
        return lo_ok and hi_ok

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a number"
        if self.natural:
            return f"{kind} {self.natural}, between {_number(self.low)} and {_number(self.high)}"
        if self.high == math.inf:
            op = ">=" if self.closed in ("left", "both") else ">"
            return f"{kind} {op} {self.low:g}"
        left = "[" if self.closed in ("left", "both") else "("
        right = "]" if self.closed in ("right", "both") else ")"
        return f"{kind} in {left}{_number(self.low)}, {_number(self.high)}{right}"


def _number(value) -> str:
    """A bound as people write it: integers in full, other values in ``%g`` form."""
    return f"{int(value):d}" if float(value).is_integer() and abs(value) < 1e15 else f"{value:g}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values."""

    values: tuple

    def contains(self, value) -> bool:
        return any(value == v and type(value) is type(v) for v in self.values)

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class AnyOf:
    """Accepts a value any of its members accept (e.g. ``None`` or an integer seed)."""

    members: tuple

    def contains(self, value) -> bool:
        return any(m.contains(value) for m in self.members)

    def describe(self) -> str:
        return " or ".join(m.describe() for m in self.members)


POSITIVE = Interval(0.0, closed="neither")
BOOL = Options((True, False))
SEED = AnyOf((Options((None,)), Interval(0, 2**32 - 1, closed="both", integer=True)))

# The epochs run in a Python loop and ``mistakes_``/``n_updates_`` keep one count per epoch, so the
# number of epochs is an allocation and a loop driven by the caller: it is bounded. The papers
# train for at most about 20 passes (the tune and curve evaluators try up to 10); a million
# passes is far past convergence for every learner here and keeps those lists to a few MB.
MAX_EPOCHS = 1_000_000
EPOCHS = Interval(1, MAX_EPOCHS, closed="both", integer=True)

# Scale parameters: the initial variance ``a`` (CW, AROW, SCW, SOP), AROW's ``r``, the
# aggressiveness ``C`` (PA-I, PA-II, SCW) and SGD's ``eta0``. The updates use such a value ``p``
# through ``p``, ``1/p`` and their squares: the variance floor ``1e-12 a`` and the full-covariance
# factor ``a^{-1/2}``; AROW's ``beta = 1/(v + r)`` and precision increment ``1/r``; PA-II's and
# SCW-II's ``1/(2C)``, squared inside SCW-II's ``gamma``; SGD's step ``eta0 g x``. With ``p`` in
# [1e-100, 1e100] each such term, and the floor, is a normal double with a factor of about 1e100
# to spare on either side for the feature values (whose products the kernels bound separately,
# see ``textcw._csr``) and the sums over features and updates. Outside that range the updates
# of ordinary, unit-scale documents underflow to zero or overflow (and are then skipped by the
# kernels' guards): the learner would silently stop learning, or never start.
SCALE_LOW, SCALE_HIGH = 1e-100, 1e100
SCALE = Interval(SCALE_LOW, SCALE_HIGH, closed="both", natural="> 0")


def check_params(estimator, constraints: dict) -> None:
    """Raise :class:`ParameterError` for the first parameter outside its allowed values."""
    for name, allowed in constraints.items():
        value = getattr(estimator, name)
        if not allowed.contains(value):
            raise ParameterError(
                f"{type(estimator).__name__}: {name}={value!r} is invalid; {name} must be "
                f"{allowed.describe()}"
            )
