"""Clients that never read their replies, send their bodies a byte at a time, or reconnect as
fast as they are closed cannot hold the service's connections, its memory or its shutdown.

Everything comes from 127.0.0.1 (one client address) unless a test says otherwise. Time limits
here are hang guards: how fast ``/health`` answers under each flood is measured in
``plugins/textcw-serve/benchmarks/slow_clients.py``, not here.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import re
import select
import socket
import threading
import time

import pytest

from serve_fixtures import ThreadServer, save_model, serve_process  # noqa: F401 (a fixture)
from textcw_serve import connections as bounds
from textcw_serve.startup import open_service

WAIT = 30.0  # the longest any step may take before the test fails (it never sleeps that long)
CLASSES = 100  # a 512-document /predict reply is then about 3 MB: more than the kernel takes


@pytest.fixture(scope="module")
def many_classes(tmp_path_factory):
    """A model of :data:`CLASSES` classes (the attack review's case), and a 512-document
    ``/predict`` request for it, as raw bytes."""
    docs, labels = [], []
    for k in range(CLASSES):
        for j in range(3):
            docs.append(f"topic{k}w{j} topic{k}w{j + 1} topic{k}w4 filler{(k + j) % 7}")
            labels.append(f"class{k:03d}")
    path = save_model(tmp_path_factory.mktemp("many-classes"), docs=docs, labels=labels)
    body = json.dumps({"documents": [f"topic{k % CLASSES}w1 topic{k % CLASSES}w2" for k in range(512)]}).encode()
    return path, request("POST", "/predict", body)


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    return save_model(tmp_path_factory.mktemp("small"))


def request(method: str, path: str, body: bytes = b"", headers: bytes = b"") -> bytes:
    kind = b"Content-Type: application/json\r\n" if body else b""
    return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode() + kind + headers
            + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def slow_reader(port: int, sent: bytes) -> socket.socket:
    """A connection that sends ``sent`` and never reads (a small receive buffer, as a client
    that stopped reading leaves it full)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(WAIT)
    sock.connect(("127.0.0.1", port))
    sock.sendall(sent)
    return sock


def read_reply(sock: socket.socket) -> tuple[bool, bytes]:
    """Everything the server sends until it closes: (whether a whole reply came, the bytes)."""
    chunks = []
    with contextlib.suppress(ConnectionResetError):
        while chunk := sock.recv(1 << 20):
            chunks.append(chunk)
            data = b"".join(chunks)
            head, _, rest = data.partition(b"\r\n\r\n")
            length = re.search(rb"(?i)content-length: (\d+)", head)
            if length and len(rest) >= int(length.group(1)):
                return True, data
    return False, b"".join(chunks)


def health(port: int, source: str = "127.0.0.1") -> int:
    """The status of ``GET /health`` from a fresh connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT, source_address=(source, 0))
    try:
        connection.request("GET", "/health")
        reply = connection.getresponse()
        reply.read()
        return reply.status
    finally:
        connection.close()


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


class Flood:
    """``size`` connections from one thread, each sending ``opening`` then (with ``dribble``) a
    byte every ``every`` seconds, opened again as soon as the server closes one, until the
    block ends."""

    def __init__(self, port: int, size: int, opening: bytes, *, every: float = 0.2, dribble: bool = True,
                 source: str = "127.0.0.1"):
        self.port, self.size, self.opening, self.every, self.source = port, size, opening, every, source
        self.dribble = dribble
        self.reopened = 0
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self) -> socket.socket | None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=WAIT, source_address=(self.source, 0))
            sock.sendall(self.opening)
            return sock
        except OSError:
            return None

    def _run(self) -> None:
        socks = [self._open() for _ in range(self.size)]
        try:
            while self.running:
                for i, sock in enumerate(socks):
                    try:
                        if sock is None or (select.select([sock], [], [], 0)[0] and not sock.recv(4096)):
                            raise OSError("closed by the server")
                        if self.dribble:
                            sock.send(b" ")
                    except OSError:
                        if sock is not None:
                            sock.close()
                        socks[i] = self._open()
                        self.reopened += 1
                time.sleep(self.every)
        finally:
            for sock in socks:
                if sock is not None:
                    sock.close()

    def __enter__(self) -> Flood:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.running = False
        self.thread.join(WAIT)


# ---------------------------------------------------------------------- clients that never read
def test_clients_that_never_read_their_replies_do_not_lock_others_out(many_classes):
    """The review's case at a limit of 20: 20 clients each send a 512-document /predict of a
    100-class model and never read the 3 MB reply. /health and /predict from fresh connections
    are answered all the same (a stalled or waiting connection makes room)."""
    model, predict = many_classes
    with ThreadServer(open_service(model), max_connections=20) as server, contextlib.ExitStack() as stack:
        connections = server.server.server_state.connections
        for _ in range(20):
            stack.enter_context(slow_reader(server.port, predict))
        wait_for(lambda: len(connections) >= 20, "20 connections")
        for _ in range(5):
            assert health(server.port) == 200
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(request("POST", "/predict", json.dumps({"documents": ["topic7w1 topic7w2"]}).encode()))
            complete, reply = read_reply(sock)
        assert complete and reply.startswith(b"HTTP/1.1 200") and b'"label":"class007"' in reply


def test_a_reply_that_is_not_read_is_dropped_at_the_write_deadline(many_classes, monkeypatch):
    """The connection is aborted (its buffered reply freed, the client reset) once the reply has
    not drained within the deadline, instead of being kept as long as the client stays."""
    monkeypatch.setattr(bounds, "WRITE_SECONDS", 0.5, raising=False)
    monkeypatch.setattr(bounds, "MIN_WRITE_RATE", 1 << 40, raising=False)  # the deadline is 0.5 s
    model, predict = many_classes
    with ThreadServer(open_service(model)) as server:
        connections = server.server.server_state.connections
        with slow_reader(server.port, predict) as sock:
            wait_for(lambda: server.server.server_state.total_requests >= 1, "the reply")
            wait_for(lambda: not connections, "the stalled connection to be closed")
            complete, reply = read_reply(sock)
        assert reply.startswith(b"HTTP/1.1 200") and not complete, f"{len(reply)} bytes, complete: {complete}"
        assert health(server.port) == 200


def test_replies_waiting_for_slow_readers_are_bounded_all_together(many_classes, monkeypatch):
    """With room for one unread reply (4 MiB; each leaves about 2.7 MB waiting), the connections
    stalled longest are closed as new ones stall: memory does not grow with slow readers."""
    monkeypatch.setattr(bounds, "MAX_STALLED_BYTES", 4 << 20, raising=False)
    monkeypatch.setattr(bounds, "WRITE_SECONDS", 300.0, raising=False)  # only the budget closes
    model, predict = many_classes
    with ThreadServer(open_service(model)) as server, contextlib.ExitStack() as stack:
        readers = [stack.enter_context(slow_reader(server.port, predict)) for _ in range(4)]
        wait_for(lambda: server.server.server_state.total_requests >= 4, "the four requests")
        # a request is counted when it starts; its reply stalls (and the budget closes the
        # longest-stalled connection) a little later, and the closed ones leave on a later turn
        # of the event loop: wait for that, as long as any other wait here
        connections = server.server.server_state.connections
        wait_for(lambda: len(connections) == 1, "all but the newest stalled connection to be closed")
        outcomes = [read_reply(sock) for sock in readers]
    assert all(reply.startswith(b"HTTP/1.1 200") for _, reply in outcomes)
    assert sorted(complete for complete, _ in outcomes) == [False, False, False, True]


def test_sigterm_with_slow_readers_connected_is_prompt_and_quiet(many_classes, serve_process):
    """The review's case: 150 clients that never read; SIGTERM used to wait out the graceful
    timeout on them and log a traceback per cancelled request. Now stalled replies are dropped
    and predictions not yet started are refused (503), well within that timeout."""
    model, predict = many_classes
    server = serve_process([str(model)], "serve.log")
    port = int(server.url.rsplit(":", 1)[1])
    readers = [slow_reader(port, predict) for _ in range(150)]
    try:
        # the first replies are being written (and stall): the service is busy with the rest
        wait_for(lambda: select.select(readers, [], [], 0)[0], "a first reply")
        started = time.monotonic()
        assert server.terminate() == 143
        took = time.monotonic() - started
    finally:
        for sock in readers:
            sock.close()
    output = server.output()
    assert "Traceback" not in output and "Cancel" not in output, output[-3000:]
    assert took < bounds.GRACEFUL_SHUTDOWN_SECONDS, f"SIGTERM took {took:.1f} s"


# ---------------------------------------------------------------------- slow bodies, floods
def test_a_reconnecting_slow_body_flood_at_the_limit_leaves_health_answering(small_model):
    """30 connections (the limit is 20) send a /predict body a byte every 0.2 s and reconnect
    whenever they are closed: a connection waiting for its body makes room like one waiting
    for its headers, and /health from a fresh connection is answered every time."""
    opening = (b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"Content-Length: 100000\r\n\r\n{")
    with ThreadServer(open_service(small_model), max_connections=20) as server:
        with Flood(server.port, 30, opening) as flood:
            wait_for(lambda: len(server.server.server_state.connections) >= 20, "the flood to fill the limit")
            checks, deadline = 0, time.monotonic() + WAIT
            while checks < 10 or flood.reopened < 30:  # until the flood has come back in full
                assert time.monotonic() < deadline, f"the flood reconnected only {flood.reopened} times"
                assert health(server.port) == 200
                checks += 1
                time.sleep(0.05)


def test_a_body_slower_than_the_minimum_rate_is_cut_after_the_grace_period(small_model):
    with ThreadServer(open_service(small_model), body_seconds=WAIT) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n")
            started = time.monotonic()
            while not select.select([sock], [], [], 0.2)[0]:  # 5 bytes a second until answered
                assert time.monotonic() - started < WAIT, "the slow body was never cut"
                sock.sendall(b" ")
            took = time.monotonic() - started
            _, reply = read_reply(sock)
    assert reply.startswith(b"HTTP/1.1 408") and b"slower than 4,096 bytes/s" in reply, reply[:300]
    assert took < WAIT / 2  # cut after the 2 s grace, long before the body's deadline


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server has closed ``sock`` (without waiting, without reading data)."""
    if not select.select([sock], [], [], 0)[0]:
        return False
    try:
        return sock.recv(1, socket.MSG_PEEK) == b""
    except ConnectionResetError:
        return True


def test_an_address_flooding_the_limit_makes_room_from_its_own_connections(small_model):
    """A client of 127.0.0.1 is the longest-waiting connection when 127.0.0.2 opens 15 more
    (the limit is 10): the room is made from 127.0.0.2, which holds the most connections, and
    the first client's request, finished afterwards, is answered."""
    with ThreadServer(open_service(small_model), max_connections=10) as server, contextlib.ExitStack() as stack:
        mine = stack.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=WAIT))
        mine.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        wait_for(lambda: len(server.server.server_state.connections) == 1, "the first connection")
        everyone = [mine]
        for _ in range(15):
            flood = stack.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=WAIT,
                                                                 source_address=("127.0.0.2", 0)))
            flood.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            everyone.append(flood)
        wait_for(lambda: sum(map(closed_by_server, everyone)) >= 6, "room to be made for 6 connections")
        assert not closed_by_server(mine)
        mine.sendall(b"\r\n")
        assert mine.recv(4096).startswith(b"HTTP/1.1 200")


def test_predictions_waiting_for_their_turn_make_room_at_the_limit(small_model):
    """Every connection holds a complete /predict and none waits on its client: the service
    works on two (here they never finish until the end of the test) and the rest wait for their
    turn. A new connection closes the newest waiting one instead of being refused (one: the
    room made stays free once /health is answered)."""
    service = open_service(small_model)
    release, scored = threading.Event(), service.scored  # what a plain /predict computes
    service.scored = lambda documents: (release.wait(WAIT), scored(documents))[1]
    body = json.dumps({"documents": ["orbit"]}).encode()
    with ThreadServer(service, max_connections=12) as server, contextlib.ExitStack() as stack:
        stack.callback(release.set)
        waiting = [stack.enter_context(slow_reader(server.port, request("POST", "/predict", body)))
                   for _ in range(12)]
        wait_for(lambda: len(server.server.server_state.tasks) == 12, "12 requests")
        for _ in range(3):
            assert health(server.port) == 200
        closed = [closed_by_server(sock) for sock in waiting]
        assert closed == [False] * 11 + [True], str(closed)  # the newest made room
        release.set()
        assert all(read_reply(sock)[0] for sock in waiting[:11])  # the others are answered
