"""Bounded connections: what a client that opens connections and never finishes them, or never
reads what it asked for, can cost.

uvicorn closes a kept-alive connection that stays idle (``timeout_keep_alive``), but only once a
request's headers are complete, and it keeps a response that the client does not read in memory
for as long as the connection stays open. The protocol here adds, on top of uvicorn's own HTTP
protocol:

- a **header deadline**: a new connection, and each new request on a kept-alive one, must
  deliver its complete headers within :data:`HEADER_SECONDS` of its first byte (of being
  opened, for a new connection), or the connection is closed;
- a **header size** bound: more than :data:`MAX_HEADER_BYTES` before the headers end closes
  the connection (uvicorn's default parser, httptools, has no limit of its own);
- a **write deadline**: the kernel takes at most :data:`SEND_BUFFER_BYTES` of a response
  (``SO_SNDBUF``, no autotuning); what it cannot take yet waits in the connection's write
  buffer, and the connection counts as *stalled on writes* until that buffer is empty. A stall
  must end within :data:`WRITE_SECONDS` plus the time the waiting bytes take at
  :data:`MIN_WRITE_RATE`, or the connection is aborted (the bytes are dropped, not waited on);
- a **budget for stalled responses**: when the responses waiting in stalled connections pass
  :data:`MAX_STALLED_BYTES` together, the connection stalled longest is aborted;
- a **connection limit**: at most ``max_connections`` open at once (by default well under the
  soft ``RLIMIT_NOFILE``, so the service always has descriptors left for its own files). When a
  new connection would pass it, a connection that waits on its client (for its headers, for its
  body, to read its response, or idle between requests) is closed to make room: one of the
  client address holding the most connections, and of those the one that has waited longest.
  A flood from one address thus evicts itself, and a flood from everywhere evicts its oldest
  members, while a new client's request, whose headers arrive at once, is answered. When no
  connection waits on its client, one whose request waits for its turn (the application marks
  it with the scope key :data:`QUEUED`: a prediction not started) is closed, the newest of the
  address with the most connections: expensive requests that pile up cannot lock others out
  either. Only when every open connection holds a request the service is working on is the new
  one closed.

Memory: a connection costs its protocol objects (about 7 KiB of the service's memory), at most
:data:`SEND_BUFFER_BYTES` (doubled by Linux) in the kernel, and while stalled the rest of one
response, for a bounded time and within :data:`MAX_STALLED_BYTES` for all connections together.

At shutdown (SIGTERM), connections waiting on their client are closed at once, and a response
that is stalled, or stalls, gets :data:`SHUTDOWN_WRITE_SECONDS` more before it is aborted, so
slow readers never hold the service up. The body of a request has its own size, time and rate
bounds (:class:`textcw_serve.guards.BoundedBody`).
"""

from __future__ import annotations

import collections
import logging
import socket
import struct
import time

LOG = logging.getLogger("textcw.serve")
HEADER_SECONDS = 10.0  # a request's headers must be complete this long after its first byte
KEEP_ALIVE_SECONDS = 5  # an idle kept-alive connection is closed after this (uvicorn's timer)
MAX_HEADER_BYTES = 64 << 10  # headers past this close the connection (httptools has no limit)
MAX_CONNECTIONS = 2048  # connections open at once, when the descriptor limit allows as many
RESERVED_DESCRIPTORS = 64  # the state folder's files, the log, checkpoints, imports, the listener
# The kernel's send buffer per connection (Linux reserves twice this). Set, it turns off the
# kernel's autotuning, which lets one connection that is never read hold up to 4 MiB of kernel
# memory, unseen by the write deadline; 256 KiB keeps a local or LAN client at full speed.
SEND_BUFFER_BYTES = 256 << 10
# A response stalled on a client that does not read it must drain within WRITE_SECONDS plus
# its waiting bytes at MIN_WRITE_RATE (64 KiB/s: a 3 MiB /predict reply to a 512 kbit/s
# client); otherwise the connection is aborted and its buffer freed.
WRITE_SECONDS = 10.0
MIN_WRITE_RATE = 64 << 10
# Responses waiting in stalled connections, all together: past this the connection stalled
# longest is aborted, so slow readers cannot make the service hold gigabytes of replies.
MAX_STALLED_BYTES = 64 << 20
# At shutdown a stalled response gets this much more time, then it is aborted: slow readers
# never hold the service up.
SHUTDOWN_WRITE_SECONDS = 1.0
# At shutdown, requests the service is working on get this long to finish (uvicorn's
# timeout_graceful_shutdown).
GRACEFUL_SHUTDOWN_SECONDS = 10
# Warnings about closed connections of one kind are logged at most this often (with a count):
# a flood of connections must not become a flood of log lines.
WARN_EVERY_SECONDS = 10.0
# The ASGI scope key an application sets (to time.monotonic()) while a request waits for its
# turn, and removes when its work starts: such a connection may be closed to make room.
QUEUED = "textcw.queued"


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


class _Warnings:
    """``LOG.warning`` at most once per :data:`WARN_EVERY_SECONDS` for each kind, with the
    number of times the warning was left out since."""

    def __init__(self) -> None:
        self.last: dict[str, float] = {}
        self.left_out: collections.Counter = collections.Counter()

    def __call__(self, kind: str, message: str, *args) -> None:
        now = time.monotonic()
        if now - self.last.get(kind, float("-inf")) < WARN_EVERY_SECONDS:
            self.left_out[kind] += 1
            return
        self.last[kind] = now
        more = self.left_out.pop(kind, 0)
        LOG.warning(message + (f" (and {more} times more in the last {WARN_EVERY_SECONDS:g} s)" if more else ""),
                    *args)


class _Waiting:
    """The connections that wait on their client, by client address, oldest first, and how many
    connections each address has open: who makes room at the limit."""

    def __init__(self) -> None:
        self.by_address: dict[object, dict] = {}  # address -> {connection: None}, oldest first
        self.open: collections.Counter = collections.Counter()  # address -> open connections

    def add(self, connection) -> None:  # (re)starts waiting now: the newest
        self.remove(connection)
        self.by_address.setdefault(connection.address, {})[connection] = None

    def remove(self, connection) -> None:
        mine = self.by_address.get(connection.address, {})
        mine.pop(connection, None)
        if not mine:
            self.by_address.pop(connection.address, None)

    def victim(self, sparing):
        """The longest-waiting connection of the address with the most open connections."""
        for address in sorted(self.by_address, key=self.open.__getitem__, reverse=True):
            for connection in self.by_address[address]:
                if connection is not sparing:
                    return connection
        return None


def _set_option(transport, option: int, value) -> None:
    """A socket option on a TCP connection's socket (nothing for other transports)."""
    sock = transport.get_extra_info("socket")
    if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
        try:
            sock.setsockopt(socket.SOL_SOCKET, option, value)
        except OSError:  # pragma: no cover - the kernel's default then applies
            pass


def bounded_protocol(*, header_seconds: float | None = None, max_header_bytes: int | None = None,
                     max_connections: int | None = None, write_seconds: float | None = None,
                     min_write_rate: float | None = None, max_stalled_bytes: int | None = None,
                     send_buffer_bytes: int | None = None) -> type:
    """An HTTP protocol class for ``uvicorn.Config(http=...)`` with the bounds above (one class
    per server: the connections it tracks are that server's). A bound not given is the module's
    constant as it is when this is called."""
    base = _base_protocol()
    limit = default_max_connections() if max_connections is None else max_connections
    header_seconds = HEADER_SECONDS if header_seconds is None else header_seconds
    max_header_bytes = MAX_HEADER_BYTES if max_header_bytes is None else max_header_bytes
    write_seconds = WRITE_SECONDS if write_seconds is None else write_seconds
    min_write_rate = MIN_WRITE_RATE if min_write_rate is None else min_write_rate
    max_stalled_bytes = MAX_STALLED_BYTES if max_stalled_bytes is None else max_stalled_bytes
    send_buffer_bytes = SEND_BUFFER_BYTES if send_buffer_bytes is None else send_buffer_bytes
    waiting = _Waiting()
    stalled: dict = {}  # connection -> None, stalled on writes, longest first
    stopping: list = []  # not empty once the server shuts down
    warn = _Warnings()

    class BoundedProtocol(base):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self.address = self.client[0] if self.client else None
            self._header_timer = self._write_timer = None
            self._header_bytes = 0
            self._seen_cycle = None
            self._waits = self._stalled = self._stopping = False
            waiting.open[self.address] += 1
            _set_option(transport, socket.SO_SNDBUF, send_buffer_bytes)
            # any byte the kernel cannot take yet pauses writing: the stall the deadline bounds
            transport.set_write_buffer_limits(high=0, low=0)
            self._arm()
            if len(self.connections) > limit:
                self._make_room()
            if not transport.is_closing():
                self._wait(True)

        # ------------------------------------------------------------------ who waits on its client
        def _wait(self, now_waiting: bool) -> None:
            """Enter (as the newest) or leave the connections that wait on their client."""
            if now_waiting and not self._waits:
                waiting.add(self)
            elif not now_waiting and self._waits:
                waiting.remove(self)
            self._waits = now_waiting

        def _waits_on_client(self) -> bool:
            """Waiting for headers (or idle between requests), for a body, or to be read."""
            cycle = self.cycle
            if self._stalled or cycle is None or cycle.response_complete:
                return True
            return cycle.more_body and not getattr(self, "pipeline", None)

        # ------------------------------------------------------------------ the limit
        def _make_room(self) -> None:
            victim = waiting.victim(sparing=self)
            if victim is not None:
                warn("evict", "%d connections open (the limit): closing the one that has waited longest on its "
                              "client (of the address with the most connections)", limit)
                victim._drop()
            elif (victim := self._queued_victim()) is not None:
                warn("shed", "%d connections open (the limit), none waiting on its client: closing the one whose "
                             "request waited for its turn the shortest (of the address with the most connections)",
                     limit)
                victim._drop()
            else:
                warn("refuse", "%d connections open (the limit), all busy: refusing a new one", limit)
                self._drop()

        def _queued_victim(self):
            """The newest connection whose request waits for its turn, of the address with the most
            connections; ``None`` if no request waits."""
            queued = [c for c in self.connections if c is not self and getattr(c, "cycle", None) is not None
                      and not c.cycle.response_complete and c.cycle.scope.get(QUEUED)
                      and not c.transport.is_closing()]
            if not queued:
                return None
            return max(queued, key=lambda c: (waiting.open[c.address], c.cycle.scope[QUEUED]))

        def _drop(self) -> None:
            """Close now. A reply still waiting to be written is dropped, with what the kernel
            holds of it (a reset: ``SO_LINGER`` 0), not sent on after the close."""
            self._disarm()
            self._unstall()
            self._wait(False)
            if self.transport.get_write_buffer_size():
                _set_option(self.transport, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.transport.abort()
            elif not self.transport.is_closing():
                self.transport.close()

        # ------------------------------------------------------------------ the header deadline
        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_bytes = 0
                self._header_timer = self.loop.call_later(header_seconds, self._drop)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

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
                    self._drop()
                    return
            if not self.transport.is_closing():
                self._wait(self._waits_on_client())  # a body still to come, or a request to work on

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() or self._stalled:
                self._wait(False)
                self._wait(True)  # now waiting for the next request (or to be read): the newest

        # ------------------------------------------------------------------ the write deadline
        def pause_writing(self) -> None:
            super().pause_writing()
            if self._stalled:
                return
            self._stalled = True
            stalled[self] = None
            self._wait(False)
            self._wait(True)
            buffered = self.transport.get_write_buffer_size()
            seconds = SHUTDOWN_WRITE_SECONDS if self._stopping else write_seconds + buffered / min_write_rate
            self._write_timer = self.loop.call_later(seconds, self._write_timed_out)
            self._keep_to_budget()

        def resume_writing(self) -> None:
            super().resume_writing()
            self._unstall()
            if not self.transport.is_closing():
                self._wait(False)
                self._wait(self._waits_on_client())  # delivered: idle from now on, or busy again

        def _unstall(self) -> None:
            if self._write_timer is not None:
                self._write_timer.cancel()
                self._write_timer = None
            self._stalled = False
            stalled.pop(self, None)

        def _write_timed_out(self) -> None:
            self._write_timer = None
            warn("stall", "closing a connection whose client has not read its response (%d bytes waiting)",
                 self.transport.get_write_buffer_size())
            self._drop()

        def _keep_to_budget(self) -> None:
            total = sum(c.transport.get_write_buffer_size() for c in stalled)
            while total > max_stalled_bytes and stalled:
                oldest = next(iter(stalled))
                total -= oldest.transport.get_write_buffer_size()
                warn("budget", "responses waiting for clients that do not read them passed %d bytes: closing "
                               "the connection stalled longest", max_stalled_bytes)
                oldest._drop()

        # ------------------------------------------------------------------ shutdown and the end
        def shutdown(self) -> None:
            if not stopping:  # the first connection told: tell the application too (once)
                stopping.append(True)
                begin = getattr(self.config.app, "begin_shutdown", None)
                if begin is not None:
                    begin()
            self._stopping = True
            timer = self._write_timer
            if timer is not None and timer.when() - self.loop.time() > SHUTDOWN_WRITE_SECONDS:
                timer.cancel()  # a stalled response: what is left of its deadline, at most this
                self._write_timer = self.loop.call_later(SHUTDOWN_WRITE_SECONDS, self._write_timed_out)
            if self._waits and not self._stalled and self.cycle is not None and not self.cycle.response_complete:
                self._drop()  # a body that is still to come is not waited for
            else:
                super().shutdown()  # idle: closed; working on a request: closed after its response

        def connection_lost(self, exc) -> None:
            self._disarm()
            self._unstall()
            self._wait(False)
            waiting.open[self.address] -= 1
            if waiting.open[self.address] <= 0:
                del waiting.open[self.address]
            super().connection_lost(exc)

    BoundedProtocol.__qualname__ = BoundedProtocol.__name__ = f"Bounded{base.__name__}"
    return BoundedProtocol


def uvicorn_config(app, **kwargs):
    """The ``uvicorn.Config`` the service runs with: the bounds above, no access log, no
    ``Server`` header. ``kwargs`` override (tests: ``max_connections``, ``header_seconds``,
    ``write_seconds``, ``min_write_rate``, ``max_stalled_bytes``, ``send_buffer_bytes``)."""
    import uvicorn

    bounds = {name: kwargs.pop(name) for name in ("header_seconds", "max_header_bytes", "max_connections",
                                                   "write_seconds", "min_write_rate", "max_stalled_bytes",
                                                   "send_buffer_bytes") if name in kwargs}
    options = {"log_level": "warning", "access_log": False, "timeout_keep_alive": KEEP_ALIVE_SECONDS,
               "timeout_graceful_shutdown": GRACEFUL_SHUTDOWN_SECONDS, "server_header": False,
               "http": bounded_protocol(**bounds), **kwargs}
    return uvicorn.Config(app, **options)
