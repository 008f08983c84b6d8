"""Predictions running beside updates see a whole model state, never a half-applied update."""

from __future__ import annotations

import threading

import textcw

from serve_fixtures import save_model, stream, thread_server
from textcw_serve.model_ops import model_digest


def test_every_prediction_matches_the_offline_model_of_its_version(tmp_path):
    model_path = save_model(tmp_path)
    corrections = stream(80, seed=7)
    probes = ["orbit doctor the moon", "patient rocket telescope vaccine", "nasa clinic"]
    learned: dict[int, tuple[str, str]] = {}
    seen: list[tuple[int, list]] = []
    errors: list[BaseException] = []
    done = threading.Event()

    with thread_server(model_path) as server:
        def learner(part):
            client = server.client()
            try:
                for doc, label in part:
                    learned[client.learn([doc], [label])["seq"]] = (doc, label)
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        def predictor():
            client = server.client()
            try:
                while not done.is_set():
                    reply = client.predict(probes)
                    seen.append((reply["model_version"], [p["decision"] for p in reply["predictions"]]))
            except BaseException as exc:
                errors.append(exc)

        learners = [threading.Thread(target=learner, args=(corrections[i::2],)) for i in range(2)]
        predictors = [threading.Thread(target=predictor) for _ in range(3)]
        for thread in predictors + learners:
            thread.start()
        for thread in learners:
            thread.join(120)
        done.set()
        for thread in predictors:
            thread.join(120)
        final = server.client().status()

    assert not errors, errors
    assert sorted(learned) == list(range(1, 81))
    # the offline model after each version, in the service's order (the seq of each reply)
    model = textcw.load(model_path)
    featurizer, learner = model.steps[0][1], model.steps[-1][1]
    X = featurizer.transform(probes)
    expected = {0: learner.decision_function(X).tolist()}
    for seq in range(1, 81):
        doc, label = learned[seq]
        learner.partial_fit(featurizer.transform([doc]), [label])
        expected[seq] = learner.decision_function(X).tolist()
    assert final["model_digest"] == model_digest(model)
    versions = {version for version, _ in seen}
    assert len(seen) > 20 and len(versions) > 5  # predictions really ran beside the updates
    for version, decisions in seen:
        assert decisions == expected[version], f"a prediction at version {version} saw another state"
