"""Ctrl-C (SIGINT) and SIGTERM end a command with one line and the conventional exit status.

Both signals raise :class:`KeyboardInterrupt` in the main thread, so every ``finally`` and
``with`` block on the way out runs: atomic writes remove their temporary files, downloads their
partial files, and process pools and Dask clusters shut their workers down. Library code that
reports partial results on ``KeyboardInterrupt`` (``textcw evaluate``) does the same for both.
The command then prints ``interrupted`` and exits with 128 + the signal's number: 130 for
SIGINT, 143 for SIGTERM, as a shell reports a process killed by that signal.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import NoReturn

import typer

__all__ = ["exit_interrupted", "handle_signals", "interrupted", "raise_if_interrupted"]


class _State:
    signal: int | None = None  # the signal that interrupted the command, if any
    reported: bool = False  # the "interrupted" line was printed


_state = _State()


def _interrupt(signum, frame) -> None:
    _state.signal = signum
    raise KeyboardInterrupt


@contextlib.contextmanager
def handle_signals():
    """Within the block, SIGINT and SIGTERM raise KeyboardInterrupt and are remembered."""
    _state.signal, _state.reported = None, False
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; a signal then acts as it would anyway
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    previous_hook = sys.unraisablehook
    sys.unraisablehook = _quiet_about_lost_interrupts
    try:
        yield
    finally:
        sys.unraisablehook = previous_hook
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _quiet_about_lost_interrupts(unraisable) -> None:
    """Where Python drops an exception (a ``__del__``, a weakref callback, the logging module's
    fork handlers while a process pool starts) it calls this hook. Our KeyboardInterrupt lost
    there is delivered again: the signal is sent once more a moment later, when the main thread
    is most likely back in ordinary code. Anything else gets the usual report."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt) and _state.signal is not None:
        if not _state.reported:
            resend = threading.Timer(0.05, os.kill, (os.getpid(), _state.signal))
            resend.daemon = True
            resend.start()
        return
    sys.__unraisablehook__(unraisable)


def raise_if_interrupted() -> None:
    """Raise KeyboardInterrupt if a signal came and its exception was lost.

    A handler's exception can be swallowed where Python ignores exceptions (a ``__del__``, a
    weakref callback, the logging module's fork handlers while a pool starts its workers): the
    command would then run on and write its output as if nothing had happened. Commands call
    this before they write a result.
    """
    if _state.signal is not None:
        raise KeyboardInterrupt


def interrupted() -> bool:
    """True once SIGINT or SIGTERM was received within :func:`handle_signals`."""
    return _state.signal is not None


def exit_interrupted(detail: str | None = None) -> NoReturn:
    """Print ``interrupted`` (once, with ``detail`` if given) and exit with 128 + the signal."""
    if not _state.reported:
        _state.reported = True
        typer.echo(f"interrupted: {detail}" if detail else "interrupted", err=True)
    raise SystemExit(128 + int(_state.signal or signal.SIGINT))
