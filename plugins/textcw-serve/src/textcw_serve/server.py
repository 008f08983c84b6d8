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
from pathlib import Path

from textcw.errors import InputError, ParameterError

LOG = logging.getLogger("textcw.serve")
MIN_TOKEN_CHARS = 16
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

    The file must be the user's own regular file that nobody else can write
    (:func:`textcw.trust.check_trusted_file`: whoever can write it decides who may teach the
    model); it is opened without following a link and without blocking, so a FIFO put in its
    place cannot hang the service."""
    from textcw.trust import check_trusted_file

    from textcw_serve.state import read_regular_file

    check_trusted_file(path, "--token-file")
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
    """Serve until interrupted (Ctrl-C or SIGTERM: uvicorn finishes the requests in flight, then
    the queued updates are written and a checkpoint is taken)."""
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
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
        service.stop()
