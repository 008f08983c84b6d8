"""The ``textcw`` command line: typer commands that parse, call library functions and print.

Errors a user can cause print one line (``error: ...``) and exit with 2 for a bad name or
parameter (the usage errors) and 1 otherwise; no traceback is shown unless ``TEXTCW_DEBUG=1``.
"""

from __future__ import annotations

import os
import sys

import click
import typer

from textcw.errors import ParameterError, TextcwError, UnknownNameError

USAGE_ERRORS = (UnknownNameError, ParameterError)


def build_app(pm=None) -> typer.Typer:
    """The root application with the built-in commands and every plugin's commands."""
    from textcw.cli import evaluate, listing, plugins_info, predict, reproduce, share, train
    from textcw.plugins import default_plugin_manager

    app = typer.Typer(
        name="textcw",
        help="Fast, confidence-aware online text classification.",
        add_completion=False,
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    for module in (train, predict, share, listing, plugins_info, evaluate, reproduce):
        module.register(app)
    (pm or default_plugin_manager()).hook.register_commands(app=app)
    return app


def fail(message: str, code: int) -> None:
    click.echo(f"error: {message}", err=True)
    raise SystemExit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the ``textcw`` console script."""
    debug = os.environ.get("TEXTCW_DEBUG") == "1"
    try:
        app = build_app()
        app(args=argv, prog_name="textcw", standalone_mode=False)
    except click.exceptions.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except click.ClickException as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except (click.exceptions.Abort, KeyboardInterrupt):
        fail("interrupted", 130)
    except TextcwError as exc:
        if debug:
            raise
        fail(str(exc), 2 if isinstance(exc, USAGE_ERRORS) else 1)
    except Exception as exc:  # a bug or an environment problem: say so in one line
        if debug:
            raise
        fail(f"unexpected {type(exc).__name__}: {exc} (rerun with TEXTCW_DEBUG=1 for details)", 1)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
