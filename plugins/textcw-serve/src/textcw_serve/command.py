"""``textcw serve``: parse the options, open the model, run the service."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from textcw_serve.journal import MAX_GROUP_RECORDS

LOG = logging.getLogger("textcw.serve")


def serve(
    model: Annotated[Path, typer.Argument(help="A model saved by `textcw train --out` (a pickle: serve only models from people you trust)")],
    learn: Annotated[bool, typer.Option("--learn", help="Accept /learn: update the model online, durably (log + checkpoints in --state)")] = False,
    host: Annotated[str, typer.Option("--host", help="Address to listen on; anything but loopback needs --token-file")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port, printed at start)")] = 8000,
    state: Annotated[Path | None, typer.Option("--state", help="Folder of checkpoints and the update log (default with --learn: NAME.serve beside the model); without --learn, serve its newest checkpoint read-only")] = None,
    token_file: Annotated[Path | None, typer.Option("--token-file", help="File holding the token /learn and /checkpoint require (Authorization: Bearer)")] = None,
    checkpoint_every: Annotated[int, typer.Option("--checkpoint-every", help="Write a checkpoint and empty the log after this many updates (0: only on /checkpoint and at exit)")] = 10_000,
    full_every: Annotated[int, typer.Option("--full-every", help="Write the whole model at every N-th checkpoint; the others hold only the rows changed since the one before (1: every checkpoint whole)")] = 32,  # textcw_serve.deltas.FULL_EVERY
    group_size: Annotated[int, typer.Option("--group-size", help="Most updates made durable by one fsync (group commit); 1: one fsync per update")] = MAX_GROUP_RECORDS,
) -> None:
    """Serve MODEL over HTTP: /predict, /learn (with --learn), /status, /checkpoint, /health,
    /metrics, and a page to try it at /."""
    from textcw.errors import ParameterError

    from textcw_serve.metrics import ServiceMetrics
    from textcw_serve.server import check_listen_address, read_token, run
    from textcw_serve.startup import open_service

    if checkpoint_every < 0:
        raise ParameterError(f"--checkpoint-every {checkpoint_every} must be 0 or more")
    if full_every < 1:
        raise ParameterError(f"--full-every {full_every} must be 1 or more (1: every checkpoint holds the whole model)")
    if not 1 <= group_size <= MAX_GROUP_RECORDS:
        raise ParameterError(f"--group-size {group_size} must be between 1 and {MAX_GROUP_RECORDS}")
    token = read_token(token_file) if token_file is not None else None
    check_listen_address(host, token)  # before the model is loaded: a refusal should be instant
    metrics = ServiceMetrics()
    service = open_service(model, learn=learn, state=state, checkpoint_every=checkpoint_every,
                           max_group_records=group_size, metrics=metrics, full_every=full_every)
    run(service, host=host, port=port, token=token, announce=LOG.info)
