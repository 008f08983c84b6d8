"""Connecting to a Dask scheduler: every wait has a deadline, every failure is a clear error.

Peers are local servers on 127.0.0.1 only: one that accepts and never answers, one that sends
garbage, one that answers Dask's handshake and then nothing, and a closed port. The deadlines
are set small; what is asserted is the error, never how long it took.
"""

from __future__ import annotations

import socket
import struct
import threading
from contextlib import contextmanager

import pytest

from textcw.errors import ClusterError, ParameterError
from textcw.scale import train_sharded
from textcw.scale.backends import _check_handshake, open_backend

pytest.importorskip("distributed")

DEADLINE = 0.5


@contextmanager
def server(reply: bytes | None, *, first_only: bool = False):
    """A TCP server on 127.0.0.1 that sends ``reply`` on accepting (``None``: nothing), reads
    nothing, and keeps every connection open; yields its ``HOST:PORT``."""
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
            if reply is not None and not (first_only and len(connections) > 1):
                try:
                    conn.sendall(reply)
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
    (struct.pack("<QQQ", 24, 1, 8) + b"\xc1" * 8, "is not a Dask handshake"),  # framing right, content not
])
def test_a_peer_that_speaks_something_else(garbage, why):
    with server(garbage) as address:
        with pytest.raises(ClusterError) as info:
            connect(address)
    message = str(info.value)
    assert message.startswith(f"the peer at {address} does not speak Dask's protocol (")
    assert why in message and message.endswith("check the address and port of the Dask scheduler (default 8786)")


def test_a_peer_that_closes_during_the_handshake():
    with server(struct.pack("<Q", 100) + b"\0" * 10) as address:
        # the server keeps the connection open: the rest never arrives
        with pytest.raises(ClusterError, match="accepted the connection but did not answer within 0.5 s"):
            connect(address)


def test_a_scheduler_that_answers_the_handshake_and_then_nothing(dask_cluster):
    handshake = dask_handshake(dask_cluster[0])
    _check_handshake(handshake[8:], "real")  # a real scheduler's handshake passes the check
    for first_only in (False, True):
        with server(handshake, first_only=first_only) as address:
            with pytest.raises(ClusterError) as info:
                connect(address)
        # Dask's own timeout (replies never come), or the thread given up on (handshake never comes)
        assert str(info.value) == (f"the Dask scheduler at {address} did not complete the connection "
                                   "within 1 s; check that it is not overloaded")


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
