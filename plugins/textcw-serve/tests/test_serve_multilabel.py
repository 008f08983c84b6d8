"""A multi-label model served: ``/predict`` gives each document its set of tags, as the model's
own ``predict`` does; ``top``, ``explain`` and ``/suggest`` are refused in one line. Learning tag
sets (``--learn``) is tested in test_serve_multilabel_learn.py."""

from __future__ import annotations

import json

import pytest

from serve_fixtures import save_tagged_model, stream, thread_server
from test_serve_answers import post


@pytest.fixture
def tagged(tmp_path):
    return save_tagged_model(tmp_path)


def test_predict_gives_each_document_the_model_s_tags(tagged):
    path, model = tagged
    docs = [doc for doc, _ in stream(12, seed=8)] + ["", "orbit nurse"]
    learner, X = model.steps[-1][1], model.steps[0][1].transform(docs)
    with thread_server(path, learn=False) as server:
        reply = server.client().predict(docs)
    assert reply["classes"] == ["medicine", "other", "space"]
    expected = model.predict(docs)
    assert [tuple(row["label"]) for row in reply["predictions"]] == expected
    assert any(len(tags) > 1 for tags in expected) and any(len(tags) == 1 for tags in expected)
    for row, p, s in zip(reply["predictions"], learner.predict_proba(X), learner.decision_function(X)):
        assert row["probabilities"] == dict(zip(reply["classes"], p.tolist()))
        assert row["decision"] == dict(zip(reply["classes"], s.tolist()))
        assert row["margin"] is None


def test_the_single_label_answers_are_refused_in_one_line(tagged):
    path, _ = tagged
    with thread_server(path, learn=False) as server:
        answers = [post(server.port, "/predict", {"documents": ["orbit"], "top": 1}),
                   post(server.port, "/predict", {"documents": ["orbit"], "explain": 3}),
                   post(server.port, "/suggest", {"documents": ["orbit"], "strategy": "margin"})]
    errors = [json.loads(body)["error"] for _, body in answers]
    assert [status for status, _ in answers] == [422, 422, 422]
    assert errors[0].startswith("top answers for a single-label model; this model is multi-label")
    assert errors[1].startswith("explain answers for a single-label model; this model is multi-label")
    assert errors[2].startswith("/suggest ranks documents for a single-label model; this model is multi-label")
    assert all("\n" not in error for error in errors)
