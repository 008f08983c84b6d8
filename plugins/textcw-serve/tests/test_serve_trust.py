"""The state folder, checkpoints, the journal, the token and key files: read back only when they
are the user's own, written owner-only, and a checkpoint unpickled only with its recorded digest."""

from __future__ import annotations

import os
import stat
import threading

import pytest
import textcw
import textcw.persist
from textcw.errors import DataError, ModelFileError
from textcw.trust import UntrustedLocationError

from serve_fixtures import assert_same_learner, needs_root, offline_replay, pairs_of_corrections, save_model
from textcw_serve import state as state_module
from textcw_serve.journal import encode_record
from textcw_serve.server import read_token
from textcw_serve.startup import open_service

OTHER_UID = 65534  # nobody


@pytest.fixture
def model_path(tmp_path):
    return save_model(tmp_path)

batches = pairs_of_corrections


def forbid_unpickling(monkeypatch):
    """Fail the test if a model file or a checkpoint is unpickled."""
    for name in ("load", "load_vouched"):
        monkeypatch.setattr(textcw.persist, name, lambda *a, **k: pytest.fail("a checkpoint was unpickled"))
    monkeypatch.setattr(textcw, "load", textcw.persist.load)


def mode(path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


# ---------------------------------------------------------------------------- the folder
def test_the_state_folder_and_its_files_are_owner_only_whatever_the_umask(model_path, tmp_path):
    old = os.umask(0)
    try:
        service = open_service(model_path, learn=True, state=tmp_path / "state")
        service.submit_update(*batches(1)[0]).result(30)
        info = service.submit_checkpoint().result(30)
        service.stop()
    finally:
        os.umask(old)
    folder = tmp_path / "state"
    assert mode(folder) == 0o700
    assert info["file"] == "delta-000000000001.npz"  # the rows the update changed, beside the full checkpoint
    assert {p.name: mode(p) for p in folder.iterdir()} == {
        "checkpoint-000000000000.textcw-model": 0o600, info["file"]: 0o600, "checkpoints.sha256": 0o600,
        "updates.log": 0o600, "lock": 0o600}


def test_a_state_folder_others_can_write_is_refused_before_anything_is_read(model_path, tmp_path, monkeypatch):
    open_service(model_path, learn=True, state=tmp_path / "state").stop()
    os.chmod(tmp_path / "state", 0o777)
    forbid_unpickling(monkeypatch)
    for learn in (True, False):  # the learner and a read-only replica
        with pytest.raises(UntrustedLocationError, match=r"can be written by others \(mode 0777\); run: chmod go-w"):
            open_service(model_path, learn=learn, state=tmp_path / "state")


def test_a_state_folder_inside_a_folder_others_can_write_is_refused(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    model = save_model(shared)
    os.chmod(shared, 0o777)  # no sticky bit: anyone could swap model.serve for their own
    with pytest.raises(UntrustedLocationError, match="which others can write to .* no sticky bit"):
        open_service(model, learn=True)


def test_a_state_folder_that_is_a_link_is_refused(model_path, tmp_path):
    (tmp_path / "real").mkdir(mode=0o700)
    (tmp_path / "state").symlink_to(tmp_path / "real")
    with pytest.raises(UntrustedLocationError, match="is a symbolic link"):
        open_service(model_path, learn=True, state=tmp_path / "state")


@needs_root
def test_a_state_folder_planted_by_another_user_is_refused(model_path, tmp_path, monkeypatch):
    """The attack: another user's model.serve/ beside the model, with a checkpoint in it."""
    open_service(model_path, learn=True).stop()
    folder = model_path.parent / "model.serve"
    for path in (folder, *folder.iterdir()):
        os.lchown(path, OTHER_UID, OTHER_UID)
    forbid_unpickling(monkeypatch)
    with pytest.raises(UntrustedLocationError, match=r"is owned by nobody \(uid 65534\), not by you"):
        open_service(model_path, learn=True)


# ---------------------------------------------------------------------------- checkpoints
def plant_checkpoint(service_folder, model_path, seq: int):
    """A well-formed checkpoint of the right model (its base_sha256 copied from the manifest),
    written by someone else than the service: what the attack in the issue planted."""
    manifest = textcw.read_manifest(model_path)
    info = {"textcw_serve": {"seq": seq, "documents": 0, "mistakes": 0, "changes": 0,
                             "base_sha256": manifest["payload"]["sha256"]}}
    path = service_folder / state_module.checkpoint_name(seq)
    textcw.save(textcw.load(model_path), path, info=info)
    os.chmod(path, 0o600)
    return path


def test_a_checkpoint_without_a_recorded_digest_is_never_unpickled(model_path, tmp_path, monkeypatch, caplog):
    open_service(model_path, learn=True, state=tmp_path / "state").stop()
    planted = plant_checkpoint(tmp_path / "state", model_path, 7)
    loads = []
    real_load = textcw.persist.load_vouched
    monkeypatch.setattr(textcw.persist, "load_vouched",
                        lambda data, path, **k: loads.append(path.name) or real_load(data, path, **k))
    with caplog.at_level("WARNING", logger="textcw.serve"):  # beside a recorded one: ignored
        service = open_service(model_path, learn=True, state=tmp_path / "state")
    service.stop()
    assert f"ignoring {planted.name}: its digest is not recorded in checkpoints.sha256" in caplog.text
    assert loads == [state_module.checkpoint_name(0)] and service.counters.seq == 0

    (tmp_path / "state" / "checkpoints.sha256").unlink()  # alone, or in a folder without a record: refused
    loads.clear()
    with pytest.raises(DataError, match=rf"{planted.name} has no sha256 recorded in .*checkpoints.sha256.*"
                                        "sha256sum checkpoint-000000000007.textcw-model >> checkpoints.sha256"):
        open_service(model_path, learn=True, state=tmp_path / "state")
    assert loads == []


def test_a_checkpoint_changed_after_it_was_written_is_refused(model_path, tmp_path, monkeypatch):
    service = open_service(model_path, learn=True, state=tmp_path / "state", full_every=1)
    service.submit_update(*batches(1)[0]).result(30)
    info = service.submit_checkpoint().result(30)
    service.stop(checkpoint=False)
    path = tmp_path / "state" / info["file"]
    plant_checkpoint(tmp_path / "state", model_path, 1)  # same name, other bytes
    forbid_unpickling(monkeypatch)
    with pytest.raises(DataError, match=rf"{path.name} is not the checkpoint this service wrote"):
        open_service(model_path, learn=True, state=tmp_path / "state")


def test_a_crash_before_a_new_checkpoint_is_recorded_falls_back_to_the_previous_one(model_path, tmp_path,
                                                                                   monkeypatch, caplog):
    work = batches(3)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    for docs, labels in work:
        service.submit_update(docs, labels).result(30)

    def full_disk(self, digests):
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:  # the new checkpoint is in place, its digest not recorded
        patch.setattr(state_module.StateFolder, "_write_digests", full_disk)
        with pytest.raises(OSError):
            service.state.write_checkpoint(service.model, service.counters)
    service.stop(checkpoint=False)
    assert sorted(p.name for p in (tmp_path / "state").glob("checkpoint-*")) == [
        state_module.checkpoint_name(0), state_module.checkpoint_name(3)]
    with caplog.at_level("WARNING", logger="textcw.serve"):
        again = open_service(model_path, learn=True, state=tmp_path / "state")
    assert "ignoring checkpoint-000000000003.textcw-model: its digest is not recorded" in caplog.text
    assert again.counters.seq == 3 and again.last_checkpoint.seq == 0
    assert_same_learner(again.model, offline_replay(model_path, work))  # checkpoint 0 + the log
    again.stop()


# ---------------------------------------------------------------------------- the journal
def test_a_damaged_record_is_quarantined_and_every_intact_one_after_it_replayed(model_path, tmp_path, caplog):
    """The issue's case: record 3 of 11 damaged; 10 intact acknowledged records are kept."""
    work = batches(11)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    for docs, labels in work:
        service.submit_update(docs, labels).result(30)
    service.stop(checkpoint=False)
    log = tmp_path / "state" / "updates.log"
    frames = [encode_record(i + 1, docs, labels) for i, (docs, labels) in enumerate(work)]
    assert log.read_bytes() == b"".join(frames)
    data = bytearray(log.read_bytes())
    data[len(frames[0]) + len(frames[1]) + 30] ^= 0x04  # one bit of record 3
    log.write_bytes(bytes(data))

    with caplog.at_level("WARNING", logger="textcw.serve"):
        again = open_service(model_path, learn=True, state=tmp_path / "state")
    message = " ".join(r.getMessage() for r in caplog.records)
    assert f"{len(frames[2])} damaged bytes at byte {len(frames[0]) + len(frames[1])}: record 3 lost " \
           "(1 acknowledged update); replaying resumed at record 4" in message
    copies = list((tmp_path / "state").glob("updates.log.damaged-*"))
    assert len(copies) == 1 and copies[0].read_bytes() == bytes(data) and mode(copies[0]) == 0o600
    assert f"a copy of the damaged log is kept as {copies[0]}" in message
    # every intact record replayed, numbered as it was; the lost one's number is not reused
    assert again.counters.seq == 11 and again.counters.documents == 20
    assert_same_learner(again.model, offline_replay(model_path, work[:2] + work[3:]))
    assert again.last_checkpoint.seq == 11 and log.stat().st_size == 0  # the log starts clean
    assert again.submit_update(["orbit"], ["space"]).result(30)["seq"] == 12
    again.stop()
    third = open_service(model_path, learn=True, state=tmp_path / "state")  # and stays recovered
    assert third.counters.seq == 12 and len(list((tmp_path / "state").glob("updates.log.damaged-*"))) == 1
    third.stop()


def test_a_replica_replays_a_damaged_log_without_changing_it(model_path, tmp_path, caplog):
    work = batches(4)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    for docs, labels in work:
        service.submit_update(docs, labels).result(30)
    service.stop(checkpoint=False)
    log = tmp_path / "state" / "updates.log"
    data = bytearray(log.read_bytes())
    data[20] ^= 0x01  # record 1
    log.write_bytes(bytes(data))
    with caplog.at_level("WARNING", logger="textcw.serve"):
        replica = open_service(model_path, learn=False, state=tmp_path / "state")
    assert replica.counters.seq == 4
    assert_same_learner(replica.model, offline_replay(model_path, work[1:]))
    assert "record 1 lost" in caplog.text and "the log is left as it is" in caplog.text
    assert log.read_bytes() == bytes(data) and not list((tmp_path / "state").glob("updates.log.damaged-*"))


def test_a_log_that_is_a_link_is_refused(model_path, tmp_path):
    open_service(model_path, learn=True, state=tmp_path / "state").stop()
    log = tmp_path / "state" / "updates.log"
    log.unlink()
    (tmp_path / "elsewhere.log").write_bytes(b"")
    log.symlink_to(tmp_path / "elsewhere.log")
    with pytest.raises(UntrustedLocationError, match="updates.log is a symbolic link"):
        open_service(model_path, learn=True, state=tmp_path / "state")


# ---------------------------------------------------------------------------- token and key files
def test_a_token_file_that_is_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "token"
    os.mkfifo(fifo)
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(_error(read_token, fifo)), daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "reading a FIFO as --token-file blocked"
    assert "is not a regular file" in outcome[0]


def _error(function, *args) -> str:
    try:
        function(*args)
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        return str(exc)
    return "no error"


def test_a_token_file_others_can_write_is_refused(tmp_path):
    token = tmp_path / "token"
    token.write_text("t" * 32 + "\n")
    os.chmod(token, 0o622)
    with pytest.raises(UntrustedLocationError, match=r"--token-file .* can be written by others \(mode 0622\)"):
        read_token(token)
    os.chmod(token, 0o600)
    assert read_token(token) == "t" * 32


@needs_root
def test_a_token_file_of_another_user_is_refused(tmp_path):
    token = tmp_path / "token"
    token.write_text("t" * 32)
    os.chown(token, OTHER_UID, OTHER_UID)
    with pytest.raises(UntrustedLocationError, match="is owned by nobody"):
        read_token(token)


def test_a_signing_key_file_that_is_a_fifo_or_writable_by_others_is_refused(tmp_path, monkeypatch):
    from textcw.signing import signing_key

    fifo = tmp_path / "key-fifo"
    os.mkfifo(fifo)
    monkeypatch.setenv("TEXTCW_SIGNING_KEY_FILE", str(fifo))
    with pytest.raises(ModelFileError, match="is not a regular file"):
        signing_key()
    key = tmp_path / "key"
    key.write_text("k" * 32)
    os.chmod(key, 0o666)
    monkeypatch.setenv("TEXTCW_SIGNING_KEY_FILE", str(key))
    with pytest.raises(ModelFileError, match=r"can be written by others \(mode 0666\)"):
        signing_key()
    os.chmod(key, 0o600)
    assert signing_key() == b"k" * 32


def test_the_damage_message_names_exactly_the_records_lost():
    from textcw_serve.journal import Damage, LogContents

    def say(damage, after=0):
        return state_module.describe_damage(LogContents([], 0, 0, damage), after)

    assert say([Damage(0, 50, None, 3)]) == [
        "50 damaged bytes at byte 0: records 1 to 2 lost (2 acknowledged updates); replaying resumed at record 3"]
    assert say([Damage(10, 5, 4, 6), Damage(40, 7, 8, 12)]) == [
        "5 damaged bytes at byte 10: record 5 lost (1 acknowledged update); replaying resumed at record 6",
        "7 damaged bytes at byte 40: records 9 to 11 lost (3 acknowledged updates); replaying resumed at record 12"]
    # records up to the checkpoint's are not lost, whatever happened to their copy in the log
    assert say([Damage(0, 9, None, 5)], after=4) == [
        "9 damaged bytes at byte 0: no record lost (the records around it follow each other or are in the checkpoint)"]
    assert say([Damage(0, 9, 2, 4)], after=7)[0].endswith("no record lost (the records around it follow each "
                                                          "other or are in the checkpoint)")
    assert say([Damage(90, 30, 6, None)]) == [
        "30 damaged bytes at byte 90 at the end of the log: any records from 7 on that were there are lost (a "
        "write cut off by a crash was never acknowledged; damage to the last records was)"]
