"""When the log cannot be written: a failed write is refused and undone, a failed fsync stops learning."""

from __future__ import annotations

import errno
import os

import pytest

from serve_fixtures import assert_same_learner, offline_replay, save_model, thread_server
from textcw_serve import journal, service as service_module
from textcw_serve.client import ServiceError
from textcw_serve.journal import read_log


@pytest.fixture
def model_path(tmp_path):
    return save_model(tmp_path)


def failing_once(real, error_number):
    calls = {"n": 0}

    def call(*args):
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError(error_number, os.strerror(error_number))
        return real(*args)
    return call


def test_a_full_disk_refuses_the_update_applies_nothing_and_learning_goes_on(model_path, monkeypatch):
    with thread_server(model_path) as server:
        client = server.client()
        client.learn(["orbit"], ["space"])
        monkeypatch.setattr(journal.os, "write", failing_once(os.write, errno.ENOSPC))
        with pytest.raises(ServiceError) as error:
            client.learn(["doctor"], ["space"])
        assert error.value.status == 503
        assert "the update log could not be written (No space left on device); the update was not applied" \
            in error.value.message
        assert client.status()["update_count"] == 1 and client.health()["status"] == "ok"
        assert client.learn(["nurse"], ["medicine"])["seq"] == 2
        log = model_path.with_name("model.serve") / "updates.log"
        assert [r.documents for r in read_log(log).records] == [["orbit"], ["nurse"]]


def test_a_failed_fsync_stops_learning_until_a_restart(model_path, monkeypatch):
    with thread_server(model_path) as server:
        client = server.client()
        monkeypatch.setattr(journal.os, journal.SYNC, failing_once(getattr(os, journal.SYNC), errno.EIO))
        with pytest.raises(ServiceError) as error:
            client.learn(["orbit"], ["space"])
        assert error.value.status == 503
        with pytest.raises(ServiceError) as error:
            client.learn(["orbit"], ["space"])
        assert error.value.status == 503 and "learning is stopped" in error.value.message
        assert "restart the service to replay the update log" in error.value.message
        assert client.health() == {"status": "degraded", "learning": True}
        assert client.status()["degraded"].startswith("the update log could not be written")
        assert client.predict(["orbit"])["predictions"][0]["label"] == "space"  # predictions go on


def test_an_update_that_cannot_be_applied_stops_learning_and_keeps_the_others(model_path, monkeypatch):
    real = service_module.apply_group
    calls = []

    def flaky(model, parts, labels):  # the second request fails to apply
        calls.append(labels)
        if len(calls) == 2:
            assert len(parts) == 1  # the client waits for each reply: one request per group
            return [], RuntimeError("simulated bug")
        return real(model, parts, labels)

    monkeypatch.setattr(service_module, "apply_group", flaky)
    with thread_server(model_path) as server:
        client = server.client()
        assert client.learn(["orbit"], ["space"])["seq"] == 1
        with pytest.raises(ServiceError) as error:
            client.learn(["doctor"], ["medicine"])
        assert error.value.status == 503
        assert "update 2 is in the log but could not be applied (RuntimeError: simulated bug)" in error.value.message
        assert client.health()["status"] == "degraded"
        served = server.service.model
    assert_same_learner(served, offline_replay(model_path, [(["orbit"], ["space"])]))
