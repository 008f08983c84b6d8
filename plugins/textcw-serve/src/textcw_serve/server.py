"""Running the service on uvicorn: where it may listen, the token, start and stop.

Listening: loopback (127.0.0.1, ::1, localhost) by default. Any other address needs a token
(``--token-file``): without one, anyone who can reach the port could teach the model. The
socket is bound before uvicorn starts, so the address printed is the one in use (also with
``--port 0``, which picks a free port).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import socket
import stat
import sys
from pathlib import Path

from textcw.errors import InputError, ParameterError

LOG = logging.getLogger("textcw.serve")
MIN_TOKEN_CHARS = 16
# While serving, a thread that wants Python's lock gets it after at most this long (Python's
# default is 5 ms): the event loop, which answers /health and every connection, then waits for
# prediction threads a millisecond at a time, not 5-10 ms per step of a request (/health p99
# under a flood of 512-document predictions: about 100 ms with the default, about 45 ms with this).
SWITCH_INTERVAL_SECONDS = 0.001
_MAX_TOKEN_FILE_BYTES = 4096


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(path: Path) -> str:
    """The token in ``path`` (its trailing line break is not part of it): at least
    :data:`MIN_TOKEN_CHARS` printable ASCII characters.

    The file must be the user's own regular file that nobody else can write, on a path nobody
    else can swap (:func:`textcw.trust.open_trusted_file`: whoever can write it decides who may
    teach the model); it is opened once, without following a link and without blocking, so a
    FIFO put in its place cannot hang the service."""
    from textcw_serve.state import read_regular_file

    raw = read_regular_file(path, _MAX_TOKEN_FILE_BYTES, "--token-file", should_hold="one token")
    token = raw.rstrip(b"\r\n")
    if len(token) < MIN_TOKEN_CHARS or not all(0x21 <= b <= 0x7E for b in token):
        raise InputError(f"--token-file {path} must hold one token of at least {MIN_TOKEN_CHARS} printable "
                         "ASCII characters without spaces (python3 -c \"import secrets; "
                         "print(secrets.token_urlsafe(32))\" makes one)")
    if os.stat(path).st_mode & (stat.S_IRGRP | stat.S_IROTH):
        LOG.warning("--token-file %s is readable by other users; chmod 600 it", path)
    return token.decode("ascii")


def bind(host: str, port: int) -> socket.socket:
    if not 0 <= port <= 65535:
        raise ParameterError(f"--port {port} is not a port number (0-65535; 0 picks a free port)")
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ParameterError(f"--host {host}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise InputError(f"cannot listen on {host} port {port}: {exc.strerror or exc}") from None
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def check_listen_address(host: str, token: str | None) -> None:
    if not is_loopback(host) and token is None:
        raise ParameterError(f"refusing to listen on {host} without a token: anyone who reaches it could "
                             "change the model. Give --token-file FILE (then /learn and /checkpoint need "
                             "'Authorization: Bearer <token>'), or keep the default --host 127.0.0.1")


def run(service, *, host: str = "127.0.0.1", port: int = 8000, token: str | None = None,
        announce=print) -> None:
    """Serve until interrupted (Ctrl-C or SIGTERM: uvicorn finishes the requests in flight, for
    at most :data:`~textcw_serve.connections.GRACEFUL_SHUTDOWN_SECONDS`; predictions not yet
    started are answered 503 and replies stalled on clients that do not read them are dropped
    after :data:`~textcw_serve.connections.SHUTDOWN_WRITE_SECONDS`; then the queued updates are
    written and a checkpoint is taken)."""
    import uvicorn

    from textcw_serve.app import create_app
    from textcw_serve.connections import uvicorn_config

    try:
        check_listen_address(host, token)
        sock = bind(host, port)
    except BaseException:
        service.stop()
        raise
    app = create_app(service, token=token, loopback_only=is_loopback(host))
    server = uvicorn.Server(uvicorn_config(app))
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    announce(f"textcw serve: {service.name} on http://{shown}:{bound_port}/ "
             f"({'learning' if service.learning else 'predicting only'}"
             f"{', token required for /learn and /checkpoint' if token else ''})")
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, SWITCH_INTERVAL_SECONDS))
    try:
        server.run(sockets=[sock])
    finally:
        sys.setswitchinterval(interval)
        sock.close()
        service.stop()
