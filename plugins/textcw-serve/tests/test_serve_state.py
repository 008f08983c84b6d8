"""Start-up from a state folder: newest checkpoint plus the log after it equals offline partial_fit."""

from __future__ import annotations

import pytest
import textcw
from textcw.errors import InputError

from serve_fixtures import assert_same_learner, offline_replay, save_model, stream
from textcw_serve.journal import encode_record, read_log
from textcw_serve.startup import open_service


def batches(n: int, size: int = 2, seed: int = 1):
    pairs = stream(n * size, seed=seed)
    return [([d for d, _ in pairs[i:i + size]], [lab for _, lab in pairs[i:i + size]]) for i in range(0, n * size, size)]


def learn_all(service, work) -> list[dict]:
    return [service.submit_update(docs, labels).result(30) for docs, labels in work]


@pytest.fixture
def model_path(tmp_path):
    return save_model(tmp_path)


def test_a_restart_replays_the_log_after_the_newest_checkpoint(model_path, tmp_path):
    work = batches(8)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, work[:5])
    assert service.submit_checkpoint().result(30)["seq"] == 5
    learn_all(service, work[5:])
    service.stop(checkpoint=False)  # as a crash leaves it: the last 3 updates only in the log
    assert [r.seq for r in read_log(tmp_path / "state" / "updates.log").records] == [6, 7, 8]

    again = open_service(model_path, learn=True, state=tmp_path / "state")
    reference = offline_replay(model_path, work)
    assert_same_learner(again.model, reference)
    assert again.counters.seq == 8 and again.counters.documents == 16
    assert again.counters.mistakes == sum(reference.steps[-1][1].mistakes_[-8:])
    assert again.submit_update(["orbit"], ["space"]).result(30)["seq"] == 9
    again.stop()


def test_a_crash_between_checkpoint_and_emptying_the_log_replays_nothing_twice(model_path, tmp_path):
    work = batches(3)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, work)
    service.state.write_checkpoint(service.model, service.counters)  # the checkpoint, not the reset
    service.stop(checkpoint=False)
    assert len(read_log(tmp_path / "state" / "updates.log").records) == 3

    again = open_service(model_path, learn=True, state=tmp_path / "state")
    assert_same_learner(again.model, offline_replay(model_path, work))
    assert again.counters.seq == 3 and (tmp_path / "state" / "updates.log").stat().st_size == 0
    again.stop()


def test_a_torn_last_write_is_dropped_and_learning_continues(model_path, tmp_path):
    work = batches(3)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, work)
    service.stop(checkpoint=False)
    log = tmp_path / "state" / "updates.log"
    with open(log, "ab") as fh:  # a group that was being written when the process died
        fh.write(encode_record(4, ["never acknowledged"], ["space"])[:-3])

    again = open_service(model_path, learn=True, state=tmp_path / "state")
    assert again.counters.seq == 3
    assert_same_learner(again.model, offline_replay(model_path, work))
    assert again.submit_update(["orbit"], ["space"]).result(30)["seq"] == 4
    again.stop(checkpoint=False)
    assert [r.documents for r in read_log(log).records][-1] == ["orbit"]


def test_the_default_state_folder_is_beside_the_model(model_path):
    service = open_service(model_path, learn=True)
    service.stop()
    assert sorted(p.name for p in (model_path.parent / "model.serve").iterdir()) == [
        "checkpoint-000000000000.textcw-model", "checkpoints.sha256", "lock", "updates.log"]


def test_a_state_folder_of_another_model_is_refused(model_path, tmp_path):
    open_service(model_path, learn=True, state=tmp_path / "state").stop()
    other = save_model(tmp_path, learner="arow", name="other.textcw-model")
    with pytest.raises(InputError, match="belongs to another model"):
        open_service(other, learn=True, state=tmp_path / "state")


def test_two_services_cannot_learn_into_one_folder(model_path, tmp_path):
    first = open_service(model_path, learn=True, state=tmp_path / "state")
    try:
        with pytest.raises(InputError, match="another textcw serve is learning into"):
            open_service(model_path, learn=True, state=tmp_path / "state")
    finally:
        first.stop()
    open_service(model_path, learn=True, state=tmp_path / "state").stop()  # free again


def test_a_replica_serves_the_newest_state_read_only(model_path, tmp_path):
    work = batches(4)
    learner = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(learner, work[:2])
    learner.submit_checkpoint().result(30)
    learn_all(learner, work[2:])
    replica = open_service(model_path, learn=False, state=tmp_path / "state")  # while it learns
    assert not replica.learning and replica.counters.seq == 4
    assert_same_learner(replica.model, offline_replay(model_path, work))
    learner.stop()
    assert len(read_log(tmp_path / "state" / "updates.log").records) == 0


def test_learning_needs_partial_fit(tmp_path):
    path = save_model(tmp_path, learner="svm")
    with pytest.raises(InputError, match="has no partial_fit, so it cannot learn online"):
        open_service(path, learn=True, state=tmp_path / "state")
    assert open_service(path).predict(["orbit rocket"])[1][0]["label"] == "space"


def test_checkpoints_are_signed_when_a_key_is_configured(model_path, tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", "k" * 32)
    signed = save_model(tmp_path, name="signed.textcw-model")
    service = open_service(signed, learn=True, state=tmp_path / "state")
    service.submit_update(["orbit"], ["space"]).result(30)
    assert service.submit_checkpoint().result(30)["file"] == "delta-000000000001.npz"  # signed too (test_serve_deltas)
    service.stop()
    textcw.load(tmp_path / "state" / "checkpoint-000000000000.textcw-model")  # verified with the key
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", "other-key-" * 4)
    with pytest.raises(textcw.errors.ModelFileError):
        open_service(signed, learn=True, state=tmp_path / "state")
