"""Bounded connections: what a client that opens connections and never finishes them can cost.

uvicorn closes a kept-alive connection that stays idle (``timeout_keep_alive``) and answers 503
past ``limit_concurrency`` requests, but only once a request's headers are complete: a
connection that sends nothing, or sends its headers one byte at a time, is kept forever, and
enough of them use up the process's file descriptors ("slowloris"). The protocol here adds, on
top of uvicorn's own HTTP protocol:

- a **header deadline**: a new connection, and each new request on a kept-alive one, must
  deliver its complete headers within :data:`HEADER_SECONDS` of its first byte (of being
  opened, for a new connection), or the connection is closed;
- a **header size** bound: more than :data:`MAX_HEADER_BYTES` before the headers end closes
  the connection (uvicorn's default parser, httptools, has no limit of its own);
- a **connection limit**: at most ``max_connections`` open at once (by default well under the
  soft ``RLIMIT_NOFILE``, so the service always has descriptors left for its own files). When a
  new connection would pass it, the connection that has waited longest for its headers is closed
  to make room: a flood of slow clients cannot lock out clients that send whole requests. Only
  when every open connection is busy with a complete request is the new one closed at once.

Idle kept-alive connections are closed after ``timeout_keep_alive`` (uvicorn's, 5 s here); the
body of a request has its own size and time bounds (:class:`textcw_serve.guards.BoundedBody`).
"""

from __future__ import annotations

import logging

LOG = logging.getLogger("textcw.serve")
HEADER_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 5
MAX_HEADER_BYTES = 64 << 10
MAX_CONNECTIONS = 2048
RESERVED_DESCRIPTORS = 64  # the state folder's files, the log, checkpoints, imports, the listener


def default_max_connections() -> int:
    """:data:`MAX_CONNECTIONS`, or fewer when the soft descriptor limit is lower."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return MAX_CONNECTIONS
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(8, min(MAX_CONNECTIONS, soft - RESERVED_DESCRIPTORS))


def _base_protocol():
    try:
        from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

        return HttpToolsProtocol
    except ImportError:  # httptools missing: uvicorn's pure-Python h11 protocol
        from uvicorn.protocols.http.h11_impl import H11Protocol

        return H11Protocol


def bounded_protocol(*, header_seconds: float = HEADER_SECONDS, max_header_bytes: int = MAX_HEADER_BYTES,
                     max_connections: int | None = None) -> type:
    """An HTTP protocol class for ``uvicorn.Config(http=...)`` with the bounds above."""
    base = _base_protocol()
    limit = default_max_connections() if max_connections is None else max_connections

    class BoundedProtocol(base):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._header_timer = None
            self._waiting_since = None
            self._header_bytes = 0
            self._seen_cycle = None
            self._arm()
            if len(self.connections) > limit:
                self._make_room()

        # ------------------------------------------------------------------ the limit
        def _make_room(self) -> None:
            waiting = [c for c in self.connections
                       if c is not self and getattr(c, "_waiting_since", None) is not None
                       and not c.transport.is_closing()]
            if waiting:
                oldest = min(waiting, key=lambda c: c._waiting_since)
                LOG.warning("%d connections open (the limit): closing the one that has waited longest "
                            "for its headers", limit)
                oldest._close()
            else:
                LOG.warning("%d connections open (the limit), all busy: refusing a new one", limit)
                self._close()

        # ------------------------------------------------------------------ the header deadline
        def _arm(self) -> None:
            if self._header_timer is None:
                self._waiting_since = self.loop.time()
                self._header_bytes = 0
                self._header_timer = self.loop.call_later(header_seconds, self._close)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            self._waiting_since = None

        def _close(self) -> None:
            self._disarm()
            if not self.transport.is_closing():
                self.transport.close()

        def data_received(self, data: bytes) -> None:
            awaiting = self._header_timer is not None
            super().data_received(data)
            if self.cycle is not None and self.cycle is not self._seen_cycle:
                self._seen_cycle = self.cycle  # a request's headers are complete
                self._disarm()
            elif self.cycle is None or self.cycle.response_complete:
                # bytes of a request whose headers have not all arrived (uvicorn cancelled its
                # keep-alive timer on them: the header deadline takes over)
                if not awaiting:
                    self._arm()
                self._header_bytes += len(data)
                if self._header_bytes > max_header_bytes:
                    self._close()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    BoundedProtocol.__qualname__ = BoundedProtocol.__name__ = f"Bounded{base.__name__}"
    return BoundedProtocol


def uvicorn_config(app, **kwargs):
    """The ``uvicorn.Config`` the service runs with: the bounds above, no access log, no
    ``Server`` header. ``kwargs`` override (tests: ``max_connections``, ``header_seconds``)."""
    import uvicorn

    protocol = bounded_protocol(header_seconds=kwargs.pop("header_seconds", HEADER_SECONDS),
                                max_header_bytes=kwargs.pop("max_header_bytes", MAX_HEADER_BYTES),
                                max_connections=kwargs.pop("max_connections", None))
    options = {"log_level": "warning", "access_log": False, "timeout_keep_alive": KEEP_ALIVE_SECONDS,
               "timeout_graceful_shutdown": 10, "server_header": False, "http": protocol, **kwargs}
    return uvicorn.Config(app, **options)
