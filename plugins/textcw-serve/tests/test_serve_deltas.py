"""Incremental checkpoints (textcw_serve.deltas): the rows the updates touched, chained after a full one.

The property of every checkpoint holds for a chain of deltas: the restarted model equals, bit
for bit, an offline ``partial_fit`` over the updates (state arrays and per-call counts). And a
delta is what changed only: its rows are exactly those of the features its updates touched, and
an update changes no other row (the assumption deltas rest on, checked for each learner).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os

import numpy as np
import pytest
import textcw
from textcw.errors import DataError, ModelFileError

from serve_fixtures import assert_same_learner, offline_replay, save_model, stream
from textcw_serve import deltas
from textcw_serve.journal import read_log
from textcw_serve.service import DurabilityError
from textcw_serve.startup import open_service


def work(n: int, seed: int = 1):
    return [([doc], [label]) for doc, label in stream(n, seed=seed)]


def learn_all(service, updates) -> None:
    for docs, labels in updates:
        service.submit_update(docs, labels).result(30)


def names(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(("checkpoint-", "delta-")))


@pytest.fixture
def model_path(tmp_path):
    return save_model(tmp_path)


def test_a_chain_of_deltas_and_the_log_restart_the_model_bit_for_bit(model_path, tmp_path):
    updates = work(12)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, updates[:4])
    assert service.submit_checkpoint().result(30)["file"] == "delta-000000000004.npz"
    learn_all(service, updates[4:9])
    assert service.submit_checkpoint().result(30)["file"] == "delta-000000000009.npz"
    learn_all(service, updates[9:])
    service.stop(checkpoint=False)  # as a crash leaves it: 3 updates in the log only
    folder = tmp_path / "state"
    assert names(folder) == ["checkpoint-000000000000.textcw-model", "delta-000000000004.npz", "delta-000000000009.npz"]
    assert [r.seq for r in read_log(folder / "updates.log").records] == [10, 11, 12]
    recorded = (folder / "checkpoints.sha256").read_text()
    for name in names(folder):  # every file's sha256 is recorded
        assert f"{hashlib.sha256((folder / name).read_bytes()).hexdigest()}  {name}\n" in recorded

    reference = offline_replay(model_path, updates)
    replica = open_service(model_path, state=folder)  # reads the chain too, read-only
    assert_same_learner(replica.model, reference)
    again = open_service(model_path, learn=True, state=folder)
    assert_same_learner(again.model, reference)
    assert again.counters.seq == 12 and again.counters.documents == 12
    assert again.counters.mistakes == sum(reference.steps[-1][1].mistakes_[-12:])
    assert again.submit_update(["orbit"], ["space"]).result(30)["seq"] == 13
    again.stop()  # a delta at exit, continuing the chain
    assert names(folder)[-1] == "delta-000000000013.npz"
    assert_same_learner(open_service(model_path, state=folder).model,
                        offline_replay(model_path, [*updates, (["orbit"], ["space"])]))


def test_every_full_every_th_checkpoint_is_whole_and_removes_the_deltas(model_path, tmp_path):
    service = open_service(model_path, learn=True, state=tmp_path / "state", full_every=2)
    for i, updates in enumerate((work(2), work(2, seed=2), work(2, seed=3))):
        learn_all(service, updates)
        service.submit_checkpoint().result(30)
        assert names(tmp_path / "state") == [
            ["checkpoint-000000000000.textcw-model", "delta-000000000002.npz"],
            ["checkpoint-000000000004.textcw-model"],
            ["checkpoint-000000000004.textcw-model", "delta-000000000006.npz"]][i]
    service.stop()
    assert "delta-000000000002.npz" not in (tmp_path / "state" / "checkpoints.sha256").read_text()


@pytest.mark.parametrize("learner, params", [("cw-stdev", {}), ("arow", {"fit_intercept": True}), ("scw1", {})])
def test_a_delta_holds_exactly_the_rows_its_updates_touched(tmp_path, learner, params):
    docs, labels = zip(*stream(40, seed=4))
    model = textcw.make_pipeline("hashing", learner, featurizer_params={"n_features": 4096}, probability="raw",
                                 n_epochs=1, **params).fit(list(docs[:20]), list(labels[:20]))
    est = model.steps[-1][1]
    assert deltas.supports_deltas(est)
    tracker = deltas.DeltaTracker(est)
    before = {name: a.copy() for name, a in est.state_dict()["arrays"].items()}
    sizes = []
    for k in (1, 20):  # more updates, more rows, more bytes
        for doc, label in zip(docs[20:20 + k], labels[20:20 + k]):
            X = model.steps[0][1].transform([doc])
            est.partial_fit(X, [label])
            tracker.mark(X)
        data = tracker.encode(type("C", (), {"seq": k, "documents": k, "mistakes": 0, "changes": 0}),
                              seq_after=0, base_sha256="0" * 64, created_at="now")
        sizes.append(len(data))
    touched = sorted({int(j) for doc in docs[20:40] for j in model.steps[0][1].transform([doc]).indices}
                     | ({4096} if est.fit_intercept else set()))
    delta = deltas._parse(tmp_path / "delta-000000000020.npz", data, 20, "0" * 64)
    assert delta.rows.tolist() == touched
    assert sizes[0] < sizes[1]
    for name, array in est.state_dict()["arrays"].items():
        assert np.array_equal(delta.values[name], array[delta.rows])
        untouched = np.setdiff1d(np.arange(array.shape[0]), delta.rows)
        assert np.array_equal(array[untouched], before[name][untouched])  # no other row moved
        assert not np.array_equal(array[delta.rows], before[name][delta.rows])


def test_learners_whose_updates_move_other_rows_get_full_checkpoints(tmp_path):
    averaged = save_model(tmp_path, name="averaged.textcw-model", average=True)
    assert not deltas.supports_deltas(textcw.load(averaged).steps[-1][1])  # the average moves every row
    docs, labels = zip(*stream(20))
    full = textcw.make_pipeline("binary-bow", "arow", covariance="full", probability="raw").fit(docs, labels)
    assert not deltas.supports_deltas(full.steps[-1][1])  # x' Sigma x couples every row
    assert deltas.supports_deltas(textcw.load(save_model(tmp_path, name="plain.textcw-model")).steps[-1][1])
    service = open_service(averaged, learn=True, state=tmp_path / "state")
    learn_all(service, work(3))
    assert service.submit_checkpoint().result(30)["file"] == "checkpoint-000000000003.textcw-model"
    service.stop()
    assert_same_learner(open_service(averaged, state=tmp_path / "state").model, offline_replay(averaged, work(3)))


def test_a_crash_before_the_delta_is_recorded_replays_the_log(model_path, tmp_path, caplog):
    updates = work(5)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, updates)
    # as kill -9 leaves it between renaming the delta into place and recording its digest
    data = service.deltas.encode(service.counters, seq_after=0, base_sha256=service.state.base_sha256,
                                 created_at="now")
    deltas.write_delta(tmp_path / "state", data, 5, lambda name, digest: None)
    service.stop(checkpoint=False)
    with caplog.at_level("WARNING", logger="textcw.serve"):
        again = open_service(model_path, learn=True, state=tmp_path / "state")
    assert "ignoring delta-000000000005.npz: its digest is not recorded" in caplog.text
    assert_same_learner(again.model, offline_replay(model_path, updates))
    assert again.counters.seq == 5
    again.stop()


def test_a_crash_between_a_delta_and_emptying_the_log_replays_nothing_twice(model_path, tmp_path):
    updates = work(5)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, updates)
    data = service.deltas.encode(service.counters, seq_after=0, base_sha256=service.state.base_sha256,
                                 created_at="now")
    deltas.write_delta(tmp_path / "state", data, 5, service.state.record_digest)  # recorded, log not emptied
    service.stop(checkpoint=False)
    assert len(read_log(tmp_path / "state" / "updates.log").records) == 5
    again = open_service(model_path, learn=True, state=tmp_path / "state")
    assert_same_learner(again.model, offline_replay(model_path, updates))
    assert again.counters.seq == 5 and (tmp_path / "state" / "updates.log").stat().st_size == 0
    again.stop()


def test_a_failed_delta_write_changes_nothing_and_the_next_one_holds_every_row(model_path, tmp_path, monkeypatch):
    updates = work(6)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, updates[:3])
    folder = tmp_path / "state"
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != "lock"}
    real = deltas.atomic_output

    @contextlib.contextmanager
    def full_disk(path, **kwargs):
        with real(path, **kwargs) as fh:
            fh.write(b"PK")
            raise OSError(errno.ENOSPC, "No space left on device")
        yield fh  # pragma: no cover - never reached

    monkeypatch.setattr(deltas, "atomic_output", full_disk)
    with pytest.raises(DurabilityError, match="No space left on device.*the update log still hold every update"):
        service.submit_checkpoint().result(30)
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and p.name != "lock"} == before
    monkeypatch.undo()
    learn_all(service, updates[3:])
    assert service.submit_checkpoint().result(30)["file"] == "delta-000000000006.npz"
    service.stop(checkpoint=False)
    assert_same_learner(open_service(model_path, state=folder).model, offline_replay(model_path, updates))


def test_a_link_in_place_of_the_next_delta_is_never_replaced(model_path, tmp_path):
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, work(2))
    target = tmp_path / "elsewhere"
    target.write_bytes(b"kept")
    (tmp_path / "state" / "delta-000000000002.npz").symlink_to(target)
    with pytest.raises(DurabilityError, match="delta-000000000002.npz"):
        service.submit_checkpoint().result(30)
    service.stop(checkpoint=False)
    assert target.read_bytes() == b"kept" and (tmp_path / "state" / "delta-000000000002.npz").is_symlink()


def test_a_changed_or_foreign_delta_is_refused(model_path, tmp_path, monkeypatch):
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    learn_all(service, work(2))
    path = tmp_path / "state" / service.submit_checkpoint().result(30)["file"]
    service.stop(checkpoint=False)
    data = bytearray(path.read_bytes())
    data[-30] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"delta-000000000002.npz is not the delta this service wrote"):
        open_service(model_path, learn=True, state=tmp_path / "state")


def test_deltas_are_signed_and_checked_when_a_key_is_configured(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", "k" * 32)
    signed = save_model(tmp_path, name="signed.textcw-model")
    service = open_service(signed, learn=True, state=tmp_path / "state")
    learn_all(service, work(2))
    assert service.submit_checkpoint().result(30)["file"] == "delta-000000000002.npz"
    assert len(service.state.read_deltas(0)) == 1  # checked with the key
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", "other-key-" * 4)
    with pytest.raises(ModelFileError, match="signed with another key"):
        service.state.read_deltas(0)
    monkeypatch.delenv("TEXTCW_SIGNING_KEY")
    unsigned = service.deltas.encode(service.counters, seq_after=0, base_sha256=service.state.base_sha256,
                                     created_at="now")
    assert deltas._parse(tmp_path / "delta-000000000002.npz", unsigned, 2, service.state.base_sha256).seq == 2
    monkeypatch.setenv("TEXTCW_SIGNING_KEY", "k" * 32)
    with pytest.raises(ModelFileError, match="is not signed"):
        deltas._parse(tmp_path / "delta-000000000002.npz", unsigned, 2, service.state.base_sha256)
    service.stop(checkpoint=False)
