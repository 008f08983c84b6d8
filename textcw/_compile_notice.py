"""A one-line notice when a command starts compiling kernels (the first run on a machine).

numba compiles each kernel the first time it is used and caches the machine code on disk
(:mod:`textcw._jit`), so the first ``textcw train`` on a machine spends most of its time (20 s
or more, against a few seconds warm) compiling, with nothing on the screen to say why. The
command line calls :func:`enable` in its own process; :mod:`textcw._jit_numba`, which imports
numba when a kernel is first used, calls :func:`attach`, which listens to numba's ``"numba:compile"`` event (sent only when
a kernel is compiled, not when it is loaded from the cache) and writes the notice once, on a
terminal. Piped or captured output is left as it is (scripts and logs parse it), and the
library used from Python stays silent; worker processes forked from the command do not repeat
the notice. A command that waits for another process compiling a kernel it needs says that
instead (:func:`waiting`), once.
"""

from __future__ import annotations

import os
import sys

NOTICE = ("textcw: compiling the kernels this command uses for this machine's CPU; only the first "
          "run does this (later runs load them from the cache) ...")
WAITING = ("textcw: another process is compiling the kernels this command uses; waiting for it "
           "(at most {seconds:.0f} s a kernel) ...")
_enabled_in: int | None = None  # the process id of the command that enabled the notice
_attached = False
_shown = False
_waiting_shown = False


def enable() -> None:
    """Show the notice in this process (the command line's) when a kernel is compiled."""
    global _enabled_in
    _enabled_in = os.getpid()
    if "textcw._jit_numba" in sys.modules:
        attach()  # kernels were used before the command line started (e.g. by a test)


def attach() -> None:
    """Listen for compilations (called by :mod:`textcw._jit_numba` when it has imported numba)."""
    global _attached
    if _attached or _enabled_in != os.getpid():
        return
    from numba.core import event

    class CompileNotice(event.Listener):
        def on_start(self, ev) -> None:
            _notice()

        def on_end(self, ev) -> None:
            pass

    event.register("numba:compile", CompileNotice())
    _attached = True


def waiting(seconds: float) -> None:
    """Say, once, that this command waits for another process compiling a kernel it needs
    (:func:`textcw._jit_numba.compile_lock`): without it, a command whose kernels another,
    stopped process (Ctrl-Z) was compiling would sit silent for the whole wait."""
    global _waiting_shown
    if _waiting_shown or _enabled_in != os.getpid():
        return
    _waiting_shown = True
    _write(WAITING.format(seconds=seconds))


def _notice() -> None:
    global _shown
    if _shown or _enabled_in != os.getpid():
        return
    _shown = True
    _write(NOTICE)


def _write(line: str) -> None:
    stream = sys.stderr
    try:
        if stream is not None and stream.isatty():
            stream.write(line + "\n")
            stream.flush()
    except (OSError, ValueError):  # a closed or broken stream: the notice is not worth an error
        pass
