"""What stands between the network and the service: body bounds, host names, tokens, metrics.

:class:`BoundedBody` reads each request's body before the application sees it, with three
limits enforced as the bytes arrive: a size (413 as soon as it is passed, before the rest is
read; a ``Content-Length`` over it is refused without reading anything), a deadline for the
whole body, and a minimum rate (408 for either: after :data:`BODY_GRACE_SECONDS`, the body must
have arrived at :data:`MIN_BODY_RATE` bytes a second on average), so that a client sending a
huge or a slow body costs one connection's worth of waiting and a bounded buffer, and blocks
nobody else (uvicorn serves other connections meanwhile; a connection waiting for its body is
also one the connection limit may close to make room, see :mod:`textcw_serve.connections`).

:class:`SingleHeaders` refuses (400) a request that repeats a header the service decides on
(:data:`SINGLE_HEADERS`: ``Authorization``, ``Host``, ``Origin``, ``Sec-Fetch-Site``,
``Content-Type``): which copy counts would differ between a proxy and the service, as with a
JSON key named twice.

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

from textcw_serve.fastpath import PARSED_BODY

KNOWN_ENDPOINTS = frozenset({"/", "/page.js", "/page.css", "/favicon.svg", "/predict", "/learn", "/suggest",
                             "/status", "/checkpoint", "/health", "/metrics", "/openapi.json"})
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
# A body may take BODY_GRACE_SECONDS to get going; after that it must have arrived at
# MIN_BODY_RATE bytes a second on average since its headers (4 KiB/s: 32 kbit/s, slower than
# any real link), or it is cut with 408. A client dribbling a body a few bytes at a time holds
# its connection for about BODY_GRACE_SECONDS, not the whole body deadline.
BODY_GRACE_SECONDS = 2.0
MIN_BODY_RATE = 4 << 10
# Headers the service decides on: sent more than once, the request is refused (400).
SINGLE_HEADERS = (b"authorization", b"host", b"origin", b"sec-fetch-site", b"content-type")


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
    def __init__(self, app, *, max_bytes: int, seconds: float, grace: float | None = None,
                 min_rate: float | None = None):
        self.app = app
        self.max_bytes = max_bytes
        self.seconds = seconds
        self.grace = BODY_GRACE_SECONDS if grace is None else grace
        self.min_rate = MIN_BODY_RATE if min_rate is None else min_rate

    def _cutoff(self, started: float, size: int) -> float:
        """When the body is cut if no more of it arrives: the deadline, or sooner if the bytes
        so far fall behind the minimum rate (after the grace period)."""
        return min(started + self.seconds, started + self.grace + size / self.min_rate)

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
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            async with asyncio.timeout_at(self._cutoff(started, 0)) as timeout:
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
                    timeout.reschedule(self._cutoff(started, size))
        except TimeoutError:
            if started + self.grace + size / self.min_rate < started + self.seconds:
                return await send_error(send, 408, f"the request body arrived slower than {self.min_rate:,.0f} bytes/s "
                                                   f"({size:,} bytes in {loop.time() - started:.1f} s)")
            return await send_error(send, 408, f"the request body did not arrive within {self.seconds:g} s")
        body = b"".join(chunks)
        if body and _is_json(scope):
            parsed, duplicate = parse_json(body)
            if duplicate is not None:
                return await send_error(send, 422, f"the JSON body names the key {duplicate} more than once; "
                                                   "send each key once")
            if parsed is not NOT_JSON:
                scope[PARSED_BODY] = parsed  # parsed once: the fast endpoints need not parse it again
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


NOT_JSON = object()


def parse_json(body: bytes) -> tuple[object, str | None]:
    """``(value, duplicate)``: the JSON ``body`` as ``json.loads`` reads it (what FastAPI decodes
    a body with) or :data:`NOT_JSON`, and the first key named twice in one object (as JSON
    text) or ``None``. A body that is not valid JSON is left to the application's own error."""
    try:
        return json.loads(body, object_pairs_hook=_no_duplicates), None
    except _Duplicate as exc:
        return NOT_JSON, json.dumps(exc.args[0])[:80]
    except (ValueError, RecursionError, UnicodeDecodeError):
        return NOT_JSON, None


def duplicate_json_key(body: bytes) -> str | None:
    """The first key named twice in one object of the JSON ``body`` (:func:`parse_json`)."""
    return parse_json(body)[1]


def _is_json(scope) -> bool:
    kind = (_header(scope, b"content-type") or b"").split(b";")[0].strip().lower()
    return kind == b"application/json" or kind.endswith(b"+json")


class SingleHeaders:
    """Refuses (400) a request that sends one of :data:`SINGLE_HEADERS` more than once."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            names = [key for key, _ in scope.get("headers", ()) if key in SINGLE_HEADERS]
            for name in SINGLE_HEADERS:
                if names.count(name) > 1:
                    shown = "-".join(part.capitalize() for part in name.decode("latin-1").split("-"))
                    return await send_error(send, 400, f"the request has {names.count(name)} {shown} headers; "
                                                       "send it once")
        return await self.app(scope, receive, send)


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
