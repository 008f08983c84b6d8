"""The service's edges: cross-site posts, the token's scheme, the Host header, duplicate JSON keys,
and labels of every type the library trains on."""

from __future__ import annotations

import http.client
import json

import numpy as np
import pytest
import textcw

from serve_fixtures import ThreadServer, assert_same_learner, save_model, train_documents
from textcw_serve.guards import parse_host
from textcw_serve.journal import read_log
from textcw_serve.startup import open_service

TOKEN = "0123456789abcdef-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = save_model(tmp_path_factory.mktemp("edges"))
    with ThreadServer(open_service(path, learn=True), token=TOKEN) as running:
        yield running


def request(server, method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        reply = connection.getresponse()
        return reply.status, json.loads(reply.read() or b"null")
    finally:
        connection.close()


LEARN = json.dumps({"documents": ["orbit rocket"], "labels": ["space"]}).encode()
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"Content-Type": "application/json"}


def update_count(server) -> int:
    return request(server, "GET", "/status")[1]["update_count"]


# ---------------------------------------------------------------------------- cross-site posts
@pytest.mark.parametrize("kind", ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                  "text/plain", "application/jsonx"])
@pytest.mark.parametrize("path", ["/learn", "/checkpoint", "/predict"])
def test_posts_that_a_form_can_make_are_refused(server, kind, path):
    before = update_count(server)
    status, reply = request(server, "POST", path, LEARN, {**AUTH, "Content-Type": kind})
    assert status == 415 and "send 'Content-Type: application/json'" in reply["error"]
    assert update_count(server) == before


@pytest.mark.parametrize(("header", "value"), [
    ("Origin", "http://evil.example"), ("Origin", "null"), ("Origin", "http://127.0.0.1:1"),
    ("Origin", "https://127.0.0.1:{port}"), ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Site", "same-site")])
@pytest.mark.parametrize("path", ["/learn", "/checkpoint"])
def test_posts_from_another_origin_are_refused(server, header, value, path):
    before = update_count(server)
    status, reply = request(server, "POST", path, LEARN if path == "/learn" else None,
                            {**AUTH, **JSON, header: value.format(port=server.port)})
    assert status == 403 and "only the service's own page may post" in reply["error"]
    assert update_count(server) == before


def test_the_services_own_page_and_programs_without_an_origin_may_post(server):
    own = {"Origin": f"http://127.0.0.1:{server.port}", "Sec-Fetch-Site": "same-origin"}
    before = update_count(server)
    assert request(server, "POST", "/learn", LEARN, {**AUTH, **JSON, **own})[0] == 200
    assert request(server, "POST", "/learn", LEARN, {**AUTH, "Content-Type": "application/json; charset=utf-8"})[0] == 200
    assert request(server, "POST", "/checkpoint", None, AUTH)[0] == 200  # curl -X POST: no body, no type
    assert update_count(server) == before + 2


# ---------------------------------------------------------------------------- the token
@pytest.mark.parametrize("value", [f"Bearer {TOKEN}", f"bearer {TOKEN}", f"BEARER {TOKEN}", f"  bEaReR   {TOKEN}  "])
def test_the_bearer_scheme_is_matched_in_any_case(server, value):
    assert request(server, "POST", "/learn", LEARN, {**JSON, "Authorization": value})[0] == 200


@pytest.mark.parametrize("value", [f"Basic {TOKEN}", f"Bearer{TOKEN}", f"Bearer {TOKEN}x", "Bearer", "", TOKEN])
def test_anything_else_is_not_the_token(server, value):
    assert request(server, "POST", "/learn", LEARN, {**JSON, "Authorization": value})[0] == 401


# ---------------------------------------------------------------------------- Host
@pytest.mark.parametrize("host", ["localhost:1@evil.com", "localhost@evil.com", "evil.com", "localhost.evil.com",
                                  "127.0.0.1:80/x", "localhost:", "localhost:abc", "localhost:1:2",
                                  "[::1]@evil.com", "", "127.0.0.1.", "user@127.0.0.1"])
def test_a_malformed_or_foreign_host_is_refused(server, host):
    status, reply = request(server, "GET", "/health", None, {"Host": host})
    assert status in (400, 421), (host, status)
    if status == 421:
        assert "answers requests for localhost, 127.0.0.1 or [::1]" in reply["error"]


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST:8000", "127.0.0.1:1", "[::1]:8000", "[::1]"])
def test_loopback_hosts_are_answered(server, host):
    assert request(server, "GET", "/health", None, {"Host": host})[0] == 200


def test_parse_host():
    assert parse_host("LocalHost:8000") == ("localhost", 8000)
    assert parse_host("[::1]") == ("[::1]", None)
    assert parse_host("localhost:1@evil.com") is None and parse_host("a b") is None


# ---------------------------------------------------------------------------- duplicate keys
@pytest.mark.parametrize("body", [
    b'{"documents": ["orbit"], "labels": ["space"], "labels": ["medicine"]}',
    b'{"documents": ["a"], "documents": ["b"], "labels": ["space"]}',
])
def test_duplicate_json_keys_are_refused(server, body):
    before = update_count(server)
    status, reply = request(server, "POST", "/learn", body, {**AUTH, **JSON})
    assert status == 422 and "names the key" in reply["error"] and "more than once" in reply["error"]
    assert update_count(server) == before
    status, reply = request(server, "POST", "/predict", b'{"documents": ["a"], "documents": ["b"]}', JSON)
    assert status == 422 and 'the key "documents" more than once' in reply["error"]


# ---------------------------------------------------------------------------- labels of every type
LABEL_KINDS = {
    "str": ["medicine", "space"],
    "int": [3, 7],
    "bool": [False, True],
    "bytes": [b"medicine", b"sp\xc3\xa4ce"],
    "float": [1.0, 2.0],
}


@pytest.mark.parametrize("kind", sorted(LABEL_KINDS))
def test_labels_of_every_type_round_trip_through_predict_learn_status_and_the_log(tmp_path, kind):
    docs, topics = train_documents()
    mapping = dict(zip(["medicine", "space"], LABEL_KINDS[kind]))
    labels = np.array([mapping[t] for t in topics], dtype=object if kind != "bytes" else "S")
    path = save_model(tmp_path, docs=docs, labels=labels)
    classes = textcw.load(path).steps[-1][1].classes_
    service = open_service(path, learn=True, state=tmp_path / "state")
    with ThreadServer(service) as running:
        client = running.client()
        shown = client.status()["classes"]
        predicted = client.predict(["orbit rocket launch", "doctor patient"])
        assert predicted["classes"] == shown and len(shown) == 2
        assert {p["label"] for p in predicted["predictions"]} <= set(map(json.dumps, shown)) | set(shown)
        # every label the service shows is one it takes back, of the same JSON type
        for label in shown:
            reply = client.learn(["orbit rocket launch"], [label])
            assert reply["documents"] == 1
        if kind in ("int", "bool", "float"):  # also as text, as before
            client.learn(["doctor"], [str(shown[0])])
        assert client.status()["update_count"] == (3 if kind in ("int", "bool", "float") else 2)
        assert all(isinstance(c, type(shown[0])) for c in shown)
        service.stop(checkpoint=False)  # as a crash leaves it: the updates only in the log
    logged = [r.labels for r in read_log(tmp_path / "state" / "updates.log").records]
    assert logged[:2] == [[shown[0]], [shown[1]]]  # the log records each class's JSON form
    # a restart replays the log to the same model (labels resolved back to the model's own values)
    reference = textcw.load(path)
    steps = [(["orbit rocket launch"], [classes[0]]), (["orbit rocket launch"], [classes[1]])]
    if kind in ("int", "bool", "float"):
        steps.append((["doctor"], [classes[0]]))
    for d, y in steps:
        reference.steps[-1][1].partial_fit(reference.steps[0][1].transform(d), np.array(y, dtype=classes.dtype))
    again = open_service(path, learn=False, state=tmp_path / "state")
    assert_same_learner(again.model, reference)
    if kind == "bytes":
        assert shown == ["medicine", "späce"]
    if kind == "bool":
        assert shown == [False, True]
