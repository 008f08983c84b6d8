"""The ``textcw`` command line: typer commands that parse, call library functions and print.

Exit codes (docs/reference/cli.md): 0 success; 2 what was typed is wrong (typer's own usage
errors, and textcw's :class:`~textcw.errors.UsageError`: an unknown name, a bad parameter, an
option or argument missing or out of place, a corpus specification that does not parse); 1 what
is wrong is a file, the data or the environment (a missing file, a corrupt model, a bad row);
130 interrupted by Ctrl-C (SIGINT), 143 terminated (SIGTERM). Errors print one line (``error: ...``) without a traceback
unless ``TEXTCW_DEBUG=1``; typer's usage errors print its usage text and suggestion.

Start-up is kept light: this module and the command modules import only typer and textcw's
own light modules at the top; scikit-learn, scipy and numba are imported by the command that
needs them, so ``textcw --help``, ``textcw list`` and shell completion start quickly.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import NoReturn

import typer

from textcw import _compile_notice
from textcw._deferred import defer
from textcw.cli.metavars import HELP_OPTIONS, fix_metavars
from textcw.cli.plugin_commands import PluginCommand, PluginGroup
from textcw.cli.root import configure_logging
from textcw.cli.root import root as root_options  # not `root`: that name is the submodule's
from textcw.cli.signals import exit_interrupted, handle_signals, interrupted
from textcw.errors import TextcwError, UsageError
from textcw.plugins import default_plugin_manager, register_commands
from textcw.plugins.lazy import pending_commands

USAGE_ERRORS = (UsageError,)
DEBUG_VAR = "TEXTCW_DEBUG"

__all__ = ["build_app", "build_command", "exit_interrupted", "fail", "main"]


def build_app(pm=None) -> typer.Typer:
    """The root application with every plugin's commands, the built-in ones
    (:mod:`textcw.default_plugins.commands`) included.

    The commands of installed plugins not imported yet (the process-wide manager's, see
    :mod:`textcw.plugins.lazy`) are kept in ``app.textcw_plugin_commands``; :func:`build_command`
    lists them, and imports a plugin when one of its commands runs.
    """
    app = typer.Typer(
        name="textcw",
        cls=PluginGroup,
        help="Fast, confidence-aware online text classification.",
        no_args_is_help=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": HELP_OPTIONS},
    )
    app.callback()(root_options)
    pm = pm or default_plugin_manager()
    register_commands(pm, app)  # a broken plugin is reported and skipped
    app.textcw_plugin_commands = [(pm, plugin, spec) for plugin, spec in pending_commands(pm, app)]
    return app


def build_command(app: typer.Typer):
    """The command object typer builds for ``app``, with the usual help metavars.

    typer 0.29 shows a Python type (``<bool>``, ``<list[str]>``) after every option, even after
    a flag that takes no value; a user who follows it (``--stream true``) gets an error. Options
    without an explicit metavar get the conventional one here: nothing after a flag, the
    option's name in capitals otherwise (``--epochs EPOCHS``, as argparse shows it).
    """
    command = typer.main.get_command(app)
    fix_metavars(command)
    for pm, plugin, spec in getattr(app, "textcw_plugin_commands", ()) if hasattr(command, "add_command") else ():
        command.add_command(PluginCommand(spec, plugin=plugin, pm=pm, app=app))
    return command


def _quick_exit() -> None:
    """Have the interpreter's exit skip the cyclic garbage collector's passes over everything
    the command imported (scipy, scikit-learn, numba: about half a second of one core after a
    training command). The objects are freed by the process's end all the same; registered once,
    so a test session calling :func:`main` many times is collected normally until it exits."""
    global _exit_registered
    if not _exit_registered:
        import atexit
        import gc

        atexit.register(gc.freeze)
        _exit_registered = True


_exit_registered = False


def fail(message: str, code: int) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``textcw`` console script."""
    debug = os.environ.get(DEBUG_VAR) == "1"
    _quick_exit()
    defer()  # before scikit-learn is imported (textcw._deferred)
    _compile_notice.enable()  # one line on a terminal when kernels compile (a first run)
    configure_logging(logging.INFO)  # before plugins load: their warnings take the usual form
    with handle_signals():
        try:
            build_command(build_app()).main(args=argv, prog_name="textcw")
        except SystemExit as exc:
            if exc.code == 130:  # typer's answer to KeyboardInterrupt, or ours after a signal
                exit_interrupted()
            if exc.code in (0, None):
                if interrupted():  # a signal whose exception was lost: still an interrupted run
                    exit_interrupted()
                return  # success: a caller of main() (a test, a script) goes on
            raise
        except KeyboardInterrupt:  # before typer took over (e.g. while loading plugins)
            exit_interrupted()
        except Exception as exc:
            if interrupted() and not debug:
                # Raised while the interrupt unwound the work (e.g. a pool half started when the
                # signal came): a consequence of the interruption, reported as one.
                exit_interrupted()
            if debug:
                raise
            if isinstance(exc, TextcwError):
                fail(str(exc), 2 if isinstance(exc, USAGE_ERRORS) else 1)
            # a bug or an environment problem: say so in one line
            logging.getLogger("textcw").debug("unexpected error", exc_info=True)
            fail(f"unexpected {type(exc).__name__}: {exc} (rerun with {DEBUG_VAR}=1 for details)", 1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
