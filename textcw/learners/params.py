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

    def contains(self, value) -> bool:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return False
        if self.integer and not float(value).is_integer():
            return False
        if math.isnan(value):
            return False
        lo_ok = value >= self.low if self.closed in ("left", "both") else value > self.low
        hi_ok = value <= self.high if self.closed in ("right", "both") else value < self.high
        return lo_ok and hi_ok

    def describe(self) -> str:
        kind = "an integer" if self.integer else "a number"
        if self.high == math.inf:
            op = ">=" if self.closed in ("left", "both") else ">"
            return f"{kind} {op} {self.low:g}"
        left = "[" if self.closed in ("left", "both") else "("
        right = "]" if self.closed in ("right", "both") else ")"
        return f"{kind} in {left}{self.low:g}, {self.high:g}{right}"


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
EPOCHS = Interval(1, closed="left", integer=True)
BOOL = Options((True, False))
SEED = AnyOf((Options((None,)), Interval(0, 2**32 - 1, closed="both", integer=True)))


def check_params(estimator, constraints: dict) -> None:
    """Raise :class:`ParameterError` for the first parameter outside its allowed values."""
    for name, allowed in constraints.items():
        value = getattr(estimator, name)
        if not allowed.contains(value):
            raise ParameterError(
                f"{type(estimator).__name__}: {name}={value!r} is invalid; {name} must be "
                f"{allowed.describe()}"
            )
