"""Bounded connections: slow clients (connections that never finish their headers) are closed
after a deadline, cannot pass the connection limit, and leave the service answering others.

(How fast /health answers under 500 slow clients is measured in
``plugins/textcw-serve/benchmarks/slow_clients.py``, not here: no test depends on timing.)
"""

from __future__ import annotations

import contextlib
import http.client
import json
import resource
import socket
import time

import pytest

from serve_fixtures import ThreadServer, save_model, serve_process  # noqa: F401 (a fixture)
from textcw_serve.connections import default_max_connections
from textcw_serve.startup import open_service

SLOW_CLIENTS = 500
WAIT = 30.0  # the longest any step may take before the test fails (it never sleeps that long)


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    return save_model(tmp_path_factory.mktemp("connections"))


@pytest.fixture
def descriptors():
    """Room for the slow clients' sockets and the server's ends of them, in this one process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4 * SLOW_CLIENTS + 256
    if soft != resource.RLIM_INFINITY and soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"the descriptor limit ({hard}) is too low for {SLOW_CLIENTS} connections")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def open_slow(port: int, n: int, *, partial: bool = True) -> list[socket.socket]:
    """``n`` connections that start a request and never finish its headers (or send nothing)."""
    socks = []
    for i in range(n):
        sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        if partial and i % 2 == 0:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        socks.append(sock)
    return socks


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (waits at most WAIT for it)."""
    sock.settimeout(WAIT)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def get(port: int, path: str, body: dict | None = None) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        if body is None:
            connection.request("GET", path)
        else:
            connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read())
    finally:
        connection.close()


def test_hundreds_of_slow_clients_leave_health_predict_and_learn_answering(model_path, tmp_path, descriptors):
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    with ThreadServer(service) as server, contextlib.ExitStack() as stack:
        slow = open_slow(server.port, SLOW_CLIENTS)
        for sock in slow:
            stack.callback(sock.close)
        connections = server.server.server_state.connections
        wait_for(lambda: len(connections) >= SLOW_CLIENTS, f"{SLOW_CLIENTS} connections to be accepted")
        for _ in range(20):
            assert get(server.port, "/health") == (200, {"status": "ok", "learning": True})
        status, reply = get(server.port, "/predict", {"documents": ["orbit rocket", "doctor"]})
        assert status == 200 and [p["label"] for p in reply["predictions"]] == ["space", "medicine"]
        status, reply = get(server.port, "/learn", {"documents": ["orbit"], "labels": ["space"]})
        assert status == 200 and reply["seq"] == 1
        # the slow clients were served nothing and are still waiting (under the 10 s deadline)
        assert len(connections) >= SLOW_CLIENTS


def test_slow_clients_past_the_descriptor_limit_do_not_take_the_service_down(model_path, tmp_path, descriptors,
                                                                            serve_process):
    """The issue's case: a service with 256 descriptors and 500 connections that never finish
    their headers (without the connection limit, accept() fails with EMFILE and nobody is served)."""
    def low_descriptor_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    server = serve_process([str(model_path), "--learn", "--state", str(tmp_path / "state")], "serve.log",
                           preexec_fn=low_descriptor_limit)
    port = int(server.url.rsplit(":", 1)[1])
    slow = open_slow(port, SLOW_CLIENTS)
    try:
        for _ in range(10):
            assert get(port, "/health") == (200, {"status": "ok", "learning": True})
        status, reply = get(port, "/learn", {"documents": ["orbit"], "labels": ["space"]})
        assert status == 200 and reply["seq"] == 1
        assert get(port, "/predict", {"documents": ["doctor"]})[1]["predictions"][0]["label"] == "medicine"
        assert server.client().checkpoint()["seq"] == 1
    finally:
        for sock in slow:
            sock.close()
    assert "connections open (the limit): closing the one that has waited longest" in server.output()


def test_a_connection_that_does_not_finish_its_headers_is_closed_at_the_deadline(model_path):
    with ThreadServer(open_service(model_path), header_seconds=0.5) as server:
        silent, partial = open_slow(server.port, 2)[::-1]  # one sends nothing, one half a request
        trickle = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT)
        started = time.monotonic()
        with silent, partial, trickle:
            for byte in b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n":  # a byte at a time
                with contextlib.suppress(OSError):
                    trickle.sendall(bytes([byte]))
                time.sleep(0.05)
            assert closed_by_server(silent) and closed_by_server(partial) and closed_by_server(trickle)
        assert time.monotonic() - started < WAIT
        assert get(server.port, "/health")[0] == 200


def test_the_bounds_hold_on_uvicorns_pure_python_protocol_too(model_path, monkeypatch):
    """Without httptools uvicorn parses with h11; the same deadline and limit apply."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    from textcw_serve import connections

    monkeypatch.setattr(connections, "_base_protocol", lambda: H11Protocol)
    with ThreadServer(open_service(model_path), header_seconds=0.5, max_connections=6) as server:
        assert server.server.config.http_protocol_class.__name__ == "BoundedH11Protocol"
        slow = open_slow(server.port, 6)
        try:
            assert get(server.port, "/health")[0] == 200  # room made past the limit
            assert all(closed_by_server(sock) for sock in slow)  # the rest at the deadline
        finally:
            for sock in slow:
                sock.close()
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            assert closed_by_server(sock)


def test_a_kept_alive_connection_must_finish_its_next_request_in_time_too(model_path):
    with ThreadServer(open_service(model_path), header_seconds=0.5) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert sock.recv(4096).startswith(b"HTTP/1.1 200")
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # and never more
            assert closed_by_server(sock)


def test_endless_headers_are_cut_off(model_path):
    with ThreadServer(open_service(model_path), max_header_bytes=4096) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=WAIT) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            with contextlib.suppress(OSError):  # the server closes while we still send
                for i in range(64):
                    sock.sendall(b"X-Filler-%d: %s\r\n" % (i, b"y" * 1000))
            assert closed_by_server(sock)
        assert get(server.port, "/health")[0] == 200


def test_past_the_connection_limit_the_longest_waiting_slow_client_makes_room(model_path):
    with ThreadServer(open_service(model_path), max_connections=20) as server:
        connections = server.server.server_state.connections
        slow = open_slow(server.port, 20)
        try:
            wait_for(lambda: len(connections) >= 20, "20 connections")
            for _ in range(5):  # each complete request evicts the oldest slow client
                assert get(server.port, "/health")[0] == 200
            assert all(closed_by_server(sock) for sock in slow[:5])
            assert len(connections) <= 20
        finally:
            for sock in slow:
                sock.close()


def test_the_default_limit_leaves_descriptors_for_the_service(monkeypatch):
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (200, 4096))
    assert default_max_connections() == 136  # the case: 200 descriptors
    monkeypatch.setattr(resource, "getrlimit", lambda kind: (1 << 20, 1 << 20))
    assert default_max_connections() == 2048
