"""Real ``textcw serve`` processes killed with SIGKILL under load, and a full disk at a checkpoint.

The property: after any ``kill -9`` and a restart, the model equals, bit for bit, an offline
``partial_fit`` over the acknowledged updates in the order of their record numbers. Requests
still unanswered when the process died may or may not be in it (they were never acknowledged);
each record number the service holds that no reply announced must be one of those requests.
"""

from __future__ import annotations

import copy
import itertools
import resource
import signal
import threading
import time

import numpy as np
import pytest
import textcw

from serve_fixtures import assert_same_learner, save_model, serve_process, train_documents  # noqa: F401 (fixture)
from textcw_serve.client import ServiceError
from textcw_serve.model_ops import model_digest
from textcw_serve.startup import open_service

CLIENTS = 4
ROUNDS = 2


def unique_update(round_: int, client: int, i: int, rng) -> tuple[list[str], list[str]]:
    """1-3 documents drawn with a seed no other request uses, so that requests differ and the
    order of the records shows in the model."""
    docs, labels = train_documents(seed=100_000 * round_ + 10_000 * client + i, n_per_class=2)
    size = int(rng.integers(1, 4))
    return docs[:size], labels[:size]


def load_round(server, round_: int, acknowledged: int, then: float):
    """Clients learning as fast as they can (and one predicting) until the process dies; returns the acknowledged
    ``{seq: update}`` and the updates sent but never answered."""
    acked, unanswered, lock = {}, [], threading.Lock()
    stop = threading.Event()

    def client_loop(index):
        client = server.client(timeout=30)
        rng = np.random.default_rng(index + 100 * round_)
        for i in itertools.count():
            update = unique_update(round_, index, i, rng)
            try:
                reply = client.learn(*update)
            except Exception:  # the kill: this request was in flight
                with lock:
                    unanswered.append(update)
                return
            with lock:
                acked[reply["seq"]] = update
            if stop.is_set():
                return

    def predicting():  # a mixed load: predictions beside the updates
        client = server.client(timeout=30)
        while not stop.is_set():
            try:
                client.predict(["orbit rocket doctor", "nasa clinic vaccine"])
            except Exception:
                return

    threads = [threading.Thread(target=client_loop, args=(k,)) for k in range(CLIENTS)]
    threads.append(threading.Thread(target=predicting))
    for thread in threads:
        thread.start()
    # kill in the middle of the load however fast this machine is: once that many updates
    # were acknowledged, and a moment later
    deadline = time.monotonic() + 120
    while len(acked) < acknowledged and time.monotonic() < deadline and any(t.is_alive() for t in threads):
        time.sleep(0.01)
    time.sleep(then)
    server.kill()  # SIGKILL while the clients are still sending
    stop.set()
    for thread in threads:
        thread.join(60)
    return acked, unanswered


def same_learner(a, b) -> bool:
    try:
        assert_same_learner(a, b)
    except AssertionError:
        return False
    return True


def advance(reference, updates):
    model = copy.deepcopy(reference)
    featurizer, learner = model.steps[0][1], model.steps[-1][1]
    for docs, labels in updates:
        learner.partial_fit(featurizer.transform(docs), labels)
    return model


def test_kill_9_under_load_loses_no_acknowledged_update(tmp_path, serve_process):
    model_path = save_model(tmp_path)
    state = tmp_path / "state"
    args = [str(model_path), "--learn", "--state", str(state), "--checkpoint-every", "40"]
    reference = textcw.load(model_path)
    count, total_acked = 0, 0
    acked, unanswered = {}, []  # of the round before the restart
    for round_ in range(ROUNDS + 1):
        server = serve_process(args, f"serve-{round_}.log")
        status = server.client().status()
        if round_:
            # every acknowledged update of the round is there; the others are unanswered ones
            new_count = status["update_count"]
            assert max(acked) <= new_count, f"round {round_ - 1}: acknowledged updates lost"
            gaps = [seq for seq in range(count + 1, new_count + 1) if seq not in acked]
            assert len(gaps) <= len(unanswered), (gaps, len(unanswered))
            # the served model, with its per-call counts, from a checkpoint written now (a delta
            # after a full one, as a replica reads the folder)
            server.client().checkpoint()
            served = open_service(model_path, state=state).model
            matches = []
            for filling in itertools.permutations(range(len(unanswered)), len(gaps)):
                chosen = dict(zip(gaps, (unanswered[k] for k in filling)))
                candidate = advance(reference, [acked.get(s) or chosen[s] for s in range(count + 1, new_count + 1)])
                if model_digest(candidate) == status["model_digest"] and same_learner(candidate, served):
                    matches.append(candidate)
            # (an unanswered request that changed nothing fits more than one gap: any such match will do)
            assert matches, f"round {round_ - 1}: the restarted model is no replay of the updates"
            reference, count = matches[0], new_count
        assert status["update_count"] == count
        if round_ == ROUNDS:
            server.client().checkpoint()
            server.terminate()
            break
        acked, unanswered = load_round(server, round_, acknowledged=60 + 40 * round_, then=0.05 + 0.1 * round_)
        assert len(acked) >= 60, server.output()
        total_acked += len(acked)
    assert_same_learner(open_service(model_path, state=state).model, reference)  # the chain read back
    assert total_acked >= 160


def _limit_file_size(limit: int):
    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG from write() instead of a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_full_disk_at_a_checkpoint_keeps_the_old_checkpoint_and_every_update(tmp_path, serve_process):
    model_path = save_model(tmp_path)
    state = tmp_path / "state"
    args = [str(model_path), "--learn", "--state", str(state), "--checkpoint-every", "0", "--full-every", "1"]
    updates = [([f"orbit rocket {i}", f"doctor nurse {i}"], ["space", "medicine"]) for i in range(8)]

    service = open_service(model_path, learn=True, state=state, checkpoint_every=0, full_every=1)
    for docs, labels in updates[:3]:
        service.submit_update(docs, labels).result(30)
    service.stop()  # a checkpoint at exit
    (old,) = state.glob("checkpoint-*")
    assert old.name == "checkpoint-000000000003.textcw-model"
    old_bytes = old.read_bytes()

    # No file of this process may grow past 4 kB: the log's small appends fit, a checkpoint does not.
    assert len(old_bytes) > 4096
    server = serve_process(args, "serve-1.log", preexec_fn=_limit_file_size(4096))
    client = server.client()
    for docs, labels in updates[3:6]:
        client.learn(docs, labels)
    with pytest.raises(ServiceError) as error:
        client.checkpoint()
    assert error.value.status == 503
    assert "the previous checkpoint and the update log still hold every update" in error.value.message
    assert "File too large" in error.value.message
    assert [p.name for p in state.iterdir() if p.name.startswith(".")] == []  # no temporary file left
    assert old.read_bytes() == old_bytes and textcw.load(old)
    for docs, labels in updates[6:]:  # learning goes on
        assert client.learn(docs, labels)["seq"] in (7, 8)
    server.kill()

    server = serve_process(args, "serve-2.log")
    status = server.client().status()
    server.terminate()
    model = advance(textcw.load(model_path), updates)
    assert status["update_count"] == 8 and status["model_digest"] == model_digest(model)
