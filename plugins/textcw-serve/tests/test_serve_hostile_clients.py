"""Clients sending garbage, huge or slow bodies get a 4xx, never a 500, and block nobody."""

from __future__ import annotations

import http.client
import json
import select
import socket
import time

import numpy as np
import pytest

from serve_fixtures import ThreadServer, save_model
from textcw_serve.schemas import MAX_BODY_BYTES
from textcw_serve.startup import open_service


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = save_model(tmp_path_factory.mktemp("hostile"))
    service = open_service(path, learn=True)
    with ThreadServer(service, body_seconds=2.0) as running:
        yield running


def post(server, path: str, body: bytes, headers: dict | None = None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json", **(headers or {})})
        reply = connection.getresponse()
        return reply.status, reply.read()
    finally:
        connection.close()


def test_random_bytes_and_mangled_json_get_4xx(server):
    rng = np.random.default_rng(0)
    valid = json.dumps({"documents": ["orbit rocket", "doctor"], "labels": ["space", "medicine"]}).encode()
    statuses = set()
    for i in range(150):
        if i % 3 == 0:
            body = rng.bytes(int(rng.integers(0, 300)))
        else:  # a valid body with bytes replaced, cut off or repeated
            body = bytearray(valid)
            for _ in range(int(rng.integers(1, 4))):
                body[int(rng.integers(0, len(body)))] = int(rng.integers(0, 256))
            body = bytes(body[: int(rng.integers(1, len(body) + 1))]) if i % 3 == 1 else bytes(body)
        for path in ("/predict", "/learn"):
            status, reply = post(server, path, body)
            assert status < 500, (status, body, reply)
            statuses.add(status)
            assert "error" in json.loads(reply) or status == 200
    assert 422 in statuses


@pytest.mark.parametrize(("body", "status", "message"), [
    (b"[" * 100_000 + b"]" * 100_000, 400, "error parsing the body"),
    (b'{"documents": ["\\ud800"]}', 422, "documents[0]"),
    (b'{"documents": [NaN]}', 422, "documents[0]"),
    (b'\xff\xfe{"documents": ["a"]}', 422, "not valid JSON"),
    (b"", 422, "Field required"),
])
def test_deep_unicode_and_empty_bodies(server, body, status, message):
    code, reply = post(server, "/predict", body)
    assert code == status and message in json.loads(reply)["error"]


def read_all(sock) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_declared_huge_body_is_refused_before_it_is_read(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"POST /learn HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000000000\r\n\r\n")
        reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 413") and b"the limit is 4,194,304" in reply


def test_an_undeclared_huge_body_is_cut_off_at_the_limit(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        chunk = b"x" * (1 << 20)
        with pytest.raises(OSError):  # the server answers and closes while we still send
            for _ in range(4 * MAX_BODY_BYTES // len(chunk)):
                sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
            raise OSError("the whole body was accepted")
        reply = sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 413"), reply[:200]


def test_a_slow_body_times_out_and_blocks_nobody(server):
    client = server.client()
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as slow:
        slow.sendall(b"POST /learn HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"documents\"")
        started = time.perf_counter()
        assert client.predict(["orbit"])["predictions"][0]["label"] == "space"
        assert client.learn(["orbit"], ["space"])["documents"] == 1
        # both answered while the slow request still waits for its body
        assert select.select([slow], [], [], 0)[0] == [], "the slow request was answered first"
        reply = read_all(slow)
        waited = time.perf_counter() - started
    assert reply.startswith(b"HTTP/1.1 408") and b"did not arrive within 2 s" in reply
    assert waited < 10


def test_a_bad_content_length_is_400(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n")
        reply = sock.recv(4096)
    assert reply.startswith(b"HTTP/1.1 400")


TOKEN = "a-token-of-at-least-16-characters"


@pytest.mark.parametrize("authorizations", [(f"Bearer {TOKEN}", "Bearer wrong-token-wrong-token"),
                                            ("Bearer wrong-token-wrong-token", f"Bearer {TOKEN}"),
                                            (f"Bearer {TOKEN}", f"Bearer {TOKEN}")])
def test_a_repeated_authorization_header_is_refused_whichever_copy_is_right(tmp_path, authorizations):
    """A proxy may check one copy and the service another: a request with two is refused (400),
    as a JSON body naming a key twice is, and nothing is learned."""
    path = save_model(tmp_path)
    with ThreadServer(open_service(path, learn=True), token=TOKEN) as running:
        headers = b"".join(b"Authorization: %s\r\n" % value.encode() for value in authorizations)
        body = json.dumps({"documents": ["orbit"], "labels": ["space"]}).encode()
        with socket.create_connection(("127.0.0.1", running.port), timeout=10) as sock:
            sock.sendall(b"POST /learn HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + headers
                         + b"Content-Length: %d\r\n\r\n" % len(body) + body)
            reply = read_all(sock)
        assert reply.startswith(b"HTTP/1.1 400"), reply[:200]
        assert b"the request has 2 Authorization headers; send it once" in reply
        assert running.client(token=TOKEN).status()["update_count"] == 0


@pytest.mark.parametrize(("name", "value"), [(b"Host", b"127.0.0.1"), (b"Origin", b"http://127.0.0.1"),
                                             (b"Content-Type", b"application/json")])
def test_other_headers_the_service_decides_on_are_refused_twice_too(server, name, value):
    body = b'{"documents": ["orbit"]}'
    headers = {b"Host": [b"127.0.0.1"], b"Content-Type": [b"application/json"], b"Content-Length": [b"%d" % len(body)]}
    headers.setdefault(name, [value]).append(value)  # twice in all
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(b"POST /predict HTTP/1.1\r\n" + b"".join(b"%s: %s\r\n" % (key, one) for key, values in headers.items()
                                                              for one in values) + b"\r\n" + body)
        reply = read_all(sock)
    assert reply.startswith(b"HTTP/1.1 400") and b"the request has 2 %s headers" % name in reply, reply[:300]
