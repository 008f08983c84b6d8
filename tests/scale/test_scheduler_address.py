"""Connecting to a Dask scheduler: every wait has a deadline, every failure is a clear error.

Peers are local servers on 127.0.0.1 only: one that accepts and never answers, a scheduler's
web server (which waits for a request), ones that send garbage or an endless stream of bytes, one
that answers Dask's handshake and then nothing, and a closed port. The deadlines are set small;
what is asserted is the error, never how long it took.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from contextlib import contextmanager

import pytest

from textcw.errors import ClusterError, ParameterError
from textcw.scale import train_sharded
from textcw.scale.backends import _check_first_message, open_backend

pytest.importorskip("distributed")

DEADLINE = 0.5


@contextmanager
def server(reply: bytes | None, *, answered: int | None = None, then: bytes | None = None,
           stream: int = 0):
    """A TCP server on 127.0.0.1 that sends ``reply`` on accepting (``None``: nothing), then
    ``stream`` more bytes (as fast as the client reads), reads nothing, and keeps every
    connection open; yields its ``HOST:PORT``. With ``answered``, only that many connections get
    ``reply``, the later ones ``then``. textcw connects three times: its own check of the first
    message, Dask's handshake, Dask's client."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    connections = []

    def serve():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            connections.append(conn)
            message = reply if answered is None or len(connections) <= answered else then
            if message is not None:
                threading.Thread(target=send, args=(conn, message), daemon=True).start()

    def send(conn, message):
        try:
            conn.sendall(message)
            chunk = bytes(range(256)) * 256
            for _ in range(stream // len(chunk)):
                conn.sendall(chunk)
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        listener.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the server thread
        listener.close()
        for conn in connections:
            conn.close()
        thread.join(5)


def connect(address, **kwargs):
    with open_backend("dask", scheduler=address, connect_timeout=DEADLINE, workers_timeout=DEADLINE,
                      **kwargs):
        pass


def dask_handshake(scheduler_address: str) -> bytes:
    """The bytes a real Dask scheduler sends first on a new connection."""
    host, port = scheduler_address.removeprefix("tcp://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        head = sock.recv(8, socket.MSG_WAITALL)
        (size,) = struct.unpack("<Q", head)
        return head + sock.recv(size, socket.MSG_WAITALL)


def test_a_peer_that_accepts_and_never_answers():
    with server(None) as address:
        with pytest.raises(ClusterError) as info:
            connect(address)
    assert str(info.value) == (
        f"the Dask scheduler at {address} accepted the connection but did not answer within 0.5 s; "
        "check that the address is a Dask scheduler's (not its dashboard's) and that it is not overloaded")


@pytest.mark.parametrize("garbage,why", [
    (b"HTTP/1.1 400 Bad Request\r\n\r\n" * 4, "its first message announces"),  # a web server
    (struct.pack("<Q", 1 << 62), "its first message announces 4611686018427387904 bytes"),  # a huge length
    (struct.pack("<Q", 24) + struct.pack("<Q", 1 << 40) + b"\0" * 16, "is not Dask's framing"),
])
def test_a_peer_that_speaks_something_else(garbage, why):
    with server(garbage) as address:
        with pytest.raises(ClusterError) as info:
            connect(address)
    message = str(info.value)
    assert message.startswith(f"the peer at {address} does not speak Dask's protocol (")
    assert why in message and message.endswith("check the address and port of the Dask scheduler (default 8786)")


@pytest.mark.parametrize("head,why", [
    # Dask's own connect would allocate the gigabyte and fill it from the stream
    (struct.pack("<Q", 1 << 30), "its first message announces 1073741824 bytes"),
    # ... or take the frame table's 8 GiB frame as still to come, and read it into memory
    (struct.pack("<QQQ", 16, 1, 1 << 33), "its first message is not Dask's framing"),
    (b"", "its first message announces 506097522914230528 bytes"),  # the bytes 0, 1, 2, ... 7
])
def test_a_peer_that_sends_an_endless_stream_is_refused_before_dask_reads_it(head, why):
    """64 MiB stand for an endless stream: far more than the check may read (at most 64 KiB)."""
    with server(head, stream=64 << 20) as address:
        with pytest.raises(ClusterError) as info:
            connect(address)
    assert str(info.value) == (f"the peer at {address} does not speak Dask's protocol ({why}); "
                               "check the address and port of the Dask scheduler (default 8786)")


@pytest.mark.parametrize("content,kind", [
    (b"\xc1" * 8, "FormatError"),  # framing right, not msgpack
    (b"\x07", "TypeError"),  # msgpack, not a dict
    (b"\x81\xa5hello\x01", "ValueError: Your Dask versions may not be in sync"),  # a dict without Dask's keys
])
def test_a_first_message_that_is_not_a_handshake_is_refused_by_dask(content, kind):
    """The framing is right, so Dask's own connect reads the message (bounded) and refuses it."""
    message = struct.pack("<QQ", 1, len(content)) + content
    with server(struct.pack("<Q", len(message)) + message) as address:
        with pytest.raises(ClusterError) as info:
            connect(address)
    text = str(info.value)
    assert text.startswith(f"the peer at {address} does not speak Dask's protocol "
                           f"(Dask could not read its handshake: {kind}")
    assert text.endswith("check the address and port of the Dask scheduler (default 8786), and "
                         "that it runs the same dask and distributed versions as this machine")


def test_the_schedulers_http_port():
    """The port of a real scheduler's web server (its dashboard's, /health, /metrics) says
    nothing until it has a request: textcw sends none, so the deadline ends the wait, and the
    message names the dashboard."""
    import logging
    import urllib.request

    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                       silence_logs=logging.CRITICAL)
    try:
        address = f"127.0.0.1:{cluster.scheduler.http_server.port}"
        with urllib.request.urlopen(f"http://{address}/health", timeout=30) as reply:
            assert reply.read() == b"ok"  # it is the web server
        with pytest.raises(ClusterError) as info:
            connect(address)
    finally:
        cluster.close()
    assert str(info.value) == (
        f"the Dask scheduler at {address} accepted the connection but did not answer within 0.5 s; "
        "check that the address is a Dask scheduler's (not its dashboard's) and that it is not overloaded")


def test_a_peer_that_closes_during_the_handshake():
    with server(struct.pack("<Q", 100) + b"\0" * 10) as address:
        # the server keeps the connection open: the rest never arrives
        with pytest.raises(ClusterError, match="accepted the connection but did not answer within 0.5 s"):
            connect(address)


@pytest.mark.parametrize("answered,message", [
    # Dask's own timeout: the client's first replies never come
    (None, "did not complete the connection within 1 s; check that it is not overloaded"),
    # textcw's asyncio deadline: Dask's handshake (the second connection) never comes
    (1, "accepted the connection but did not answer within 0.5 s; check that the address is a Dask "
        "scheduler's (not its dashboard's) and that it is not overloaded"),
    # the thread given up on: the client's handshake (the third connection) never comes
    (2, "did not complete the connection within 1 s; check that it is not overloaded"),
])
def test_a_scheduler_that_answers_the_handshake_and_then_nothing(dask_cluster, answered, message):
    handshake = dask_handshake(dask_cluster[0])
    with server(handshake, answered=answered) as address:
        with pytest.raises(ClusterError) as info:
            connect(address)
    assert str(info.value) == f"the Dask scheduler at {address} {message}"


def test_a_peer_that_answers_the_client_with_something_else(dask_cluster):
    """A handshake to textcw's check and to Dask's, then a well-framed msgpack 7 to the client."""
    handshake = dask_handshake(dask_cluster[0])
    seven = struct.pack("<QQQ", 17, 1, 1) + b"\x07"
    with server(handshake, answered=2, then=seven) as address:
        with pytest.raises(ClusterError) as info:
            connect(address)
    assert str(info.value).startswith(f"the Dask scheduler at {address} refused the client (TypeError: ")
    assert str(info.value).endswith("); check that it runs the same dask and distributed versions as this machine")


@pytest.mark.parametrize("address,scheme", [
    ("ucx://127.0.0.1:8786", "ucx"), ("inproc://127.0.0.1/1/2", "inproc"), ("tls://127.0.0.1:8786", "tls"),
])
def test_unsupported_schemes_are_refused_before_connecting(address, scheme):
    with pytest.raises(ParameterError) as info:
        connect(address)
    assert str(info.value) == (
        f"scheduler address {address!r} uses {scheme}://, which textcw does not connect over; "
        "give the scheduler's TCP address, HOST:PORT or tcp://HOST:PORT")


@pytest.mark.parametrize("address,fragment", [
    ("127.0.0.1", r"is not HOST:PORT or tcp://HOST:PORT \(missing port number"),
    ("tcp://127.0.0.1:notaport", "is not HOST:PORT or tcp://HOST:PORT"),
])
def test_malformed_addresses(address, fragment):
    with pytest.raises(ParameterError, match=fragment):
        connect(address)


@pytest.mark.parametrize("timeout", [0, -1, float("inf"), float("nan")])
def test_the_deadline_must_be_a_positive_number(timeout):
    with pytest.raises(ParameterError, match=f"connect_timeout={timeout!r} is invalid"):
        with open_backend("dask", scheduler="127.0.0.1:8786", connect_timeout=timeout):
            pass


def test_a_closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{sock.getsockname()[1]}"
    with pytest.raises(ClusterError) as info:
        connect(address)
    assert str(info.value) == (
        f"cannot reach the Dask scheduler at {address} (Connection refused); check the address and that "
        "`dask scheduler` runs there, or drop --scheduler to start a local cluster")


def test_a_scheduler_without_workers():
    import logging

    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=0, host="127.0.0.1", dashboard_address="127.0.0.1:0",
                                       silence_logs=logging.CRITICAL)
    address = cluster.scheduler_address
    try:
        with pytest.raises(ClusterError) as info:
            connect(address)
    finally:
        cluster.close()
    assert str(info.value) == (f"the Dask scheduler at {address} has no workers (waited 0.5 s); "
                               "start some with `dask worker ADDRESS`")
