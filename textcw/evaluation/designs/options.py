"""The options several designs declare (the seed, tuning, the sample, training label noise), and
the check of a list option.
"""

from __future__ import annotations

from textcw.errors import ParameterError
from textcw.evaluation.contract import Option

__all__ = ["NOISE", "QUICK", "SAMPLE", "SEED", "TUNE", "check_distinct"]

SEED = Option("int", 0, "seed of folds, samples, shuffling and noise", minimum=0)
TUNE = Option("bool", False, "choose parameters and passes on a tuning run first")
QUICK = Option("bool", False, "with tune: a smaller grid")
NOISE = Option("floats", [0.0], "training label-noise rates, each in [0, 1)")  # checked by run_suite
SAMPLE = Option("int", None, "use a class-balanced sample of this many documents of each task", minimum=2)


def check_distinct(design: str, name: str, values) -> None:
    """Refuse a list option naming a value twice (it would run and print the same row twice)."""
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        raise ParameterError(f"design {design!r}: {name} lists {', '.join(map(str, twice))} twice; list each once")
