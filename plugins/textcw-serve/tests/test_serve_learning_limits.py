"""What /learn cannot change, said at start, in /status and in the replies: words outside a fixed
vocabulary, and the calibration temperature. A hashing model learns a word it never saw."""

from __future__ import annotations

import logging

import pytest
import textcw

from serve_fixtures import ThreadServer, save_model, train_documents
from textcw_serve.startup import open_service

NEW_WORD = "semaglutide"  # not in the generated training documents


@pytest.fixture(scope="module")
def fixed(tmp_path_factory):
    return save_model(tmp_path_factory.mktemp("fixed"))  # binary-bow: a fixed vocabulary


@pytest.fixture(scope="module")
def hashed(tmp_path_factory):
    docs, labels = train_documents()
    model = textcw.make_pipeline("hashing", "cw-stdev").fit(docs, labels)
    return textcw.save(model, tmp_path_factory.mktemp("hashed") / "model.textcw-model")


def test_a_fixed_vocabulary_is_announced_at_start_and_in_status(fixed, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="textcw.serve"):
        service = open_service(fixed, learn=True, state=tmp_path / "state")
    size = len(textcw.load(fixed).steps[0][1].vocabulary_)
    assert (f"model.textcw-model has a fixed vocabulary ({size} terms, featurizer binary-bow): /learn drops "
            "words the model never saw") in caplog.text and "--featurizer hashed-tfidf" in caplog.text
    status = service.status()
    service.stop()
    assert status["vocabulary"]["fixed"] is True and status["vocabulary"]["size"] == size
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="textcw.serve"):
        open_service(fixed).stop()  # predicting only: nothing to say
    assert "fixed vocabulary" not in caplog.text


def test_each_learn_reply_counts_the_words_a_fixed_vocabulary_drops(fixed, tmp_path):
    featurizer = textcw.load(fixed).steps[0][1]
    known = [w for w in sorted(featurizer.vocabulary_) if w.isalpha()][:2]
    with ThreadServer(open_service(fixed, learn=True, state=tmp_path / "state")) as server:
        client = server.client()
        reply = client.learn([f"{known[0]} {NEW_WORD} {NEW_WORD}", f"{known[1]} zorblax"], ["space", "medicine"])
        assert reply["unseen_tokens"] == 3
        assert reply["warning"] == ("3 terms of these documents are not in the model's fixed vocabulary and were "
                                    "dropped: the model cannot learn new words; train it with --featurizer hashed-tfidf "
                                    "to learn them")
        reply = client.learn([" ".join(known)], ["space"])
        assert reply["unseen_tokens"] == 0 and reply["warning"] is None
        # a correction made only of new words changes nothing, and the reply says why
        before = client.predict([NEW_WORD])["predictions"][0]
        wrong = "medicine" if before["label"] == "space" else "space"
        reply = client.learn([NEW_WORD], [wrong])
        assert reply["updates"] == 0 and not reply["changed"] and reply["unseen_tokens"] == 1
        assert client.predict([NEW_WORD])["predictions"][0] == before


def test_a_hashing_model_learns_a_word_it_never_saw(hashed, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="textcw.serve"):
        service = open_service(hashed, learn=True, state=tmp_path / "state")
    assert "fixed vocabulary" not in caplog.text
    with ThreadServer(service) as server:
        client = server.client()
        assert client.status()["vocabulary"] == {
            "fixed": False, "size": None,
            "note": "every word gets a column (no vocabulary): corrections with new words are learned"}
        before = client.predict([NEW_WORD])["predictions"][0]
        assert before["decision"] == 0.0  # nothing known about it
        question = f"what about {NEW_WORD}"
        unsure = client.predict([question])["predictions"][0]["probabilities"]["medicine"]
        reply = client.learn([NEW_WORD], ["medicine"])
        assert reply["unseen_tokens"] is None and reply["warning"] is None and reply["changed"]
        after = client.predict([question])["predictions"][0]
        # the learned word now decides the question (how sure, the kept temperature says)
        assert after["label"] == "medicine" and after["probabilities"]["medicine"] > max(unsure, 0.5) + 0.1


def test_calibration_is_kept_while_learning_and_said_so(tmp_path, caplog):
    from textcw.learners.temperature import TemperatureScaling
    from textcw.pipeline import assemble

    docs, labels = train_documents()
    plain = textcw.make_pipeline("hashing", "cw-stdev").fit(docs, labels)
    scaling = TemperatureScaling(margin="raw", inverse_temperature=0.5, record="cross-fit")
    model = assemble(plain.steps[0][1], plain.steps[-1][1], learner="cw-stdev", featurizer_name="hashing",
                     featurizer_params={}, corpus="generated", calibration=scaling)
    path = textcw.save(model, tmp_path / "calibrated.textcw-model")
    with caplog.at_level(logging.WARNING, logger="textcw.serve"):
        service = open_service(path, learn=True, state=tmp_path / "state")
    assert ("calibrated.textcw-model calibrates its probabilities with a temperature (2) fitted in training; "
            "/learn keeps it as it is while the learner changes") in caplog.text
    with ThreadServer(service) as server:
        client = server.client()
        calibration = client.status()["calibration"]
        assert calibration["temperature"] == 2.0 and calibration["kept_while_learning"] is True
        assert "retrain to refit it" in calibration["note"]
        client.learn(["orbit rocket"] * 3, ["medicine"] * 3)
        assert client.status()["calibration"] == calibration  # the learner changed, the temperature did not
    assert open_service(tmp_path / "calibrated.textcw-model").status()["calibration"]["temperature"] == 2.0
