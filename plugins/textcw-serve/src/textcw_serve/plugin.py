"""The plugin module (entry point ``serve = "textcw_serve.plugin"``): adds ``textcw serve``.

Only typer is imported here; the service's own modules (FastAPI, uvicorn, scikit-learn through
textcw) are imported when the command runs, so ``textcw --help`` stays quick.
"""

from __future__ import annotations

import textcw


@textcw.hookimpl
def register_commands(app):
    from textcw_serve.command import serve

    app.command(name="serve")(serve)
