"""What stands between the network and the service: body bounds, host names, tokens, metrics.

:class:`BoundedBody` reads each request's body before the application sees it, with two limits
enforced as the bytes arrive: a size (413 as soon as it is passed, before the rest is read; a
``Content-Length`` over it is refused without reading anything) and a deadline for the whole
body (408), so that a client sending a huge or a slow body costs one connection's worth of
waiting and a bounded buffer, and blocks nobody else (uvicorn serves other connections meanwhile).

:class:`LoopbackHosts` refuses requests whose ``Host`` is not a loopback name while the service
listens on loopback only: a web page elsewhere cannot reach it by pointing its own host name at
127.0.0.1 (DNS rebinding). The ``Host`` header is parsed strictly (RFC 3986: a name or an
address, then at most a ``:port`` of digits), so ``localhost:1@evil.com`` is refused, not read
as ``localhost``.

:class:`SameOrigin` keeps web pages elsewhere from changing the model: a ``POST`` must carry
JSON (``Content-Type: application/json``, which a cross-site form cannot send and a cross-site
script can send only after a CORS preflight the service never grants), or no body at all; and a
browser's ``Origin`` (or ``Sec-Fetch-Site``) must say the request comes from the service's own
page. Programs that send no ``Origin`` (curl, the client) are not affected.

:class:`BoundedBody` also refuses a JSON body that names a key twice (``{"labels": [...],
"labels": [...]}``): parsers disagree on which one wins, so a proxy that checks one could be
bypassed with the other.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import re
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
        duplicate = duplicate_json_key(body) if body and _is_json(scope) else None
        if duplicate is not None:
            return await send_error(send, 422, f"the JSON body names the key {duplicate} more than once; "
                                               "send each key once")
        delivered = False

        async def replay():
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)


class _Duplicate(Exception):
    pass


def _no_duplicates(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise _Duplicate(key)
        seen.add(key)
    return dict(pairs)


def duplicate_json_key(body: bytes) -> str | None:
    """The first key named twice in one object of the JSON ``body`` (as JSON text), or ``None``;
    a body that is not valid JSON is left to the application's own error."""
    try:
        json.loads(body, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        return json.dumps(exc.args[0])[:80]
    except (ValueError, RecursionError, UnicodeDecodeError):
        return None
    return None


def _is_json(scope) -> bool:
    kind = (_header(scope, b"content-type") or b"").split(b";")[0].strip().lower()
    return kind == b"application/json" or kind.endswith(b"+json")


# RFC 3986 host: a reg-name (letters, digits, "-", "."), an IPv4 address, or an IP literal in
# brackets; then an optional port of digits. Nothing else ("@", "/", spaces) may appear.
_HOST = re.compile(r"^(?P<name>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(?P<port>[0-9]{1,5}))?$")


def parse_host(value: str) -> tuple[str, int | None] | None:
    """``(name, port)`` of a ``Host`` header, the name lower-cased; ``None`` if malformed."""
    match = _HOST.match(value)
    if match is None:
        return None
    port = match.group("port")
    return match.group("name").lower(), int(port) if port is not None else None


class LoopbackHosts:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = parse_host((_header(scope, b"host") or b"").decode("latin-1"))
            if host is None or host[0] not in LOOPBACK_HOSTS:
                return await send_error(send, 421, "this service listens on loopback only and answers requests "
                                                   "for localhost, 127.0.0.1 or [::1] (a Host header of a name "
                                                   "and an optional :port)")
        return await self.app(scope, receive, send)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def same_origin(origin: str, host: str, scheme: str) -> bool:
    """Whether the ``Origin`` header names the service itself, as the request's ``Host`` does."""
    match = re.match(r"^(https?)://([^/?#]+)$", origin)
    own = parse_host(host)
    if match is None or own is None:
        return False
    theirs = parse_host(match.group(2))
    if theirs is None:
        return False
    their_port = theirs[1] if theirs[1] is not None else _DEFAULT_PORTS[match.group(1)]
    own_port = own[1] if own[1] is not None else _DEFAULT_PORTS.get(scheme, 80)
    return match.group(1) == scheme and theirs[0] == own[0] and their_port == own_port


class SameOrigin:
    """Refuses ``POST`` requests a web page elsewhere could make (see the module docstring)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] not in ("GET", "HEAD", "OPTIONS"):
            problem = self._problem(scope)
            if problem:
                return await send_error(send, 403 if "origin" in problem or "site" in problem else 415, problem)
        return await self.app(scope, receive, send)

    @staticmethod
    def _problem(scope) -> str | None:
        kind = _header(scope, b"content-type")
        declared = _header(scope, b"content-length")
        has_body = declared not in (None, b"0") or _header(scope, b"transfer-encoding") is not None
        if (kind is not None or has_body) and not _is_json(scope):
            shown = (kind or b"none").decode("latin-1")[:60]
            return (f"this endpoint takes a JSON body: send 'Content-Type: application/json' (got "
                    f"{shown!r})")
        site = (_header(scope, b"sec-fetch-site") or b"").decode("latin-1").lower()
        if site and site not in ("same-origin", "none"):
            return f"refusing a {site} request from a web page (Sec-Fetch-Site); only the service's own page may post"
        origin = _header(scope, b"origin")
        if origin is not None:
            host = (_header(scope, b"host") or b"").decode("latin-1")
            if not same_origin(origin.decode("latin-1"), host, scope.get("scheme", "http")):
                return ("refusing a request from a web page of another origin "
                        f"({origin.decode('latin-1')[:80]!r}); only the service's own page may post")
        return None


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
    """``Authorization: Bearer <token>`` (the scheme in any case, as RFC 7235 says) compared in
    constant time."""
    if not authorization:
        return False
    scheme, _, credentials = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(credentials.strip().encode("utf-8", "surrogateescape"), expected.encode())
