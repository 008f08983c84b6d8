"""``/predict`` with ``top`` and ``explain``, and ``/suggest``: the library's answers, served.

Each answer is compared with the library's own function on the same model (``textcw.explain.top_k``,
``textcw.explain.explain``, ``textcw.suggest.rank``), exactly; bad bodies get a one-line 422 naming
the field; the plain ``/predict`` reply stays byte for byte what it was.
"""

from __future__ import annotations

import http.client
import json
import threading

import numpy as np
import pytest
import textcw
from pydantic import TypeAdapter
from textcw.explain import explain, top_k
from textcw.suggest import rank

from serve_fixtures import save_model, stream, thread_server
from textcw_serve.app import render_checked
from textcw_serve.client import ServiceError
from textcw_serve.schemas import (MAX_BATCH, MAX_EXPLAIN_CHARS, MAX_EXPLAIN_DOCUMENTS, MAX_EXPLAIN_WORDS,
                                   AnsweredPredictResponse)

# (learner, classes, make_pipeline options): binary and multi-class Gaussian learners with the
# calibrated probabilities of textcw train, a Gaussian learner's own probabilities, and a
# first-order learner without probabilities
MODELS = {
    "cw-stdev-2": ("cw-stdev", 2, {}),
    "arow-3": ("arow", 3, {}),
    "cw-stdev-3-raw": ("cw-stdev", 3, {"probability": "raw"}),
    "pa1-3-raw": ("pa1", 3, {"probability": "raw"}),
}


def documents(classes: int, n: int = 60, seed: int = 3) -> tuple[list[str], list[str]]:
    docs, labels = [], []
    for doc, label in stream(n, seed=seed):
        docs.append(doc)
        labels.append(label if classes == 2 or len(docs) % 3 else "other")
    return docs, labels


@pytest.fixture(params=sorted(MODELS))
def served_model(request, tmp_path):
    learner, classes, options = MODELS[request.param]
    docs, labels = documents(classes)
    path = save_model(tmp_path, learner=learner, docs=docs, labels=labels, **options)
    return path, classes


def queries(n: int = 9) -> list[str]:
    return [doc for doc, _ in stream(n, seed=11)] + ["", "orbit"]


def post(port: int, path: str, body: dict) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", path, json.dumps(body).encode(), {"Content-Type": "application/json"})
        reply = connection.getresponse()
        return reply.status, reply.read()
    finally:
        connection.close()


# ------------------------------------------------------------------------------------ top k
def test_top_k_is_the_library_s_top_k_and_the_rest_of_the_reply_is_the_plain_one(served_model):
    path, classes = served_model
    model, docs = textcw.load(path), queries()
    with thread_server(path, learn=False) as server:
        client = server.client()
        plain = client.predict(docs)
        replies = {k: client.predict(docs, top=k) for k in range(1, classes + 1)}
    for k, reply in replies.items():
        expected = top_k(model, docs, k)
        rows = reply["predictions"]
        assert [[t["label"] for t in row["top"]] for row in rows] == expected.labels.tolist()
        assert [[t["score"] for t in row["top"]] for row in rows] == expected.scores.tolist()
        if expected.probabilities is None:
            assert all(t["probability"] is None for row in rows for t in row["top"])
        else:
            assert [[t["probability"] for t in row["top"]] for row in rows] == expected.probabilities.tolist()
        # the best label is the prediction's, and everything else is the plain reply
        assert [row["top"][0]["label"] for row in rows] == [row["label"] for row in rows]
        assert [{key: v for key, v in row.items() if key != "top"} for row in rows] == plain["predictions"]
        assert all(set(row) == {"label", "probabilities", "decision", "margin", "top"} for row in rows)
        assert {key: reply[key] for key in ("model_version", "classes")} == \
            {key: plain[key] for key in ("model_version", "classes")}


# ------------------------------------------------------------------------------- explanations
def test_explanations_are_the_library_s_and_add_up_to_the_score_difference(served_model):
    path, classes = served_model
    model, docs = textcw.load(path), queries()
    learner = model.steps[-1][1]
    with thread_server(path, learn=False) as server:
        reply = server.client().predict(docs, explain=4)
        every = server.client().predict(docs[:3], explain=MAX_EXPLAIN_WORDS)
    scores = learner.decision_function(model.steps[0][1].transform(docs))
    for doc, row, s in zip(docs, reply["predictions"], scores):
        e, got = explain(model, doc, 4), row["explanation"]
        assert set(row) == {"label", "probabilities", "decision", "margin", "explanation"}
        assert got["label"] == e.label == row["label"] and got["runner_up"] == e.runner_up
        assert got["binary"] is (classes == 2)
        assert [t["contribution"] for t in got["terms"]] == [t.contribution for t in e.terms]
        assert [t["sd"] for t in got["terms"]] == [t.sd for t in e.terms]
        assert [t["column"] for t in got["terms"]] == [t.column for t in e.terms]
        assert [tuple(t["words"]) for t in got["terms"]] == [t.words for t in e.terms]
        assert (got["margin"], got["margin_sd"], got["rest"], got["n_rest"], got["intercept"]) == \
            (e.margin, e.margin_sd, e.rest, e.n_rest, e.intercept)
        assert len(got["terms"]) == min(4, len(e.terms) + e.n_rest)
        # the terms, the other words and the intercept add up to the margin the model computes
        total = sum(t["contribution"] for t in got["terms"]) + got["rest"] + got["intercept"]
        margin = abs(s) if classes == 2 else float(np.sort(s)[-1] - np.sort(s)[-2])
        assert abs(total - got["margin"]) <= 1e-9 and abs(got["margin"] - margin) <= 1e-9
        gaussian = hasattr(learner, "sigma_")
        assert (got["margin_sd"] is not None) is gaussian
        assert all((t["sd"] is not None) is gaussian for t in got["terms"])
    # with room for every word, the rest is empty and the terms alone (and the intercept) add up
    for row in every["predictions"]:
        e = row["explanation"]
        if e["n_rest"] == 0:
            assert abs(sum(t["contribution"] for t in e["terms"]) + e["intercept"] - e["margin"]) <= 1e-9
    assert any(row["explanation"]["terms"] for row in every["predictions"])


def test_a_hashed_model_explains_with_words_and_top_and_explain_together(tmp_path):
    docs, labels = documents(2)
    model = textcw.make_pipeline("hashing", "arow").fit(docs, labels)
    path = textcw.save(model, tmp_path / "hashed.textcw-model")
    with thread_server(path, learn=False) as server:
        reply = server.client().predict(["the doctor and the nurse", "orbit"], top=2, explain=3)
    for doc, row in zip(["the doctor and the nurse", "orbit"], reply["predictions"]):
        e = explain(model, doc, 3)
        assert [t["words"] for t in row["explanation"]["terms"]] == [list(t.words) for t in e.terms]
        assert set(row) == {"label", "probabilities", "decision", "margin", "top", "explanation"}
        assert row["top"][0]["label"] == row["label"] == row["explanation"]["label"]
    assert reply["predictions"][0]["explanation"]["terms"][0]["words"]  # a hashed column shows its words


# ------------------------------------------------------------------------------------ suggest
@pytest.mark.parametrize("strategy", ["mistake", "margin", "random"])
def test_suggestions_are_the_library_s_ranking(served_model, strategy):
    path, _ = served_model
    model, docs = textcw.load(path), queries(30)
    gaussian = hasattr(model.steps[-1][1], "sigma_")
    with thread_server(path, learn=False) as server:
        client = server.client()
        if strategy == "mistake" and not gaussian:
            with pytest.raises(ServiceError) as error:
                client.suggest(docs, n=5, strategy=strategy)
            assert error.value.status == 422
            assert error.value.message.startswith("strategy 'mistake' needs a learner with a distribution over weights")
            assert "use strategy 'margin' or 'random'" in error.value.message and "\n" not in error.value.message
            return
        replies = {(n, seed): client.suggest(docs, n=n, strategy=strategy, seed=seed)
                   for n, seed in [(5, 0), (len(docs) + 3, 0), (1, 7)]}
    labels = model.predict(docs).tolist()
    for (n, seed), reply in replies.items():
        expected = rank(model, docs, strategy, n, seed=seed)
        assert reply["strategy"] == strategy and reply["model_version"] == 0
        assert [s["index"] for s in reply["suggestions"]] == [s.index for s in expected]
        assert [s["score"] for s in reply["suggestions"]] == [s.score for s in expected]
        assert [s["label"] for s in reply["suggestions"]] == [labels[s.index] for s in expected]
        assert len(reply["suggestions"]) == min(n, len(docs))
    if strategy == "random":  # the seed decides the draw
        assert replies[(5, 0)]["suggestions"][0]["score"] != replies[(1, 7)]["suggestions"][0]["score"]


def test_suggest_reads_the_model_as_it_is_after_updates(tmp_path):
    path = save_model(tmp_path)
    docs = queries(20)
    corrections = stream(6, seed=2)
    with thread_server(path) as server:
        client = server.client()
        client.learn([d for d, _ in corrections], [lab for _, lab in corrections])
        reply = client.suggest(docs, n=4, strategy="mistake")
        status = client.status()
    assert reply["model_version"] == 1 == status["update_count"]
    learned = textcw.load(path)
    learned.steps[-1][1].partial_fit(learned.steps[0][1].transform([d for d, _ in corrections]),
                                     [lab for _, lab in corrections])
    assert [s["index"] for s in reply["suggestions"]] == [s.index for s in rank(learned, docs, "mistake", 4)]


def test_suggest_waits_for_no_update_and_holds_the_model_as_a_prediction_does(tmp_path):
    """Many /suggest and /learn requests at once: every update is applied and every ranking is
    of one model state (its version's)."""
    path = save_model(tmp_path)
    docs = queries(40)
    corrections = stream(8, seed=6)
    failures = []
    with thread_server(path) as server:
        client = server.client()

        def ask():
            try:
                for _ in range(5):
                    assert client.suggest(docs, n=3, strategy="mistake")["suggestions"]
            except Exception as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        threads = [threading.Thread(target=ask) for _ in range(3)]
        for thread in threads:
            thread.start()
        for doc, label in corrections:
            client.learn([doc], [label])
        for thread in threads:
            thread.join(120)
        assert not any(thread.is_alive() for thread in threads)
        assert client.status()["update_count"] == len(corrections)
    assert failures == []


# ---------------------------------------------------------------------------------- bad bodies
BAD = [
    ("/predict", {"documents": ["x"], "top": 0}, "top: Input should be greater than or equal to 1"),
    ("/predict", {"documents": ["x"], "top": 3}, "top 3 is invalid: this model has 2 labels; give top from 1 to 2"),
    ("/predict", {"documents": ["x"], "top": "2"}, "top: Input should be a valid integer"),
    ("/predict", {"documents": ["x"], "top": 1.0}, "top: Input should be a valid integer"),
    ("/predict", {"documents": ["x"], "top": True}, "top: Input should be a valid integer"),
    ("/predict", {"documents": ["x"], "explain": 0}, "explain: Input should be greater than or equal to 1"),
    ("/predict", {"documents": ["x"], "explain": MAX_EXPLAIN_WORDS + 1},
     f"explain: Input should be less than or equal to {MAX_EXPLAIN_WORDS}"),
    ("/predict", {"documents": ["x"] * (MAX_EXPLAIN_DOCUMENTS + 1), "explain": 3},
     f"explain: at most {MAX_EXPLAIN_DOCUMENTS} documents per request are explained; got {MAX_EXPLAIN_DOCUMENTS + 1}"),
    ("/predict", {"documents": ["x" * 30_000, "y" * 20_001], "explain": 3},
     f"explain: at most {MAX_EXPLAIN_CHARS:,} characters of documents per request are explained; got 50,001"),
    ("/predict", {"documents": ["x"], "explain": [3]}, "explain: Input should be a valid integer"),
    ("/predict", {"documents": ["x"], "top": 1, "why": 3}, "why: Extra inputs are not permitted"),
    ("/suggest", {"documents": ["x"], "strategy": "entropy"},
     "strategy: Input should be 'mistake', 'margin' or 'random'"),
    ("/suggest", {"documents": ["x"], "n": 0}, "n: Input should be greater than or equal to 1"),
    ("/suggest", {"documents": ["x"], "n": MAX_BATCH + 1}, f"n: Input should be less than or equal to {MAX_BATCH}"),
    ("/suggest", {"documents": ["x"], "n": "3"}, "n: Input should be a valid integer"),
    ("/suggest", {"documents": ["x"], "seed": -1}, "seed: Input should be greater than or equal to 0"),
    ("/suggest", {"documents": ["x"], "seed": 1.5}, "seed: Input should be a valid integer"),
    ("/suggest", {"documents": ["x"], "labels": ["space"]}, "labels: Extra inputs are not permitted"),
    ("/suggest", {"documents": []}, "documents: List should have at least 1 item"),
    ("/suggest", {"documents": ["x"] * (MAX_BATCH + 1)}, f"documents: List should have at most {MAX_BATCH} items"),
    ("/suggest", {"documents": ["x" * 100_001]}, "documents[0]: String should have at most 100000 characters"),
    ("/suggest", {"documents": [3]}, "documents[0]: Input should be a valid string"),
    ("/suggest", {"n": 3}, "documents: Field required"),
]


def test_explain_takes_up_to_its_bounds_exactly(tmp_path):
    path = save_model(tmp_path)
    at_bound = ["doctor " * 400] * (MAX_EXPLAIN_DOCUMENTS - 1)  # 42,000 characters
    at_bound.append("x" * (MAX_EXPLAIN_CHARS - sum(map(len, at_bound))))
    with thread_server(path, learn=False) as server:
        status, body = post(server.port, "/predict", {"documents": at_bound, "explain": MAX_EXPLAIN_WORDS})
    assert status == 200, body
    rows = json.loads(body)["predictions"]
    assert len(rows) == MAX_EXPLAIN_DOCUMENTS and rows[0]["explanation"]["terms"][0]["words"] == ["doctor"]


def test_bad_bodies_get_a_one_line_422_naming_the_field(tmp_path):
    path = save_model(tmp_path)
    with thread_server(path, learn=False) as server:
        answers = [post(server.port, where, body) for where, body, _ in BAD]
    for (where, body, message), (status, reply) in zip(BAD, answers):
        error = json.loads(reply)["error"]
        assert status == 422 and error.startswith(message), (where, body, status, error)
        assert "\n" not in error


# ------------------------------------------------------------------------ the plain reply
def test_the_plain_reply_is_byte_for_byte_the_same_without_the_options(tmp_path):
    path = save_model(tmp_path)
    docs = queries()
    with thread_server(path, learn=False) as server:
        plain = post(server.port, "/predict", {"documents": docs})
        nulls = post(server.port, "/predict", {"documents": docs, "top": None, "explain": None})
        both = post(server.port, "/predict", {"documents": docs, "top": 2, "explain": 2})
    model = textcw.load(path)
    assert plain[0] == nulls[0] == both[0] == 200
    assert plain[1] == nulls[1]
    rows = json.loads(plain[1])["predictions"]
    assert [r["label"] for r in rows] == model.predict(docs).tolist()
    assert all(set(r) == {"label", "probabilities", "decision", "margin"} for r in rows)
    # the options add their fields and change nothing else
    answered = json.loads(both[1])
    assert [{k: v for k, v in r.items() if k not in ("top", "explanation")} for r in answered["predictions"]] == rows
    # rendered without validation, as pydantic renders the validated reply (with the fields given)
    assert both[1] == render_checked(TypeAdapter(AnsweredPredictResponse), answered)


def test_openapi_and_status_describe_the_options_and_suggest(tmp_path):
    with thread_server(save_model(tmp_path), learn=False) as server:
        spec = json.loads(server.client()._call("GET", "/openapi.json", None, raw=True))
        limits = server.client().status()["limits"]
    assert (limits["max_explain_documents"], limits["max_explain_chars"], limits["max_explain_words"]) == \
        (MAX_EXPLAIN_DOCUMENTS, MAX_EXPLAIN_CHARS, MAX_EXPLAIN_WORDS)
    schemas = spec["components"]["schemas"]
    assert "/suggest" in spec["paths"]
    predict = schemas["PredictRequest"]
    assert predict["additionalProperties"] is False and {"documents", "top", "explain"} == set(predict["properties"])
    assert all(schemas["SuggestRequest"]["properties"][k].get("description") or k == "strategy"
               for k in ("documents", "n", "seed"))
    assert schemas["SuggestRequest"]["properties"]["strategy"]["enum"] == ["mistake", "margin", "random"]


def test_a_document_with_no_known_word_is_labelled_as_the_library_labels_it(tmp_path):
    # Short sentences of two languages and, a third of them, a token no other document has:
    # documents with no known word are "zh" by the calibration (textcw.learners.unknown_documents),
    # though the learner, without an intercept, scores them 0 for every label.
    rng = np.random.default_rng(0)
    docs, labels = [], []
    for i in range(300):
        label = ("en", "fr", "zh")[i % 3]
        words = {"en": "the cat sat on a mat", "fr": "le chat est sur un tapis"}.get(label)
        docs.append(" ".join(rng.choice(words.split(), size=4)) if words else f"x{i}y{rng.integers(10**9)}")
        labels.append(label)
    model = textcw.make_pipeline("tfidf", "cw-stdev", train_defaults=True, fit_intercept=False).fit(docs, labels)
    assert model.probability_calibration_.unknown is not None
    path = textcw.save(model, tmp_path / "m.textcw-model")
    asked = ["qqqqqqqq", "the cat sat", "zzzz"]
    with thread_server(path, learn=False) as server:
        rows = server.client().predict(asked, top=2, explain=3)["predictions"]
    assert [row["label"] for row in rows] == list(model.predict(asked)) == ["zh", "en", "zh"]
    assert [list(row["probabilities"].values()) for row in rows] == model.predict_proba(asked).tolist()
    assert [[t["label"] for t in row["top"]] for row in rows] == top_k(model, asked, 2).labels.tolist()
    assert [row["explanation"]["unknown"] for row in rows] == [True, False, True]
    assert [row["explanation"]["label"] for row in rows] == [explain(model, doc).label for doc in asked]
