"""The HTTP API against a real uvicorn server on 127.0.0.1: answers equal the model's own."""

from __future__ import annotations

import json

import numpy as np
import pytest
import textcw

from serve_fixtures import assert_same_learner, offline_replay, save_model, stream, thread_server
from textcw_serve.client import Client, ServiceError
from textcw_serve.model_ops import model_digest
from textcw_serve.startup import open_service


@pytest.fixture
def model_path(tmp_path):
    return save_model(tmp_path)


def test_predict_answers_what_the_model_computes(model_path):
    docs = [doc for doc, _ in stream(12, seed=5)]
    model = textcw.load(model_path)
    learner, X = model.steps[-1][1], model.steps[0][1].transform(docs)
    with thread_server(model_path, learn=False) as server:
        reply = server.client().predict(docs)
    assert reply["model_version"] == 0
    assert reply["classes"] == ["medicine", "space"]
    rows = reply["predictions"]
    assert [r["label"] for r in rows] == model.predict(docs).tolist()
    # the model's own probabilities: calibrated when the model was saved calibrated (the default)
    proba, scores = model.predict_proba(docs), learner.decision_function(X)
    for row, p, s in zip(rows, proba, scores):
        # JSON keeps every float exactly (shortest repr round trip)
        assert row["probabilities"] == {"medicine": p[0], "space": p[1]}
        assert row["decision"] == s and row["margin"] == abs(s)


def test_multiclass_predictions_give_scores_per_class_and_the_top_margin(tmp_path):
    docs, labels = [], []
    for doc, label in stream(60, seed=3):
        docs.append(doc)
        labels.append(label if len(docs) % 3 else "other")
    path = save_model(tmp_path, learner="arow", docs=docs, labels=labels)
    model = textcw.load(path)
    scores = model.steps[-1][1].decision_function(model.steps[0][1].transform(docs[:4]))
    with thread_server(path, learn=False) as server:
        rows = server.client().predict(docs[:4])["predictions"]
    for row, s in zip(rows, scores):
        assert row["decision"] == dict(zip(["medicine", "other", "space"], s.tolist()))
        top = np.sort(s)[::-1]
        assert row["margin"] == top[0] - top[1]
        assert row["label"] == ["medicine", "other", "space"][int(np.argmax(s))]


def test_learn_is_partial_fit_in_order_and_status_reports_it(model_path):
    corrections = stream(9)
    batches = [([d for d, _ in corrections[i:i + 3]], [lab for _, lab in corrections[i:i + 3]]) for i in (0, 3, 6)]
    reference = offline_replay(model_path, batches)
    with thread_server(model_path) as server:
        client = server.client()
        replies = [client.learn(docs, labels) for docs, labels in batches]
        status = client.status()
        after = client.predict([corrections[0][0]])
    learner = reference.steps[-1][1]
    mistakes = learner.mistakes_[-3:]
    assert [r["seq"] for r in replies] == [1, 2, 3]
    assert [r["mistakes"] for r in replies] == mistakes
    assert [r["updates"] for r in replies] == learner.n_updates_[-3:]
    assert replies[-1]["online_error"] == sum(mistakes) / 9
    assert status["update_count"] == 3 and status["documents_seen"] == 9
    assert status["online_mistakes"] == sum(mistakes)
    assert status["model_digest"] == model_digest(reference)
    assert status["learner"] == "cw-stdev" and status["featurizer"] == "binary-bow"
    assert status["classes"] == ["medicine", "space"] and status["learning"] is True
    assert status["versions"]["textcw"] == textcw.__version__
    assert after["model_version"] == 3
    X = reference.steps[0][1].transform([corrections[0][0]])
    assert after["predictions"][0]["decision"] == learner.decision_function(X)[0]


def test_checkpoint_writes_what_restores_the_served_model(model_path, tmp_path):
    corrections = stream(4)
    with thread_server(model_path) as server:
        client = server.client()
        client.learn([d for d, _ in corrections], [lab for _, lab in corrections])
        info = client.checkpoint()
        digest = client.status()["model_digest"]
    state = model_path.with_name("model.serve")
    # the rows the update changed, after the model as first served (docs/serve.md, "Deltas")
    assert info["seq"] == 1 and info["file"] == "delta-000000000001.npz"
    assert sorted(p.name for p in state.glob("checkpoint-*")) == ["checkpoint-000000000000.textcw-model"]
    assert (state / "updates.log").stat().st_size == 0
    saved = open_service(model_path, state=state).model  # the checkpoint and the delta, read-only
    assert model_digest(saved) == digest
    assert_same_learner(saved, offline_replay(model_path, [([d for d, _ in corrections], [lab for _, lab in corrections])]))


BAD_BODIES = [
    ({"documents": []}, "documents: List should have at least 1 item"),
    ({"documents": [3]}, "documents[0]: Input should be a valid string"),
    ({"documents": "one document"}, "documents: Input should be a valid list"),
    ({"documents": ["x"] * 513}, "documents: List should have at most 512 items"),
    ({"documents": ["x" * 100_001]}, "documents[0]: String should have at most 100000 characters"),
    ({"docs": ["x"]}, "documents: Field required"),
    ({"documents": ["x"], "labels": ["space"]}, "labels: Extra inputs are not permitted"),
    ([1, 2], "Input should be a valid dictionary"),
]


@pytest.mark.parametrize(("body", "message"), BAD_BODIES)
def test_bad_predict_bodies_get_422_saying_what_is_wrong(model_path, body, message):
    with thread_server(model_path, learn=False) as server, pytest.raises(ServiceError) as error:
        server.client()._call("POST", "/predict", body)
    assert error.value.status == 422
    assert message in error.value.message


@pytest.mark.parametrize(("documents", "labels", "message"), [
    (["a"], ["spam"], 'unknown label "spam": this model\'s classes are fixed ("medicine", "space")'),
    (["a", "b"], ["space"], "documents and labels must have the same length; got 2 documents and 1 labels"),
    (["a"], [True], "unknown label true: this model's classes are fixed"),  # a bool model's label, not this one's
    (["a"], [[1]], "labels[0]"),
    (["a"], [None], "labels[0]"),
    ([], [], "documents: List should have at least 1 item"),
])
def test_bad_learn_bodies_get_422_and_change_nothing(model_path, documents, labels, message):
    with thread_server(model_path) as server:
        client = server.client()
        with pytest.raises(ServiceError) as error:
            client.learn(documents, labels)
        assert error.value.status == 422 and message in error.value.message
        assert client.status()["update_count"] == 0
    assert model_path.with_name("model.serve").joinpath("updates.log").stat().st_size == 0


def test_learn_on_a_service_that_does_not_learn_is_409(model_path):
    with thread_server(model_path, learn=False) as server:
        with pytest.raises(ServiceError) as error:
            server.client().learn(["a"], ["space"])
        assert error.value.status == 409 and "start it with --learn" in error.value.message
        with pytest.raises(ServiceError) as error:
            server.client().checkpoint()
        assert error.value.status == 409


def test_token_guards_learn_and_checkpoint_but_not_predict(model_path):
    token = "s3cret-token-of-32-characters-xx"
    with thread_server(model_path, token=token) as server:
        anonymous, wrong, right = server.client(), server.client(token="x" * 32), server.client(token=token)
        for client in (anonymous, wrong):
            for call in (lambda c: c.learn(["orbit"], ["space"]), lambda c: c.checkpoint()):
                with pytest.raises(ServiceError) as error:
                    call(client)
                assert error.value.status == 401 and "Authorization: Bearer" in error.value.message
        assert anonymous.predict(["orbit"])["predictions"][0]["label"] == "space"
        assert right.learn(["orbit"], ["space"])["seq"] == 1
        assert right.checkpoint()["seq"] == 1
        assert anonymous.status()["token_required"] is True


def test_requests_for_other_host_names_are_refused_on_loopback(model_path):
    import http.client

    with thread_server(model_path, learn=False) as server:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        connection.request("GET", "/status", headers={"Host": "attacker.example:80"})
        reply = connection.getresponse()
        assert reply.status == 421 and b"loopback only" in reply.read()
        connection.close()


def test_metrics_count_requests_documents_and_updates(model_path):
    with thread_server(model_path) as server:
        client = server.client()
        client.predict(["orbit", "doctor"])
        client.predict(["moon"])
        client.learn(["orbit rocket", "nurse"], ["space", "space"])
        with pytest.raises(ServiceError):
            client.predict([])
        text = client.metrics()
    assert 'textcw_serve_requests_total{endpoint="/predict",status="200"} 2.0' in text
    assert 'textcw_serve_requests_total{endpoint="/predict",status="422"} 1.0' in text
    assert "textcw_serve_documents_predicted_total 3.0" in text
    assert "textcw_serve_documents_learned_total 2.0" in text
    assert 'textcw_serve_request_seconds_count{endpoint="/learn"} 1.0' in text
    assert "textcw_serve_commit_group_records_count 1.0" in text


def test_openapi_documents_every_endpoint_and_its_bounds(model_path):
    with thread_server(model_path, learn=False) as server:
        spec = json.loads(server.client()._call("GET", "/openapi.json", None, raw=True))
        page = server.client()._call("GET", "/", None, raw=True)
    assert {"/predict", "/learn", "/status", "/checkpoint", "/health", "/metrics"} <= set(spec["paths"])
    learn = spec["components"]["schemas"]["LearnRequest"]["properties"]
    assert learn["documents"]["maxItems"] == 512 and learn["documents"]["minItems"] == 1
    assert "401" in spec["paths"]["/learn"]["post"]["responses"]
    assert b'<script src="/page.js"' in page


def test_client_refuses_non_http_urls_and_reports_an_unreachable_service():
    with pytest.raises(textcw.errors.TextcwError, match="not an http"):
        Client("file:///etc/passwd")
    from textcw_serve.client import ServiceUnavailableError

    with pytest.raises(ServiceUnavailableError, match="cannot reach"):
        Client("http://127.0.0.1:1", timeout=2).health()


def test_predict_all_splits_any_number_of_documents_within_the_bounds(model_path, monkeypatch):
    from textcw_serve import client as client_module

    short = [f"orbit rocket {i}" if i % 2 else "doctor nurse" for i in range(1300)]
    long = ["doctor nurse " + "x" * 2_000 for _ in range(100)]
    with thread_server(model_path, learn=False) as server:
        rows = server.client().predict_all(short)  # 512 + 512 + 276 documents
        monkeypatch.setattr(client_module, "_BATCH_BYTES", 50_000)
        long_rows = server.client().predict_all(long)  # 24 documents (about 48 kB) per request
        text = server.client().metrics()
    model = textcw.load(model_path)
    assert [r["label"] for r in rows] == model.predict(short).tolist()
    assert [r["label"] for r in long_rows] == model.predict(long).tolist()
    assert 'textcw_serve_requests_total{endpoint="/predict",status="200"} 8.0' in text
    assert 'status="4' not in text
