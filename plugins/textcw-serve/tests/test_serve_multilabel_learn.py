"""A multi-label model learning tag sets through ``/learn``, with the single-label path's guarantees.

The property, as for single-label models: the served model equals, bit for bit
(:func:`textcw_serve.model_ops.model_digest`, which digests every label's model, the
temperatures, thresholds and kept honest scores), an offline ``MultiLabel.partial_fit`` over
the acknowledged requests in the order of their record numbers: while serving, after a
checkpoint, after ``kill -9`` and a replay of the update log. Labels of the wrong shape,
unknown tags and log records of the other shape are refused in one line.
"""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest
import textcw
from textcw.errors import DataError, InputError

from serve_fixtures import save_model, save_tagged_model, serve_process, stream, thread_server  # noqa: F401 (fixture)
from test_serve_answers import post
from textcw_serve.journal import LogWriter, encode_record
from textcw_serve.model_ops import model_digest
from textcw_serve.startup import open_service


@pytest.fixture
def tagged(tmp_path):
    return save_tagged_model(tmp_path)


def tag_requests(n: int, seed: int = 5) -> list[tuple[list[str], list[list[str]]]]:
    """``n`` requests of 1-3 documents with their tag sets: the topic, "other" for some, both
    topics for some, and now and then a document without tags."""
    pairs = stream(3 * n, seed=seed)
    rng = np.random.default_rng(seed)
    out, at = [], 0
    for i in range(n):
        size = int(rng.integers(1, 4))
        docs, tags = [], []
        for doc, topic in pairs[at:at + size]:
            draw = rng.random()
            tags.append([] if draw < 0.1 else [topic, "other"] if draw < 0.4 else
                        ["medicine", "space"] if draw < 0.5 else [topic])
            docs.append(doc)
        at += size
        out.append((docs, tags))
    return out


def offline(path, requests):
    """The model file after one ``partial_fit`` per request, in order."""
    model = textcw.load(path)
    featurizer, learner = model.steps[0][1], model.steps[-1][1]
    for docs, tags in requests:
        learner.partial_fit(featurizer.transform(docs), tags)
    return model


def offline_mistakes(path, requests) -> list[int]:
    """Per request: the documents whose predicted tag set just before it differs from the given one."""
    model = textcw.load(path)
    featurizer, learner = model.steps[0][1], model.steps[-1][1]
    out = []
    for docs, tags in requests:
        X = featurizer.transform(docs)
        out.append(sum(set(p) != set(t) for p, t in zip(learner.predict(X), tags)))
        learner.partial_fit(X, tags)
    return out


def test_learning_tag_sets_is_an_offline_partial_fit_of_the_same_requests(tagged, tmp_path):
    path, _ = tagged
    requests = tag_requests(12)
    assert any(tags == [] for _, t in requests for tags in t) and any(len(tags) == 2 for _, t in requests for tags in t)
    with thread_server(path, state=tmp_path / "state", checkpoint_every=0) as server:
        client = server.client()
        before = client.status()
        assert before["multi_label"]["min_labels"] == 1 and before["multi_label"]["unlabelled_documents"] == 0
        replies = [client.learn(docs, tags) for docs, tags in requests]
        status = client.status()
        probe = ["orbit rocket nurse", "clinic vaccine", "launch"]
        predicted = client.predict(probe)
    reference = offline(path, requests)
    assert status["model_digest"] == model_digest(reference) != before["model_digest"]
    assert model_digest(offline(path, requests[::-1])) != status["model_digest"]  # the order shows in the digest
    assert [r["seq"] for r in replies] == list(range(1, 13)) and status["update_count"] == 12
    mistakes = offline_mistakes(path, requests)
    assert [r["mistakes"] for r in replies] == mistakes and 0 < sum(mistakes) < sum(len(d) for d, _ in requests)
    assert [r["updates"] for r in replies] == [len(d) for d, _ in requests] and all(r["changed"] for r in replies)
    assert status["online_mistakes"] == sum(mistakes) and status["documents_seen"] == sum(len(d) for d, _ in requests)
    # a document learned without tags: MultiLabel's min_labels="auto" stops completing to one tag
    assert status["multi_label"]["min_labels"] == 0 and status["multi_label"]["unlabelled_documents"] > 0
    assert [tuple(p["label"]) for p in predicted["predictions"]] == reference.predict(probe)
    assert predicted["model_version"] == 12


def test_concurrent_requests_are_grouped_and_applied_in_record_order(tagged, tmp_path):
    path, _ = tagged
    requests = tag_requests(24, seed=11)
    seqs = {}
    with thread_server(path, state=tmp_path / "state", checkpoint_every=0) as server:
        def send(part):
            client = server.client(timeout=60)
            for k in part:
                seqs[client.learn(*requests[k])["seq"]] = k

        threads = [threading.Thread(target=send, args=(range(j, 24, 4),)) for j in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        status = server.client().status()
    assert sorted(seqs) == list(range(1, 25))
    assert status["model_digest"] == model_digest(offline(path, [requests[seqs[s]] for s in range(1, 25)]))


def test_wrong_shapes_and_unknown_tags_are_refused_in_one_line_and_nothing_is_learned(tagged, tmp_path):
    path, _ = tagged
    single = save_model(tmp_path)
    with thread_server(path, state=tmp_path / "tags-state") as server:
        answers = [post(server.port, "/learn", {"documents": ["orbit"], "labels": ["space"]}),
                   post(server.port, "/learn", {"documents": ["a", "b"], "labels": [["space"], "other"]}),
                   post(server.port, "/learn", {"documents": ["orbit"], "labels": [["spcae", "other"]]}),
                   post(server.port, "/learn", {"documents": ["orbit"], "labels": [[["space"]]]}),
                   post(server.port, "/learn", {"documents": ["orbit"], "labels": [[True]]})]
        status = server.client().status()
    assert status["update_count"] == 0 and (tmp_path / "tags-state" / "updates.log").stat().st_size == 0
    with thread_server(single, state=tmp_path / "state") as server:
        answers.append(post(server.port, "/learn", {"documents": ["orbit"], "labels": [["space"]]}))
        assert server.client().status()["update_count"] == 0
    assert [status for status, _ in answers] == [422] * 6
    errors = [json.loads(body)["error"] for _, body in answers]
    assert errors[0] == ('labels[0] is "space", one label, but this model is multi-label: give each document the '
                         'list of its tags (e.g. ["a", "b"], or [] for none)')
    assert errors[1].startswith('labels[1] is "other", one label, but this model is multi-label')
    assert errors[2] == ('unknown tag "spcae": this model\'s classes are fixed ("medicine", "other", "space"); '
                         'correct the tag or train a model that has it')
    assert errors[3] == ("labels[0]: not a label: give one of the model's classes (a string, a number, true or "
                         "false) or, for a multi-label model, the list of the document's tags")
    assert errors[4].startswith("unknown tag true: ")
    assert errors[5] == ('labels[0] is a list (["space"]), but this model takes one label per document: give one '
                         'of its classes, not a list of tags')
    assert all("\n" not in error for error in errors)


def test_the_client_sends_tuples_and_sets_as_tag_lists(tagged, tmp_path):
    path, _ = tagged
    requests = [(["orbit rocket", "nurse"], [("space",), {"other", "medicine"}]), (["clinic"], [frozenset()])]
    with thread_server(path, state=tmp_path / "state") as server:
        for docs, tags in requests:
            server.client().learn(docs, tags)
        digest = server.client().status()["model_digest"]
    as_lists = [(docs, [sorted(t) for t in tags]) for docs, tags in requests]
    assert digest == model_digest(offline(path, as_lists))


def test_kill_9_mid_stream_restarts_to_the_uninterrupted_model(tagged, tmp_path, serve_process):
    path, _ = tagged
    state = tmp_path / "state"
    # a checkpoint every 4 records: the restart loads one and replays the log after it
    args = [str(path), "--learn", "--state", str(state), "--checkpoint-every", "4"]
    requests = tag_requests(40, seed=21)
    server = serve_process(args, "serve-1.log")
    acked, sent, stop = {}, [], threading.Event()

    def learning():
        client = server.client(timeout=30)
        for k, request in enumerate(requests):
            sent.append(k)
            try:
                acked[client.learn(*request)["seq"]] = k
            except Exception:  # the kill: this one was in flight
                return

    thread = threading.Thread(target=learning)
    thread.start()
    while len(acked) < 10 and thread.is_alive():
        stop.wait(0.005)
    server.kill()
    thread.join(60)
    assert len(acked) >= 10 and acked == {seq: seq - 1 for seq in range(1, len(acked) + 1)}
    server = serve_process(args, "serve-2.log")
    status = server.client().status()
    count = status["update_count"]
    # every acknowledged update is there; the one in flight may be (it was never acknowledged)
    assert count in (len(acked), len(acked) + 1) and count <= len(sent) < len(requests)  # killed mid-stream
    reference = offline(path, requests[:count])
    assert status["model_digest"] == model_digest(reference)
    assert status["last_checkpoint"]["seq"] % 4 == 0 or status["last_checkpoint"]["seq"] == count
    # learning goes on after the replay, and a clean stop's checkpoint reads back the same
    rest = requests[count:count + 3]
    for request in rest:
        server.client().learn(*request)
    digest = server.client().status()["model_digest"]
    server.terminate()
    reference = offline(path, requests[:count + 3])
    assert digest == model_digest(reference) == model_digest(open_service(path, state=state).model)


def write_log(state, records) -> None:
    """Records appended to the state folder's update log, as the service writes them."""
    writer = LogWriter(state / "updates.log", (state / "updates.log").stat().st_size)
    writer.append([encode_record(*record) for record in records])
    writer.close()


def test_a_record_of_the_other_shape_is_refused_on_replay(tagged, tmp_path):
    path, _ = tagged
    single = save_model(tmp_path)
    state, single_state = tmp_path / "state", tmp_path / "single-state"
    for model, folder in ((path, state), (single, single_state)):
        open_service(model, learn=True, state=folder).stop()  # the first checkpoint, an empty log
    write_log(state, [(1, ["orbit"], [["space"]]), (2, ["orbit"], ["space"])])
    with pytest.raises(DataError, match=r"^record 2 of the update log .*updates\.log does not fit this model "
                                        r"\(labels\[0\] is \"space\", one label, but this model is multi-label: .*\); "
                                        r"the log belongs to another model or was modified"):
        open_service(path, learn=True, state=state)
    write_log(single_state, [(1, ["orbit"], [["space"]])])
    with pytest.raises(DataError, match=r"^record 1 of .* \(labels\[0\] is a list \(\[\"space\"\]\), but this model "
                                        r"takes one label per document"):
        open_service(single, learn=True, state=single_state)


@pytest.mark.parametrize("payload", [("orbit", [["space"]]), (["orbit"], "space"), ([3], [["space"]]),
                                     (["orbit", "nurse"], [["space"]]), ([], []), (["orbit"], [[{"tag": 1}]])])
def test_a_record_that_is_no_request_is_refused_on_replay(tagged, tmp_path, payload):
    path, _ = tagged
    state = tmp_path / "state"
    open_service(path, learn=True, state=state).stop()
    write_log(state, [(1, *payload)])
    with pytest.raises(DataError, match=r"^record 1 of the update log .* (is not a /learn request|does not fit this "
                                        r"model \(labels\[0\] holds \{\"tag\": 1\}, which is not a tag)"):
        open_service(path, learn=True, state=state)


def test_a_tag_set_log_replays_into_the_same_model_after_a_restart(tagged, tmp_path):
    path, _ = tagged
    state = tmp_path / "state"
    requests = tag_requests(9, seed=2)
    service = open_service(path, learn=True, state=state, checkpoint_every=4)
    for docs, tags in requests:
        service.submit_update(docs, tags).result(30)
    digest = service.digest()
    # no final checkpoint: record 9 is in the log only, after the checkpoint of record 8
    service.stop(checkpoint=False)
    assert sorted(p.name for p in state.glob("checkpoint-*")) == ["checkpoint-000000000008.textcw-model"]
    restarted = open_service(path, learn=True, state=state)
    assert restarted.counters.seq == 9 and restarted.digest() == digest == model_digest(offline(path, requests))
    restarted.stop()


def test_serve_learn_accepts_a_multi_label_model(tagged):
    path, _ = tagged
    service = open_service(path, learn=True)
    try:
        assert service.learning and service.labels.multilabel and service.deltas is None  # whole checkpoints
    finally:
        service.stop()
    with pytest.raises(InputError, match=r"^labels\[0\] is \"space\", one label"):
        open_service(path, learn=False).labels.resolve(["space"])
