"""The plain ``/predict`` reply written from the arrays (textcw_serve.replies) is, byte for byte,
what FastAPI renders for ``response_model=PredictResponse`` from the rows; and the writer
declines what it was not written for, so that the rows' own rendering answers it."""

from __future__ import annotations

import math

import numpy as np
import pytest
import textcw
from pydantic import TypeAdapter

from serve_fixtures import save_model, train_documents
from textcw_serve.app import RENDER_CHUNK, render_predict_reply
from textcw_serve.model_ops import LabelMap, Scored, prediction_rows, score
from textcw_serve.replies import ReplyWriter
from textcw_serve.schemas import PredictResponse


def reference_reply(version, labels: LabelMap, scored: Scored) -> bytes:
    """How FastAPI renders response_model=PredictResponse: the rows validated, then dump_json."""
    adapter = TypeAdapter(PredictResponse)
    rows = prediction_rows(scored, labels)
    return adapter.dump_json(adapter.validate_python({"model_version": version, "classes": labels.classes,
                                                      "predictions": rows}), by_alias=True)


def assert_written_as_rendered(version, labels: LabelMap, scored: Scored) -> bytes:
    written = ReplyWriter(labels).render(version, scored, RENDER_CHUNK)
    assert written is not None
    expected = reference_reply(version, labels, scored)
    assert written == expected
    assert written == render_predict_reply(version, labels.classes, prediction_rows(scored, labels))
    return written


def random_scored(classes, n: int, seed: int, *, binary: bool = False) -> Scored:
    """Scores over several magnitudes (digits of every length, exponents), their softmax, and
    the labels those scores pick."""
    rng = np.random.default_rng(seed)
    k = len(classes)
    scale = 10.0 ** rng.integers(-9, 9, size=(n, 1 if binary else k))
    scores = rng.standard_normal((n, 1 if binary else k)) * scale
    if binary:
        scores = scores[:, 0]
        proba = np.column_stack([1 / (1 + np.exp(scores.clip(-700, 700))), 1 / (1 + np.exp(-scores.clip(-700, 700)))])
        predicted = np.asarray(classes, dtype=object)[(scores > 0).astype(int)]
    else:
        e = np.exp(scores / scale.max() - (scores / scale.max()).max(axis=1, keepdims=True))
        proba = e / e.sum(axis=1, keepdims=True)
        predicted = np.asarray(classes, dtype=object)[scores.argmax(axis=1)]
    return Scored(predicted, scores, proba)


@pytest.mark.parametrize(("kind", "n_classes"), [(kind, n) for kind in ("str", "int", "float", "bytes") for n in (2, 3)]
                         + [("bool", 2)])
def test_a_trained_models_reply_is_written_as_fastapi_renders_it(tmp_path, kind, n_classes):
    docs, topics = train_documents()
    topics = [t if n_classes == 2 or i % 3 else "other" for i, t in enumerate(topics)]
    values = {"str": ['m\u00e9dicine "x" 100%s \\ \u00e9\U0001f600', "space", "a%b %%"], "int": [3, -7, 10**12],
              "bool": [False, True, None], "float": [1.0, 2.5, -0.0],
              "bytes": [b"medicine", b"sp\xc3\xa4ce\xff", b"%b"]}[kind]
    mapping = dict(zip(["medicine", "space", "other"], values))
    labels = np.array([mapping[t] for t in topics], dtype=object if kind != "bytes" else "S")
    model = textcw.load(save_model(tmp_path, docs=docs, labels=labels))
    label_map = LabelMap(model.steps[-1][1].classes_)
    many = (docs * 3)[:2 * RENDER_CHUNK + 5]  # three chunks
    scored = score(model, model.steps[0][1].transform(many))
    assert_written_as_rendered(7, label_map, scored)
    assert_written_as_rendered(0, label_map, Scored(scored.predicted[:1], scored.scores[:1], scored.proba[:1]))


@pytest.mark.parametrize("binary", [False, True])
def test_numbers_of_every_size_and_names_to_escape(binary):
    classes = ['say "hi"', "back\\slash", "100%", "%b%s", "tab\there", "\u00e9t\u00e9", "\x01", "</script>"]
    classes = classes[:2] if binary else classes
    labels = LabelMap(np.array(classes, dtype=object))
    for seed in range(3):
        scored = random_scored(classes, 2 * RENDER_CHUNK + 3, seed, binary=binary)
        written = assert_written_as_rendered(seed * 10**9, labels, scored)
        assert written.count(b'"label":') == 2 * RENDER_CHUNK + 3


def test_numbers_that_are_not_finite_are_null():
    labels = LabelMap(np.array(["a", "b", "c"]))
    scores = np.array([[1.0, math.inf, 0.0], [math.nan, 0.5, -1.0], [1e-320, -1e300, 5e-324]])
    proba = np.array([[0.5, 0.5, 0.0], [math.nan, 1.0, 0.0], [0.2, 0.3, 0.5]])
    scored = Scored(np.array(["b", "b", "a"]), scores, proba)
    written = assert_written_as_rendered(3, labels, scored)
    assert b'"b":null' in written and b'"margin":null' in written
    binary = Scored(np.array(["a", "b"]), np.array([-math.inf, 2.0]), np.array([[1.0, 0.0], [0.1, 0.9]]))
    assert b'"decision":null,"margin":null' in assert_written_as_rendered(1, LabelMap(np.array(["a", "b"])), binary)


def test_a_model_without_probabilities_or_scores():
    labels = LabelMap(np.array([1, 2, 3]))
    scored = random_scored([1, 2, 3], 5, seed=4)
    no_proba = Scored(scored.predicted, scored.scores, None)
    assert b'"probabilities":null' in assert_written_as_rendered(2, labels, no_proba)
    no_scores = Scored(scored.predicted, None, scored.proba)
    assert b'"decision":null,"margin":null' in assert_written_as_rendered(2, labels, no_scores)


def test_the_head_is_the_schemas_for_every_version():
    labels = LabelMap(np.array(["x", "y"]))
    adapter = TypeAdapter(PredictResponse)
    writer = ReplyWriter(labels)
    for version in (0, 1, 99, 2**63):
        assert writer.head(version) == adapter.dump_json(adapter.validate_python(
            {"model_version": version, "classes": labels.classes, "predictions": []}), by_alias=True)


def test_the_writer_declines_what_the_rows_answer():
    # classes whose names repeat as text: the rows' dict keeps one of them
    same_text = LabelMap(np.array([1, "1"], dtype=object))
    scored = random_scored([1, "1"], 3, seed=1)
    assert ReplyWriter(same_text).render(0, scored, RENDER_CHUNK) is None
    # a multi-label model's tag sets
    tags = LabelMap(np.array(["a", "b"]), multilabel=True)
    indicator = Scored(np.array([[True, False], [True, True]]), np.zeros((2, 2)), np.full((2, 2), 0.5))
    assert ReplyWriter(tags).render(0, indicator, RENDER_CHUNK) is None
    # a label that is not one of the classes, and scores of another width
    labels = LabelMap(np.array(["a", "b", "c"]))
    good = random_scored(["a", "b", "c"], 4, seed=2)
    writer = ReplyWriter(labels)
    assert writer.render(0, Scored(np.array(["a", "z", "b", "c"]), good.scores, good.proba), RENDER_CHUNK) is None
    assert writer.render(0, Scored(good.predicted, good.scores[:, :2], good.proba), RENDER_CHUNK) is None
    assert writer.render(0, Scored(good.predicted, good.scores[:, :1], None), RENDER_CHUNK) is None
    assert writer.render(0, good, RENDER_CHUNK) == reference_reply(0, labels, good)  # the same writer still writes


def test_true_and_one_are_different_classes():
    labels = LabelMap(np.array([True, 2], dtype=object))
    scored = Scored(np.array([True, 2, True], dtype=object), np.array([[0.5, -0.5], [-1.0, 1.0], [2.0, 0.0]]),
                    np.array([[0.7, 0.3], [0.2, 0.8], [0.9, 0.1]]))
    written = assert_written_as_rendered(0, labels, scored)
    assert written.count(b'"label":true') == 2 and written.count(b'"label":2') == 1


def test_the_served_reply_is_the_schemas_rendering(tmp_path):
    import http.client
    import json

    from serve_fixtures import ThreadServer
    from textcw_serve.startup import open_service

    docs, _ = train_documents()
    service = open_service(save_model(tmp_path))
    model = textcw.load(tmp_path / "model.textcw-model")
    batch = docs[:RENDER_CHUNK + 3]
    expected = reference_reply(0, LabelMap(model.steps[-1][1].classes_), score(model, model.steps[0][1].transform(batch)))
    with ThreadServer(service) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            conn.request("POST", "/predict", body=json.dumps({"documents": batch}),
                         headers={"Content-Type": "application/json"})
            reply = conn.getresponse()
            assert reply.status == 200
            assert reply.read() == expected
        finally:
            conn.close()
