"""The state folder under races: links on the way, a checkpoint swapped after its check, replicas
that start while the learner checkpoints, and a first start cut short by kill -9."""

from __future__ import annotations

import hashlib
import os
import threading

import pytest
import textcw
import textcw.persist
from textcw.errors import InputError
from textcw.trust import UntrustedLocationError

from serve_fixtures import assert_same_learner, needs_root, offline_replay, pairs_of_corrections, save_model
from textcw_serve import startup, state as state_module
from textcw_serve.journal import encode_record
from textcw_serve.startup import open_service



@pytest.fixture
def model_path(tmp_path):
    return save_model(tmp_path)

batches = pairs_of_corrections


@needs_root
def test_a_state_folder_reached_through_another_users_link_is_refused(model_path, tmp_path):
    real = tmp_path / "mine"
    real.mkdir(mode=0o700)
    open_service(model_path, learn=True, state=real / "state").stop()
    team = tmp_path / "team"  # sticky and writable by the whole team: the kernel's link protection is off
    team.mkdir()
    os.chmod(team, 0o1777)
    link = team / "project"
    link.symlink_to(real)
    os.lchown(link, 65534, 65534)  # its owner can repoint it between any two opens
    for learn in (True, False):
        with pytest.raises(UntrustedLocationError, match=r"reached through the symbolic link .*team/project, "
                           r"which is owned by .*uid 65534"):
            open_service(model_path, learn=learn, state=link / "state")


def test_the_checkpoint_unpickled_is_the_one_whose_digest_was_checked(model_path, tmp_path, monkeypatch):
    service = open_service(model_path, learn=True, state=tmp_path / "state", full_every=1)
    work = batches(2)
    for docs, labels in work:
        service.submit_update(docs, labels).result(30)
    info = service.submit_checkpoint().result(30)
    service.stop(checkpoint=False)
    checkpoint = tmp_path / "state" / info["file"]
    recorded = checkpoint.read_bytes()
    planted = tmp_path / "planted"
    textcw.save(textcw.load(model_path), planted, info={"textcw_serve": {}})
    real_open = state_module.open_trusted_file

    def open_then_swap(path, what, **kwargs):
        fh = real_open(path, what, **kwargs)
        if path == checkpoint:  # the attacker's swap, right after the open
            os.replace(planted, checkpoint)
        return fh

    monkeypatch.setattr(state_module, "open_trusted_file", open_then_swap)
    unpickled = []
    real_load = textcw.persist.load_vouched
    monkeypatch.setattr(textcw.persist, "load_vouched",
                        lambda data, path, **k: unpickled.append(data) or real_load(data, path, **k))
    again = open_service(model_path, learn=False, state=tmp_path / "state")
    assert unpickled == [recorded]  # the bytes hashed are the bytes unpickled
    assert hashlib.sha256(unpickled[0]).hexdigest() in (tmp_path / "state" / "checkpoints.sha256").read_text()
    assert_same_learner(again.model, offline_replay(model_path, work))


def test_replicas_start_while_the_learner_checkpoints(model_path, tmp_path):
    learner = open_service(model_path, learn=True, state=tmp_path / "state", checkpoint_every=3)
    work = batches(60, seed=3)
    done = threading.Event()

    def learn():
        for docs, labels in work:
            learner.submit_update(docs, labels).result(60)
        done.set()

    teacher = threading.Thread(target=learn, daemon=True)
    teacher.start()
    seqs = []
    while not done.is_set() or len(seqs) < 6:
        replica = open_service(model_path, learn=False, state=tmp_path / "state")
        seqs.append(replica.counters.seq)
        if len(seqs) >= 40:
            break
    teacher.join(120)  # a hang guard
    learner.stop()
    assert len(seqs) >= 6 and seqs == sorted(seqs)
    final = open_service(model_path, learn=False, state=tmp_path / "state")
    assert final.counters.seq == len(work)
    assert_same_learner(final.model, offline_replay(model_path, work))


def test_a_replica_never_advises_touching_a_folder_a_learner_holds(model_path, tmp_path, monkeypatch):
    learner = open_service(model_path, learn=True, state=tmp_path / "state")
    log = tmp_path / "state" / "updates.log"
    docs, labels = batches(1)[0]
    log.write_bytes(encode_record(5, docs, labels))  # a log that does not follow its checkpoint
    monkeypatch.setattr(startup, "REPLICA_ATTEMPTS", 2)
    monkeypatch.setattr(startup, "REPLICA_BACKOFF_SECONDS", 0.01)
    with pytest.raises(InputError, match="changed under this replica 2 times") as info:
        open_service(model_path, learn=False, state=tmp_path / "state")
    assert "move" not in str(info.value) and "Leave the folder's files as they are" in str(info.value)
    learner.stop(checkpoint=False)
    with pytest.raises(Exception, match="move the log away"):  # nobody holds it: the repair is advised
        open_service(model_path, learn=False, state=tmp_path / "state")


def test_kill_at_the_first_start_before_the_digest_is_recorded_recovers_with_a_warning(model_path, tmp_path,
                                                                                       caplog):
    open_service(model_path, learn=True, state=tmp_path / "state").stop()
    # as kill -9 leaves it between renaming the first checkpoint into place and recording its digest
    (tmp_path / "state" / "checkpoints.sha256").unlink()
    with caplog.at_level("WARNING", logger="textcw.serve"):
        service = open_service(model_path, learn=True, state=tmp_path / "state", full_every=1)
    assert "stopped during its first start before recording its digest" in caplog.text
    assert service.submit_update(*batches(1)[0]).result(30)["seq"] == 1
    service.stop()
    recorded = (tmp_path / "state" / "checkpoints.sha256").read_text()  # recorded again, then the newest
    assert recorded.endswith(f"  {state_module.checkpoint_name(1)}\n") and recorded.count("\n") == 1
    again = open_service(model_path, learn=True, state=tmp_path / "state")
    assert again.counters.seq == 1
    again.stop()
