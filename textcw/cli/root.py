"""Options of ``textcw`` itself: ``--version``, ``--quiet`` and ``--verbose``.

Results (accuracies, labels, tables, JSON) go to stdout; what textcw says about its work
("saved m.textcw-model", warnings) goes to stderr through the ``textcw`` logger, at the level these
options choose.
"""

from __future__ import annotations

import logging
import platform
import sys
from typing import Annotated

import typer

from textcw._version import __version__

LOGGER = "textcw"
# Distributions whose versions decide textcw's numbers, shown by --version.
DEPENDENCIES = ("numpy", "scipy", "scikit-learn", "numba", "typer")
PLUGIN_GROUP = "textcw"


def versions() -> list[tuple[str, str]]:
    """``(name, version)`` of textcw, Python, the main dependencies and each installed plugin.

    Plugins are found through their entry points without importing any of their code.
    """
    from importlib import metadata  # here: only --version reads distributions' metadata

    rows = [("textcw", __version__), ("python", platform.python_version())]
    for dist in DEPENDENCIES:
        try:
            rows.append((dist, metadata.version(dist)))
        except metadata.PackageNotFoundError:
            rows.append((dist, "not installed"))
    plugins = {}
    for entry in metadata.entry_points(group=PLUGIN_GROUP):
        dist = entry.dist
        name = dist.name if dist is not None else entry.value
        plugins[name] = f"{dist.version if dist is not None else '?'} (plugin {entry.name})"
    return rows + sorted(plugins.items())


def show_version(value: bool) -> None:
    if value:
        width = max(len(name) for name, _ in versions())
        typer.echo("\n".join(f"{name:<{width}}  {version}" for name, version in versions()))
        raise typer.Exit()


def configure_logging(level: int) -> None:
    """Messages of the ``textcw`` logger go to stderr as plain lines (``warning: ...`` for
    warnings and errors), once, whatever the number of commands run in this process."""
    logger = logging.getLogger(LOGGER)
    logger.setLevel(level)
    for handler in logger.handlers:
        if getattr(handler, "textcw_cli", False):
            logger.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.textcw_cli = True
    handler.setFormatter(_Formatter())
    logger.addHandler(handler)
    logger.propagate = False


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.levelno >= logging.WARNING:
            return f"{record.levelname.lower()}: {message}"
        return message


def root(
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=show_version,
                                          help="Show the versions of textcw, Python, its main dependencies and plugins, and exit")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only results and errors")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Also print debugging messages")] = False,
) -> None:
    """Fast, confidence-aware online text classification."""
    if quiet and verbose:
        raise typer.BadParameter("--quiet and --verbose exclude each other; give one", param_hint="--quiet")
    configure_logging(logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO)
