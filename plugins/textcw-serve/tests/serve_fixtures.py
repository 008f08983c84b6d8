"""Models, services and server processes for the textcw-serve tests (127.0.0.1 only)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
import textcw
from textcw.testing.datasets import make_documents

from textcw_serve.app import create_app
from textcw_serve.client import Client
from textcw_serve.connections import uvicorn_config
from textcw_serve.server import bind
from textcw_serve.startup import open_service

SERVER_TIMEOUT = 60.0


def train_documents(seed: int = 0, n_per_class: int = 30):
    docs, labels = make_documents(n_per_class, random_state=seed)
    return docs, [str(label) for label in labels]


def save_model(folder: Path, *, learner: str = "cw-stdev", name: str = "model.textcw-model",
               docs=None, labels=None, **params) -> Path:
    """A fitted binary-bow pipeline saved to ``folder/name``."""
    if docs is None:
        docs, labels = train_documents()
    model = textcw.make_pipeline("binary-bow", learner, **params).fit(docs, labels)
    return textcw.save(model, folder / name)


def save_tagged_model(folder: Path, name: str = "tags.textcw-model"):
    """A fitted multi-label pipeline saved to ``folder/name`` (tags: the topic, and "other" for
    every third document), and the pipeline."""
    import warnings

    from sklearn.pipeline import Pipeline
    from textcw.learners.multilabel import MultiLabel

    pairs = stream(90, seed=3)
    docs = [doc for doc, _ in pairs]
    tags = [(label,) if i % 3 else (label, "other") for i, (_, label) in enumerate(pairs)]
    model = Pipeline([("features", textcw.make_featurizer("binary-bow")),
                      ("learner", MultiLabel(textcw.make_learner("arow")))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few documents behind each tag's calibration
        model.fit(docs, tags)
    return textcw.save(model, folder / name), model


def stream(n: int, seed: int = 1) -> list[tuple[str, str]]:
    """``n`` (document, label) corrections, some of them against the topic (so updates happen)."""
    docs, labels = make_documents((n + 1) // 2, random_state=seed)
    rng = np.random.default_rng(seed)
    flipped = rng.random(len(docs)) < 0.2
    out = []
    for doc, label, flip in zip(docs, labels, flipped):
        label = str(label)
        out.append((doc, ({"space": "medicine", "medicine": "space"}[label] if flip else label)))
    return out[:n]


def pairs_of_corrections(n: int, seed: int = 1) -> list[tuple[list[str], list[str]]]:
    """``n`` batches of two corrections each (:func:`stream`), as ``/learn`` takes them."""
    pairs = stream(2 * n, seed=seed)
    return [([pairs[i][0], pairs[i + 1][0]], [pairs[i][1], pairs[i + 1][1]]) for i in range(0, 2 * n, 2)]


# giving a file or a link to another user needs root
needs_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="giving a file or a link to another user needs root")


def offline_replay(model_path: Path, batches: list[tuple[list[str], list[str]]]):
    """The model at ``model_path`` after one ``partial_fit`` per batch, in order: the reference."""
    model = textcw.load(model_path)
    featurizer, learner = model.steps[0][1], model.steps[-1][1]
    for docs, labels in batches:
        learner.partial_fit(featurizer.transform(docs), labels)
    return model


def assert_same_learner(a, b) -> None:
    """Bit-for-bit equal learners: classes, every state array's bytes, the counts per call."""
    sa, sb = a.steps[-1][1].state_dict(), b.steps[-1][1].state_dict()
    # (this module is not rewritten by pytest: every assert says what differs)
    assert list(sa["classes"]) == list(sb["classes"]), (sa["classes"], sb["classes"])
    assert sorted(sa["arrays"]) == sorted(sb["arrays"]), (sorted(sa["arrays"]), sorted(sb["arrays"]))
    for name in sa["arrays"]:
        x, y = sa["arrays"][name], sb["arrays"][name]
        assert (x.dtype, x.shape) == (y.dtype, y.shape), f"state array {name}: {x.dtype}{x.shape} != {y.dtype}{y.shape}"
        assert x.tobytes() == y.tobytes(), f"state array {name} differs"
    assert sa["mistakes"] == sb["mistakes"], f"mistakes per call differ: {sa['mistakes']} != {sb['mistakes']}"
    assert sa["n_updates"] == sb["n_updates"], f"updates per call differ: {sa['n_updates']} != {sb['n_updates']}"


class ThreadServer:
    """A service run by uvicorn in a thread of this process (fast to start, for API tests)."""

    def __init__(self, service, *, token=None, loopback_only=True, body_seconds=10.0, **config):
        import uvicorn

        self.service = service
        self.sock = bind("127.0.0.1", 0)
        self.port = self.sock.getsockname()[1]
        self.app = create_app(service, token=token, loopback_only=loopback_only, body_seconds=body_seconds)
        self.server = uvicorn.Server(uvicorn_config(self.app, **config))  # what `textcw serve` runs
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, **kwargs) -> Client:
        return Client(self.url, **kwargs)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + SERVER_TIMEOUT
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "the server did not start"
            time.sleep(0.01)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(SERVER_TIMEOUT)
        self.sock.close()
        self.service.stop()


@contextlib.contextmanager
def thread_server(model_path: Path, *, learn: bool = True, state=None, token=None, **kwargs):
    service = open_service(model_path, learn=learn, state=state, **kwargs)
    with ThreadServer(service, token=token) as server:
        yield server


class ServerProcess:
    """``textcw serve`` as a real process; its stderr goes to a file, read for the address."""

    def __init__(self, args: list[str], log: Path, *, preexec_fn=None):
        self.log = log
        self.handle = open(log, "wb")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen([sys.executable, "-m", "textcw", "serve", *args, "--port", "0"],
                                     stdout=self.handle, stderr=subprocess.STDOUT, env=env,
                                     preexec_fn=preexec_fn)
        self.url = self._wait_for_address()

    def _wait_for_address(self) -> str:
        deadline = time.monotonic() + SERVER_TIMEOUT
        while time.monotonic() < deadline:
            match = re.search(r"on (http://127\.0\.0\.1:\d+)/", self.log.read_text(errors="replace"))
            if match:
                return match.group(1)
            if self.proc.poll() is not None:
                raise AssertionError(f"textcw serve exited with {self.proc.returncode}: {self.output()}")
            time.sleep(0.05)
        self.kill()
        raise AssertionError(f"textcw serve did not start: {self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def client(self, **kwargs) -> Client:
        return Client(self.url, **kwargs)

    def kill(self) -> None:
        """SIGKILL: no handler, no flush, no checkpoint."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(SERVER_TIMEOUT)
        self.handle.close()

    def terminate(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(SERVER_TIMEOUT)
        self.handle.close()
        return code


@pytest.fixture
def serve_process(tmp_path):
    """``start(args, log_name, **kwargs)`` -> :class:`ServerProcess`; every process started is
    killed at the end of the test, also when it fails half-way."""
    started = []

    def start(args, log_name, **kwargs):
        started.append(ServerProcess(args, tmp_path / log_name, **kwargs))
        return started[-1]

    yield start
    for process in started:
        process.kill()
