"""What stands between the network and the service: body bounds, host names, tokens, metrics.

:class:`BoundedBody` reads each request's body before the application sees it, with two limits
enforced as the bytes arrive: a size (413 as soon as it is passed, before the rest is read; a
``Content-Length`` over it is refused without reading anything) and a deadline for the whole
body (408), so that a client sending a huge or a slow body costs one connection's worth of
waiting and a bounded buffer, and blocks nobody else (uvicorn serves other connections meanwhile).

:class:`LoopbackHosts` refuses requests whose ``Host`` is not a loopback name while the service
listens on loopback only: a web page elsewhere cannot reach it by pointing its own host name at
127.0.0.1 (DNS rebinding).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time

KNOWN_ENDPOINTS = frozenset({"/", "/page.js", "/page.css", "/favicon.svg", "/predict", "/learn", "/status", "/checkpoint",
                             "/health", "/metrics", "/openapi.json"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})


async def send_error(send, status: int, message: str, headers: list | None = None) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close"), *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


def _header(scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value
    return None


class BoundedBody:
    def __init__(self, app, *, max_bytes: int, seconds: float):
        self.app = app
        self.max_bytes = max_bytes
        self.seconds = seconds

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = _header(scope, b"content-length")
        if declared is not None:
            if not declared.isdigit():
                return await send_error(send, 400, "Content-Length is not a number")
            if int(declared) > self.max_bytes:
                return await send_error(send, 413, f"the request body is {int(declared):,} bytes; the limit is "
                                                   f"{self.max_bytes:,}: send fewer or shorter documents per request")
        chunks, size = [], 0
        try:
            async with asyncio.timeout(self.seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > self.max_bytes:
                        return await send_error(send, 413, f"the request body is over the limit of {self.max_bytes:,} "
                                                           "bytes: send fewer or shorter documents per request")
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return await send_error(send, 408, f"the request body did not arrive within {self.seconds:g} s")
        body = b"".join(chunks)
        delivered = False

        async def replay():
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


class LoopbackHosts:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = (_header(scope, b"host") or b"").decode("latin-1")
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name.lower() not in LOOPBACK_HOSTS:
                return await send_error(send, 421, "this service listens on loopback only and answers requests "
                                                   "for localhost, 127.0.0.1 or [::1]")
        return await self.app(scope, receive, send)


class RequestMetrics:
    """Counts and times every request by endpoint and status; unknown paths count as ``other``."""

    def __init__(self, app, metrics):
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = time.perf_counter()
        status = 500

        async def recording_send(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-content-type-options", b"nosniff")]
            await send(message)

        try:
            await self.app(scope, receive, recording_send)
        finally:
            path = scope.get("path", "")
            self.metrics.observe_request(path if path in KNOWN_ENDPOINTS else "other", status,
                                         time.perf_counter() - started)


def token_matches(expected: str, authorization: str | None) -> bool:
    """``Authorization: Bearer <token>`` compared in constant time."""
    if not authorization or not authorization.startswith("Bearer "):
        return False
    return hmac.compare_digest(authorization[len("Bearer "):].strip().encode(), expected.encode())
