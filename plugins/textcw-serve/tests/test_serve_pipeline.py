"""The update pipeline: a group featurized in one call learns as its requests one by one; the
next group is written and fsynced while one is applied, and a failure of either fails only it;
the order of the updates holds through all of it, and a checkpoint never empties the log of an
update it does not hold."""

from __future__ import annotations

import errno
import os
import threading
import time

import pytest
import textcw
from textcw.errors import InputError

from serve_fixtures import assert_same_learner, offline_replay, save_model, stream, train_documents
from textcw_serve import journal, model_ops as model_ops_module, service as service_module, updates as updates_module
from textcw_serve.journal import read_log
from textcw_serve.model_ops import row_wise
from textcw_serve.service import GROUP_FEATURIZE_CHARS, DurabilityError, NotLearningError
from textcw_serve.startup import open_service


@pytest.fixture
def model_path(tmp_path):
    return save_model(tmp_path)


def test_text_featurizers_are_row_wise_bit_for_bit(tmp_path):
    docs = [doc for doc, _ in stream(40, seed=9)] + ["", "  ", "na\u00efve caf\u00e9 \u2603", "\ud800 lone", "x" * 3000]
    train_docs, train_labels = train_documents()
    for name in ("hashing", "binary-bow", "tfidf", "bigram-counts"):
        featurizer = textcw.make_pipeline(name, "cw-stdev").fit(train_docs, train_labels).steps[0][1]
        assert row_wise(featurizer), name
        together = featurizer.transform(docs).tocsr()
        for i, doc in enumerate(docs):
            alone, row = featurizer.transform([doc]).tocsr(), together[i:i + 1]
            assert alone.indices.tobytes() == row.indices.tobytes() and alone.data.tobytes() == row.data.tobytes(), name


class Held:
    """Holds the preparer in its first call of the featurizer (the first update's), so that the
    updates submitted meanwhile make one group, featurized in one call; ``calls`` records what
    each call of the featurizer was given."""

    def __init__(self, service, monkeypatch):
        self.service, self.calls = service, []
        self.entered, self.release = threading.Event(), threading.Event()
        real = model_ops_module.featurize

        def featurize(model, docs):
            self.calls.append(list(docs))
            if docs == ["the first update"]:
                self.entered.set()
                assert self.release.wait(60)
            return real(model, docs)
        monkeypatch.setattr(model_ops_module, "featurize", featurize)

    def __enter__(self):
        self.first = self.service.submit_update(["the first update"], ["space"])
        assert self.entered.wait(60), "the preparer did not take the first update"
        return self

    def __exit__(self, *exc):
        self.release.set()


def test_a_group_is_featurized_in_one_call_and_learns_as_its_requests_one_by_one(model_path, tmp_path, monkeypatch):
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    batches = [([d], [label]) for d, label in stream(5, seed=2)] + [([d for d, _ in stream(3, seed=8)],
                                                                     [label for _, label in stream(3, seed=8)])]
    served, applied = service.model.steps[-1][1], []
    real_each = served.partial_fit_each

    def recorded(X, y, sizes):
        applied.append(list(sizes))
        return real_each(X, y, sizes)

    monkeypatch.setattr(served, "partial_fit_each", recorded, raising=False)
    try:
        with Held(service, monkeypatch) as held:
            futures = [service.submit_update(docs, labels) for docs, labels in batches]
            big = service.submit_update(["y " * GROUP_FEATURIZE_CHARS], ["space"])  # featurized at once, alone
        replies = [f.result(60) for f in futures]
        big.result(60)
    finally:
        service.stop(checkpoint=False)
    assert [r["seq"] for r in replies] == list(range(2, 2 + len(batches)))
    # the first update alone (its group), the large request by its own thread before it was
    # queued, then the group held back meanwhile in one call
    assert held.calls == [["the first update"], ["y " * GROUP_FEATURIZE_CHARS],
                          [doc for docs, _ in batches for doc in docs]]
    reference = offline_replay(model_path, [(["the first update"], ["space"]), *batches, (["y " * GROUP_FEATURIZE_CHARS],
                                                                                          ["space"])])
    assert_same_learner(service.model, reference)
    learner = reference.steps[-1][1]
    assert [r["mistakes"] for r in replies] == learner.mistakes_[-1 - len(batches):-1]
    assert [r["updates"] for r in replies] == learner.n_updates_[-1 - len(batches):-1]
    assert sum(learner.n_updates_[-1 - len(batches):-1]) > 0
    # the held group and the large request queued after it: one call, each request its own block
    # (the first update too, when the committer had not taken it before the group was ready)
    assert applied in ([[1, 1, 1, 1, 1, 3, 1]], [[1, 1, 1, 1, 1, 1, 3, 1]]), applied


def test_a_group_applied_in_one_call_stops_at_the_request_that_fails(model_path):
    model = textcw.load(model_path)
    featurizer, learner = model.steps[0][1], model.steps[-1][1]
    batches = [([d], [label]) for d, label in stream(4, seed=5)]
    parts = [featurizer.transform(docs) for docs, _ in batches]
    runs = []
    real = learner._run_epoch

    def third_fails(*args, **kwargs):
        runs.append(1)
        if len(runs) == 3:
            raise RuntimeError("simulated bug")
        return real(*args, **kwargs)

    learner._run_epoch = third_fails
    outcomes, error = updates_module.apply_group(model, parts, [labels for _, labels in batches])
    del learner._run_epoch
    assert isinstance(error, RuntimeError) and len(outcomes) == 2  # the first two were applied
    reference = offline_replay(model_path, batches[:2])
    assert_same_learner(model, reference)
    assert [o.mistakes for o in outcomes] == reference.steps[-1][1].mistakes_[-2:]


def test_stacked_rows_are_scipy_vstack_bit_for_bit(model_path):
    import scipy.sparse as sp

    featurizer = textcw.load(model_path).steps[0][1]
    whole = featurizer.transform([d for d, _ in stream(7, seed=4)] + ["", "orbit orbit"]).tocsr()
    other = featurizer.transform(["doctor orbit", "patients"]).tocsr()
    Rows = updates_module.Rows
    # a group's rows in order: its own matrix, no copy
    assert updates_module.stack_rows([Rows(whole, 0, 1), Rows(whole, 1, 4), Rows(whole, 4, 9)]) is whole
    for parts, want in [
        ([whole[0:1], whole[1:4], whole[4:5], whole[5:9]], sp.vstack([whole], format="csr")),  # slices
        ([Rows(whole, 1, 3), Rows(whole, 3, 5)], whole[1:5]),  # a stretch of the group's rows
        ([Rows(whole, 5, 9), Rows(other, 0, 2), Rows(whole, 0, 2), other],  # rows of two matrices, out of order
         sp.vstack([whole[5:9], other, whole[0:2], other], format="csr")),
    ]:
        stacked = updates_module.stack_rows(parts)
        assert stacked.shape == want.shape
        for name in ("indptr", "indices", "data"):
            assert getattr(stacked, name).tolist() == getattr(want, name).tolist(), name
    assert Rows(whole, 2, 5).columns.tolist() == whole[2:5].indices.tolist()


def test_a_document_the_featurizer_cannot_read_fails_only_its_own_request(model_path, tmp_path, monkeypatch):
    real = model_ops_module.featurize

    def picky(model, docs):
        if any("unreadable" in d for d in docs):
            raise InputError("the model's featurizer cannot read these documents: simulated")
        return real(model, docs)

    monkeypatch.setattr(model_ops_module, "featurize", picky)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    try:
        with Held(service, monkeypatch) as held:
            good = service.submit_update(["orbit"], ["space"])
            bad = service.submit_update(["an unreadable one"], ["medicine"])
            after = service.submit_update(["doctor"], ["medicine"])
        assert held.first.result(60)["seq"] == 1
        assert good.result(60)["seq"] == 2 and after.result(60)["seq"] == 3
        with pytest.raises(InputError, match="simulated"):
            bad.result(60)
        assert service.degraded is None
        # the group's call failed, then each update was featurized alone
        assert held.calls[1:] == [["orbit", "an unreadable one", "doctor"], ["orbit"], ["an unreadable one"],
                                  ["doctor"]]
    finally:
        service.stop(checkpoint=False)
    log = read_log(tmp_path / "state" / "updates.log")
    assert [r.documents for r in log.records] == [["the first update"], ["orbit"], ["doctor"]]
    assert_same_learner(service.model, offline_replay(model_path, [(["the first update"], ["space"]),
                                                                   (["orbit"], ["space"]), (["doctor"], ["medicine"])]))


def test_only_small_requests_are_left_to_the_committer(model_path, tmp_path):
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    try:
        assert service.queues_at_once(["a few words"] * 10)
        assert not service.queues_at_once(["x" * (GROUP_FEATURIZE_CHARS + 1)])
        service._group_featurize = False  # a featurizer that is not row-wise: each request featurizes its own
        assert not service.queues_at_once(["a few words"])
    finally:
        service.stop(checkpoint=False)


def test_updates_from_many_threads_keep_one_order_in_the_log_and_the_model(model_path, tmp_path):
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    corrections = stream(60, seed=11)
    futures, lock = {}, threading.Lock()

    def submit(part):
        for doc, label in part:
            future = service.submit_update([doc], [label])
            with lock:
                futures[doc] = future

    threads = [threading.Thread(target=submit, args=(corrections[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    by_seq = {futures[doc].result(60)["seq"]: (doc, label) for doc, label in corrections}
    service.stop(checkpoint=False)
    assert sorted(by_seq) == list(range(1, 61))
    log = read_log(tmp_path / "state" / "updates.log")
    assert [(r.documents[0], r.labels[0]) for r in log.records] == [by_seq[s] for s in range(1, 61)]
    assert_same_learner(service.model, offline_replay(model_path, [([d], [lab]) for d, lab in
                                                                   (by_seq[s] for s in range(1, 61))]))


class Overlapped:
    """Makes the committer write the second group while it applies the first: the first group's
    fsync waits until the second group is prepared (then the committer finds it ready). ``fail``
    replaces the second group's ``os.write`` or its sync (``journal.SYNC``: ``os.fdatasync`` on
    Linux) with one that raises."""

    def __init__(self, service, monkeypatch, fail: str):
        self.service, self.fail = service, fail
        self.prepared = threading.Event()
        self.fsync_threads = []
        real_write, real_fsync = os.write, getattr(os, journal.SYNC)
        calls = {"write": 0, "fsync": 0}

        def write(fd, data):
            calls["write"] += 1
            if fail == "write" and calls["write"] == 2:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return real_write(fd, data)

        def fsync(fd):
            calls["fsync"] += 1
            self.fsync_threads.append(threading.current_thread().name)
            if calls["fsync"] == 1:  # the first group's: wait for the second to be ready
                assert self.prepared.wait(60)
            if fail == "fsync" and calls["fsync"] == 2:
                raise OSError(errno.EIO, os.strerror(errno.EIO))
            return real_fsync(fd)

        monkeypatch.setattr(journal.os, "write", write)
        monkeypatch.setattr(journal.os, journal.SYNC, fsync)

    def run(self, first, second):
        one = self.service.submit_update(*first)
        wait_until(lambda: self.service._queue.empty() and self.service._prepared.empty())  # being written
        two = self.service.submit_update(*second)
        wait_until(lambda: not self.service._prepared.empty())  # prepared
        self.prepared.set()
        return one, two


def wait_until(condition, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def test_a_failed_fsync_of_the_next_group_fails_it_alone_and_stops_learning(model_path, tmp_path, monkeypatch):
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    try:
        overlapped = Overlapped(service, monkeypatch, "fsync")
        one, two = overlapped.run((["orbit"], ["space"]), (["doctor"], ["medicine"]))
        assert one.result(60)["seq"] == 1  # durable before the second group's fsync failed
        with pytest.raises(DurabilityError, match="the update was not applied"):
            two.result(60)
        assert service.degraded.startswith("the update log could not be written")
        # the second group's fsync ran beside the first group's update, in the syncer thread
        assert overlapped.fsync_threads[1].startswith("textcw-serve-fsync")
        with pytest.raises(NotLearningError):
            service.submit_update(["nurse"], ["medicine"])
    finally:
        service.stop()
    assert_same_learner(service.model, offline_replay(model_path, [(["orbit"], ["space"])]))


def test_a_failed_write_of_the_next_group_fails_it_alone_and_learning_goes_on(model_path, tmp_path, monkeypatch):
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    try:
        one, two = Overlapped(service, monkeypatch, "write").run((["orbit"], ["space"]), (["doctor"], ["medicine"]))
        assert one.result(60)["seq"] == 1
        with pytest.raises(DurabilityError, match="No space left on device"):
            two.result(60)
        assert service.degraded is None
        assert service.submit_update(["nurse"], ["medicine"]).result(60)["seq"] == 2
    finally:
        service.stop(checkpoint=False)
    log = read_log(tmp_path / "state" / "updates.log")
    assert [r.documents for r in log.records] == [["orbit"], ["nurse"]]
    assert_same_learner(service.model, offline_replay(model_path, [(["orbit"], ["space"]), (["nurse"], ["medicine"])]))


def test_checkpoints_under_load_never_lose_an_update(model_path, tmp_path):
    """Many writers, a checkpoint every 7 updates: whatever the groups, a restart from the
    state folder (the newest checkpoint and the log after it) is every update, in order."""
    service = open_service(model_path, learn=True, state=tmp_path / "state", checkpoint_every=7)
    corrections = stream(90, seed=5)
    by_seq, lock = {}, threading.Lock()

    def submit(part):
        for doc, label in part:
            reply = service.submit_update([doc], [label]).result(60)
            with lock:
                by_seq[reply["seq"]] = ([doc], [label])

    threads = [threading.Thread(target=submit, args=(corrections[i::6],)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    service.stop(checkpoint=False)  # as a crash leaves it
    assert sorted(by_seq) == list(range(1, 91))
    assert service.last_checkpoint.seq >= 84
    again = open_service(model_path, learn=False, state=tmp_path / "state")
    assert again.counters.seq == 90
    assert_same_learner(again.model, offline_replay(model_path, [by_seq[s] for s in range(1, 91)]))


def test_after_an_update_that_cannot_be_applied_none_written_after_it_is_applied(model_path, tmp_path, monkeypatch):
    real = service_module.apply_group

    def flaky(model, parts, labels):  # the requests before the one labelled "space" are applied
        failing = [list(y) for y in labels].index(["space"]) if ["space"] in [list(y) for y in labels] else None
        if failing is None:
            return real(model, parts, labels)
        done = real(model, parts[:failing], labels[:failing])[0] if failing else []
        return done, RuntimeError("simulated bug")

    monkeypatch.setattr(service_module, "apply_group", flaky)
    service = open_service(model_path, learn=True, state=tmp_path / "state")
    try:
        overlapped = Overlapped(service, monkeypatch, "none")
        one, two = overlapped.run((["orbit"], ["space"]), (["doctor"], ["medicine"]))
        with pytest.raises(NotLearningError, match="update 1 is in the log but could not be applied"):
            one.result(60)
        with pytest.raises(NotLearningError, match="learning is stopped"):  # written and fsynced, not applied
            two.result(60)
        assert overlapped.fsync_threads[1].startswith("textcw-serve-fsync")
        assert service.counters.seq == 0
    finally:
        service.stop()
    assert [r.documents for r in read_log(tmp_path / "state" / "updates.log").records] == [["orbit"], ["doctor"]]
    assert_same_learner(service.model, textcw.load(model_path))
