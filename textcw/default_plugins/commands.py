"""Built-in commands, added through the ``register_commands`` hook like any plugin's.

Each command is a module-level function of its :mod:`textcw.cli` module (importable and callable
from Python, e.g. in a test) and each module's ``register(app)`` adds its commands. The modules
hold only typer and textcw's light modules at the top, so building the application for
``textcw --help`` imports nothing heavy.
"""

import importlib

from textcw.hookspecs import hookimpl

# In the order ``textcw --help`` lists them.
COMMAND_MODULES = ("train", "predict", "suggest", "share", "listing", "plugins_info", "evaluate", "reproduce", "cache",
                   "compile")


@hookimpl(tryfirst=True)  # textcw's own commands first in the help, then the plugins'
def register_commands(app):
    for name in COMMAND_MODULES:
        importlib.import_module(f"textcw.cli.{name}").register(app)
