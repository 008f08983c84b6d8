"""The errors textcw raises on bad input.

Every error a user can cause derives from :class:`TextcwError`. Messages say what was wrong and
what to do about it; the CLI prints them on one line without a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TextcwError(Exception):
    """Base class of every error textcw reports to a user."""


class UnknownNameError(TextcwError, KeyError):
    """A learner, featurizer, corpus, task or evaluator name that is not registered."""

    def __init__(self, kind: str, name: str, valid: Iterable[str]):
        self.kind = kind
        self.name = name
        self.valid = sorted(valid)
        # Tasks are listed as "corpus:task" but may be named alone: compare with both forms.
        by_form = {v: v for v in self.valid} | {v.partition(":")[2]: v for v in self.valid if ":" in v}
        close = [by_form[m] for m in difflib.get_close_matches(str(name), list(by_form), n=1, cutoff=0.6)]
        hint = f"; did you mean {close[0]!r}?" if close else ""
        super().__init__(
            f"unknown {kind} {name!r}; valid {kind} names: {', '.join(self.valid) or '(none)'}{hint}"
        )

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class DuplicateNameError(TextcwError):
    """Two plugins register the same name in one registry."""


class ParameterError(TextcwError, ValueError):
    """A parameter value outside its allowed range, or an unknown parameter."""


class DataError(TextcwError):
    """A corpus file that is missing, corrupt, or in the wrong format."""


class InputError(TextcwError, ValueError):
    """Training or prediction input that cannot be used (shapes, labels, values)."""


class ModelFileError(TextcwError):
    """A model file that is missing, truncated, tampered with, or foreign."""


class OutputError(TextcwError):
    """An output destination that cannot be written safely: a folder, a device, a FIFO, a
    symbolic link, a missing or read-only folder, or the input file itself."""


class PluginError(TextcwError):
    """A plugin whose registered component cannot be loaded."""


class ClusterError(TextcwError):
    """A Dask scheduler that cannot be reached, has no workers, or keeps losing a task."""


class VarianceFloorWarning(UserWarning):
    """Many updates of a Gaussian learner left a variance at its numerical floor.

    From then on the model no longer depends on the confidence ``eta`` the way the papers'
    update does (see ``n_variance_floored_`` in docs/learners.md); a lower ``eta``, or a larger
    initial variance relative to the features' scale, usually avoids it.
    """
