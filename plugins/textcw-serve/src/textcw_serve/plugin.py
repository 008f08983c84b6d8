"""The plugin module (entry point ``serve = "textcw_serve.plugin"``): adds ``textcw serve`` and
provides ``textcw.client`` (:mod:`textcw_serve.client`).

Only typer is imported here; the service's own modules (FastAPI, uvicorn, scikit-learn through
textcw) are imported when the command runs, so ``textcw --help`` stays quick.
"""

from __future__ import annotations

import textcw


@textcw.hookimpl
def register_commands(app):
    from textcw_serve.command import serve

    app.command(name="serve")(serve)


@textcw.hookimpl
def provide_client():
    from textcw_serve import client

    return client
