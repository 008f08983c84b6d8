"""The fast paths answer exactly as the slow ones: the fast endpoints as FastAPI, a reply rendered
without validation as pydantic renders it, the decision scores computed once as the learner's
own methods."""

from __future__ import annotations

import http.client
import json
import math

import numpy as np
import pytest
import textcw
from pydantic import TypeAdapter

from serve_fixtures import ThreadServer, save_model, stream, train_documents
from textcw_serve import app as app_module
from textcw_serve.app import RENDER_CHUNK, render_predict_reply
from textcw_serve.fastpath import FastEndpoints
from textcw_serve.model_ops import LabelMap, Scored, prediction_rows, predictions, score
from textcw_serve.schemas import PredictResponse
from textcw_serve.startup import open_service

TOKEN = "a-token-of-sixteen-or-more"


@pytest.fixture
def model_path(tmp_path):
    return save_model(tmp_path)


# ---------------------------------------------------------------------------------- the replies
@pytest.mark.parametrize("learner", ["cw-stdev", "arow"])
@pytest.mark.parametrize("classes", [2, 3])
def test_scores_are_the_learners_own(tmp_path, learner, classes):
    docs, labels = [], []
    for doc, label in stream(60, seed=3):
        docs.append(doc)
        labels.append(label if classes == 2 or len(docs) % 3 else "other")
    model = textcw.load(save_model(tmp_path, learner=learner, docs=docs, labels=labels))
    X = model.steps[0][1].transform(docs[:7])
    scored = score(model, X)
    learner_ = model.steps[-1][1]
    assert scored.predicted.tolist() == learner_.predict(X).tolist()
    assert scored.scores.tobytes() == np.asarray(learner_.decision_function(X), dtype=float).tobytes()
    assert scored.proba.tobytes() == np.asarray(model.predict_proba(docs[:7]), dtype=float).tobytes()


def reference_reply(version, classes, rows) -> bytes:
    """How FastAPI renders response_model=PredictResponse: validated, then dump_json."""
    adapter = TypeAdapter(PredictResponse)
    return adapter.dump_json(adapter.validate_python({"model_version": version, "classes": classes,
                                                      "predictions": rows}), by_alias=True)


@pytest.mark.parametrize("kind", ["str", "int", "bool", "float", "bytes"])
def test_a_reply_renders_as_pydantic_renders_it(tmp_path, kind):
    docs, topics = train_documents()
    values = {"str": ["médicine \"x\" \u00e9\U0001f600", "space"], "int": [3, -7], "bool": [False, True],
              "float": [1.0, 2.5], "bytes": [b"medicine", b"sp\xc3\xa4ce\xff"]}[kind]
    mapping = dict(zip(["medicine", "space"], values))
    labels = np.array([mapping[t] for t in topics], dtype=object if kind != "bytes" else "S")
    model = textcw.load(save_model(tmp_path, docs=docs, labels=labels))
    label_map = LabelMap(model.steps[-1][1].classes_)
    many = (docs * 3)[:2 * RENDER_CHUNK + 5]  # three chunks
    rows = predictions(model, model.steps[0][1].transform(many), label_map)
    assert render_predict_reply(7, label_map.classes, rows) == reference_reply(7, label_map.classes, rows)
    rows[0]["margin"], rows[1]["probabilities"] = None, dict.fromkeys(rows[1]["probabilities"])  # nulls
    assert render_predict_reply(0, label_map.classes, rows[:3]) == reference_reply(0, label_map.classes, rows[:3])


def test_scores_that_are_not_finite_become_null():
    scored = Scored(np.array(["a", "b"]), np.array([[1.0, math.inf], [math.nan, 0.5]]),
                    np.array([[0.5, 0.5], [0.2, 0.8]]))
    rows = prediction_rows(scored, LabelMap(np.array(["a", "b"])))
    assert rows[0]["decision"] == {"a": 1.0, "b": None} and rows[0]["margin"] is None
    assert rows[1]["decision"] == {"a": None, "b": 0.5} and rows[1]["margin"] is None
    assert rows[1]["probabilities"] == {"a": 0.2, "b": 0.8}


# ---------------------------------------------------------------------------------- the endpoints
def exchange(port: int, method: str, path: str, body: bytes | None, headers: dict) -> tuple:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        reply = conn.getresponse()
        kept = sorted((k.lower(), v.replace(f":{port}/", ":PORT/")) for k, v in reply.getheaders() if k.lower() != "date")
        return reply.status, kept, reply.read()
    finally:
        conn.close()


def requests_to_compare(docs, labels):
    """``(method, path, body, headers, fast)``: ``fast`` if the fast endpoints answer it."""
    js = {"Content-Type": "application/json"}
    auth = {**js, "Authorization": f"Bearer {TOKEN}"}
    body = lambda value: json.dumps(value).encode()  # noqa: E731
    return [
        ("POST", "/predict", body({"documents": docs[:3]}), js, True),
        ("POST", "/predict", body({"documents": docs[:1]}), {"Content-Type": "Application/JSON; charset=utf-8"}, True),
        ("POST", "/predict", body({"documents": docs[:2]}), {"Content-Type": "application/problem+json"}, False),
        ("POST", "/predict", body({"documents": []}), js, False),
        ("POST", "/predict", body({"documents": [3]}), js, False),
        ("POST", "/predict", body({"documents": ["x"], "extra": 1}), js, False),
        ("POST", "/predict", b'{"documents": ["x"', js, False),
        ("POST", "/predict", b"[1, 2]", js, False),
        ("POST", "/predict", b"", js, False),
        ("POST", "/predict", None, {}, False),
        ("POST", "/predict/", body({"documents": docs[:1]}), js, False),
        ("GET", "/predict", None, {}, False),
        ("POST", "/learn", body({"documents": docs[:1], "labels": labels[:1]}), auth, True),
        ("POST", "/learn", body({"documents": docs[1:3], "labels": labels[1:3]}), auth, True),
        ("POST", "/learn", body({"documents": docs[:1], "labels": labels[:1]}), js, False),
        ("POST", "/learn", body({"documents": docs[:1], "labels": labels[:1]}),
         {**js, "Authorization": "Bearer wrong-token-of-length"}, False),
        ("POST", "/learn", b"not json", js, False),
        ("POST", "/learn", body({"documents": docs[:1], "labels": ["no such class"]}), auth, True),  # the service's 422
        ("POST", "/learn", body({"documents": docs[:2], "labels": labels[:1]}), auth, False),
        ("POST", "/learn", body({"documents": docs[:1], "labels": [None]}), auth, False),
        ("POST", "/learn", body({"documents": docs[3:4], "labels": labels[3:4]}), auth, True),
        ("POST", "/predict", body({"documents": docs[:4]}), js, True),  # after the updates: model_version 3
    ]


def served(model_path, state, fast: bool, monkeypatch):
    if not fast:  # the FastAPI application alone, as before the fast endpoints
        monkeypatch.setattr(app_module, "FastEndpoints", lambda app, routes, error_response: app)
    service = open_service(model_path, learn=True, state=state)
    server = ThreadServer(service, token=TOKEN)
    monkeypatch.undo()
    return server


def test_the_fast_endpoints_answer_byte_for_byte_as_fastapi_and_decline_the_rest(model_path, tmp_path, monkeypatch):
    corrections = stream(6, seed=4)
    requests = requests_to_compare([d for d, _ in corrections], [label for _, label in corrections])
    answers, declined = {}, []
    for fast in (False, True):
        with served(model_path, tmp_path / f"state-{fast}", fast, monkeypatch) as server:
            reached = []
            if fast:  # count the requests the fast endpoints pass on to FastAPI
                layer = server.app
                while not isinstance(layer, FastEndpoints):
                    layer = layer.app
                inner = layer.app

                async def counting(scope, receive, send, inner=inner):
                    reached.append(scope["path"])
                    await inner(scope, receive, send)
                layer.app = counting
            answers[fast] = []
            for method, path, body, headers, _ in requests:
                before = len(reached)
                answers[fast].append(exchange(server.port, method, path, body, headers))
                declined.append(len(reached) > before)
    for request, slow, quick in zip(requests, answers[False], answers[True]):
        assert slow == quick, (request[:2], request[2][:60] if request[2] else None, slow, quick)
    assert [status for status, _, _ in answers[True]] == [200, 200, 200, 422, 422, 422, 422, 422, 422, 422, 307,
                                                          405, 200, 200, 401, 401, 422, 422, 422, 422, 200, 200]
    assert json.loads(answers[True][-1][2])["model_version"] == 3
    assert declined[len(requests):] == [not fast for *_, fast in requests]


# ---------------------------------------------------------------------------------- a client gone
def test_disconnected_asks_without_waiting_and_leaves_nothing_waiting():
    import asyncio

    async def check():
        arrived = asyncio.Event()

        async def would_wait():  # uvicorn's receive before the client goes: waits for a message
            await arrived.wait()
            return {"type": "http.disconnect"}

        async def gone():  # ... and after: the disconnect at once
            return {"type": "http.disconnect"}

        async def more_body():
            return {"type": "http.request", "body": b"", "more_body": False}

        def pending_future():  # a receive that returns a future rather than a coroutine
            return asyncio.get_running_loop().create_future()

        found = [app_module.disconnected(receive) for receive in (would_wait, gone, more_body, pending_future)]
        # the given-up wait left no waiter behind: setting the event wakes nobody
        return found, len(arrived._waiters)

    assert asyncio.run(check()) == ([False, True, False, False], 0)


def test_a_prediction_whose_client_left_while_it_waited_for_its_turn_is_not_made(model_path):
    import socket
    import threading
    import time

    service = open_service(model_path)
    made, hold = [], threading.Event()
    scored = service.scored  # what a plain /predict computes

    def holding(documents):
        made.append(documents[0])
        if documents[0].startswith("hold"):
            assert hold.wait(60), "never released"
        return scored(documents)

    service.scored = holding
    js = {"Content-Type": "application/json"}
    body = lambda docs: json.dumps({"documents": docs}).encode()  # noqa: E731
    with ThreadServer(service) as server:
        holders = [threading.Thread(target=exchange, args=(server.port, "POST", "/predict", body([f"hold {i}"]), js))
                   for i in range(app_module.PREDICT_SLOTS)]
        for thread in holders:
            thread.start()
        deadline = time.monotonic() + 60
        while len(made) < app_module.PREDICT_SLOTS:  # every slot busy
            assert time.monotonic() < deadline, made
            time.sleep(0.01)
        connections = server.server.server_state.connections
        gone = socket.create_connection(("127.0.0.1", server.port))
        payload = body(["gone"])
        gone.sendall(b"POST /predict HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(payload), payload))
        while not any(c.cycle is not None and c.cycle.scope.get("textcw.queued") for c in list(connections)):
            assert time.monotonic() < deadline, "the request never waited for its turn"
            time.sleep(0.01)
        queued = len(connections)
        gone.close()
        while len(connections) >= queued:  # the service saw it close
            assert time.monotonic() < deadline, "the close was never seen"
            time.sleep(0.01)
        hold.set()
        for thread in holders:
            thread.join(60)
        status, _, reply = exchange(server.port, "POST", "/predict", body(["after"]), js)
    assert status == 200 and len(json.loads(reply)["predictions"]) == 1
    assert sorted(made) == ["after"] + [f"hold {i}" for i in range(app_module.PREDICT_SLOTS)]
