"""The errors textcw raises on bad input.

Every error a user can cause derives from :class:`TextcwError`. Messages say what was wrong and
what to do about it; the CLI prints them on one line without a traceback. What was typed wrong
(a name, a parameter, an option, a corpus or table specification) is a :class:`UsageError`, and
the command line exits 2 for it; any other error (a file, the data, the environment) exits 1.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TextcwError(Exception):
    """Base class of every error textcw reports to a user."""


def closest(name: object, valid: Iterable[str]) -> str | None:
    """The valid name ``name`` most likely means: the one that differs only in case
    (``SCW1`` -> ``scw1``), else the closest spelling (``cw-stedv`` -> ``cw-stdev``); ``None``
    when none is close. Tasks listed as ``corpus:task`` also match their task alone."""
    text = str(name)
    by_form: dict[str, str] = {}
    for value in valid:
        by_form.setdefault(value, value)
        if ":" in value:
            by_form.setdefault(value.partition(":")[2], value)
    folded: dict[str, str] = {}
    for form, value in by_form.items():
        folded.setdefault(form.casefold(), value)
    if text.casefold() in folded:
        return folded[text.casefold()]
    close = difflib.get_close_matches(text.casefold(), list(folded), n=1, cutoff=0.6)
    return folded[close[0]] if close else None


def did_you_mean(name: object, valid: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the :func:`closest` valid name, else ``""``: the end of a
    message about an unknown name."""
    match = closest(name, valid)
    return f"; did you mean {match!r}?" if match is not None and match != str(name) else ""


class UsageError(TextcwError):
    """What was typed is wrong: an unknown name, a bad parameter, an option or argument that is
    missing, malformed or out of place, a corpus or table specification that does not parse. The
    command line exits 2 for these (and 1 for any other error: a file, the data, the
    environment)."""


class UnknownNameError(UsageError, KeyError):
    """A learner, featurizer, corpus, task or evaluator name that is not registered."""

    def __init__(self, kind: str, name: str, valid: Iterable[str]):
        self.kind = kind
        self.name = name
        self.valid = sorted(valid)
        hint = did_you_mean(name, self.valid)
        super().__init__(
            f"unknown {kind} {name!r}; valid {kind} names: {', '.join(self.valid) or '(none)'}{hint}"
        )

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.args[0]


class DuplicateNameError(TextcwError):
    """Two plugins register the same name in one registry."""


class ParameterError(UsageError, ValueError):
    """A parameter value outside its allowed range, or an unknown parameter."""


class DataError(TextcwError):
    """A corpus file that is missing, corrupt, or in the wrong format."""


class InputError(TextcwError, ValueError):
    """Training or prediction input that cannot be used (shapes, labels, values)."""


class SpecError(UsageError, InputError, DataError):
    """A corpus or table specification typed wrong (``--corpus``, ``--input``): a path-taking
    corpus without its path (``--corpus csv``), an unknown ``?`` option, a column the file does
    not have. It is also an :class:`InputError` and a :class:`DataError`, the classes such
    mistakes were reported as before."""


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
