"""The base of every evaluation report: a dataclass that round-trips through JSON.

Reports hold plain data only (numbers, strings, lists, dicts and nested reports), so
``Report.from_dict(report.to_dict())`` rebuilds an equal report and ``--json`` files can be
read back to redraw tables and plots without rerunning anything. :class:`Verdict`, the table a
comparison concludes with, is one.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from textcw.atomic import atomic_write_text


def _plain(value):
    """Numpy scalars and arrays, tuples and nested reports -> JSON types."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _rebuild(hint, value):
    """Rebuild ``value`` (from JSON) as the type ``hint`` declares: nested reports and lists of them."""
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(hint):
            if arg is not type(None):
                return _rebuild(arg, value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint.from_dict(value) if hasattr(hint, "from_dict") else hint(**value)
    if origin is list:
        (arg,) = typing.get_args(hint) or (typing.Any,)
        return [_rebuild(arg, v) for v in value]
    if origin is dict:
        args = typing.get_args(hint)
        arg = args[1] if len(args) == 2 else typing.Any
        return {k: _rebuild(arg, v) for k, v in value.items()}
    if hint is float and isinstance(value, int):
        return float(value)
    return value


class Report:
    """Mixin for report dataclasses: ``to_dict``, ``from_dict``, ``to_json``, ``from_json``."""

    def to_dict(self) -> dict:
        return _plain(self)

    @classmethod
    def from_dict(cls, data: dict):
        hints = typing.get_type_hints(cls)
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: _rebuild(hints[k], v) for k, v in data.items() if k in names})

    def to_json(self, path: str | Path | None = None) -> str:
        # Reports use None for "not available"; a stray NaN is written as null too, since
        # strict JSON readers reject the bare NaN token.
        text = json.dumps(_nan_to_none(self.to_dict()), indent=1, sort_keys=True)
        if path is not None:
            atomic_write_text(path, text + "\n")
        return text

    @classmethod
    def from_json(cls, text_or_path: str | Path):
        text = str(text_or_path)
        if isinstance(text_or_path, Path) or not text.lstrip().startswith("{"):
            text = Path(text_or_path).read_text()
        return cls.from_dict(json.loads(text))


@dataclass
class Verdict(Report):
    """What a comparison concludes, as a table (printed, and kept in the JSON report); a
    :class:`~textcw.evaluation.contract.Comparison` returns one."""

    title: str
    columns: list[str]
    rows: list[list] = field(default_factory=list)


def _nan_to_none(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {k: _nan_to_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_nan_to_none(v) for v in value]
    return value
