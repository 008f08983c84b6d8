"""What the user typed, checked before any work: its errors are usage errors (exit 2).

The rule of every command (docs/reference/cli.md, "Exit codes"): what was typed wrong exits 2
(:class:`~textcw.errors.UsageError`), what is wrong with a file, the data or the environment
exits 1. A corpus specification (``--corpus csv:data.csv?text=body``, ``--input ...``) is typed
text, parsed before any file is read: a corpus's ``task_check`` that refuses it, or a table
option that does not parse, says what was typed wrong, whatever class it raised, so it is
reported as a :class:`~textcw.errors.SpecError`.
"""

from __future__ import annotations

from contextlib import contextmanager

from textcw.errors import InputError, SpecError, UsageError
from textcw.plugins import resolve_corpus

# The learner `textcw train` and `textcw evaluate` use when none is named (docs/learners.md:
# "the safe default", self-tuned and calibrated by `textcw train`).
DEFAULT_LEARNER = "scw1"


@contextmanager
def typed(what: str | None = None):
    """Within the block, an :class:`~textcw.errors.InputError` is a mistake in the typed text:
    raised again as a :class:`~textcw.errors.SpecError` (the same message, prefixed with
    ``what`` when given and not already said)."""
    try:
        yield
    except UsageError:
        raise
    except InputError as exc:
        message = str(exc)
        if what and not message.startswith(what):
            message = f"{what}: {message}"
        raise SpecError(message) from None


def resolve_typed_corpus(spec: str):
    """``(entry, task)`` of a ``--corpus`` value, checked as typed text: an unknown corpus or
    task, a corpus that takes a path given none (``--corpus csv``), or a specification its
    corpus refuses (``csv:data.csv?txt=body``) is a usage error. Nothing is read yet: the
    files are checked when the corpus is loaded."""
    with typed():
        entry, task = resolve_corpus(spec)
        if task is None and entry.takes_path and entry.task_check is not None:
            entry.task_check("")  # raises the corpus's own "csv needs a file: --corpus csv:PATH"
    return entry, task


def default_learner_note() -> str:
    """The status line saying which learner was chosen for the user (once the run is done, so
    that an error stays the one line on stderr)."""
    return f"learner {DEFAULT_LEARNER} (the default; choose others with --learner, see textcw list learners)"
