"""Crash-safe writes: a process killed while saving a model or downloading a corpus file leaves the
old file or the new one, never a partial one; concurrent savers leave one complete file.

The killed processes are real subprocesses ended with SIGKILL (no clean-up handlers run). Some are
stopped at a chosen point (the child announces it on stdout and waits), the others at random
moments of a save of a large model.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
from functools import partial
from pathlib import Path

import pytest

import textcw
from hang import HANG_SECONDS

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX SIGKILL")

# A child process: builds a model of a chosen size, then saves it to PATH (in a loop if asked).
# The model's info records a tag, so the parent can tell which save a file came from.
CHILD = textwrap.dedent("""
    import os, sys, time, zipfile
    import numpy as np
    from sklearn.pipeline import Pipeline
    import textcw, textcw.atomic

    path, tag, n_features, loops, pause_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    rng = np.random.RandomState(int(tag))
    X = rng.rand(20, n_features); y = np.arange(20) % 2
    model = Pipeline([("learner", textcw.make_learner("cw-var", n_epochs=1, random_state=0))]).fit(X, y)

    def announce_and_wait(what):
        print(what, flush=True)
        time.sleep(60)  # the parent kills us here

    if pause_at == "payload":  # after the manifest member, before the payload member
        real = zipfile.ZipFile.writestr
        def writestr(self, info, data, *a, **k):
            if getattr(info, "filename", info) == "model.joblib":
                announce_and_wait("payload")
            return real(self, info, data, *a, **k)
        zipfile.ZipFile.writestr = writestr
    elif pause_at == "rename":  # everything written and synced, before the rename
        real_fsync = textcw.atomic.os.fsync
        def fsync(fd):
            real_fsync(fd)
            announce_and_wait("rename")
        textcw.atomic.os.fsync = fsync
    print("ready", flush=True)
    for _ in range(loops):
        textcw.save(model, path, info={"tag": tag})
    print("done", flush=True)
""")


def child(path, tag, *, n_features=50, loops=1, pause_at="none"):
    return subprocess.Popen([sys.executable, "-c", CHILD, str(path), str(tag), str(n_features), str(loops),
                             pause_at], stdout=subprocess.PIPE, text=True)


def wait_for(proc, word, timeout=HANG_SECONDS):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.strip() == word:
            return
        if not line and proc.poll() is not None:
            break
    proc.kill()
    pytest.fail(f"child never said {word!r} (exit code {proc.poll()})")


def tag_of(path) -> str:
    return str(textcw.read_manifest(path)["info"]["tag"])


def complete(path) -> str:
    """The tag of the model at ``path``, after loading it fully (digest checked, unpickled)."""
    model = textcw.load(path)
    assert model.predict([[0.5] * model[-1].n_features_in_]).shape == (1,)
    return tag_of(path)


@pytest.fixture
def old_model(tmp_path):
    path = tmp_path / "m.joblib"
    proc = child(path, 1)
    assert proc.wait(timeout=HANG_SECONDS) == 0
    return path


@pytest.mark.parametrize("pause_at", ["payload", "rename"])
def test_kill_mid_save_leaves_the_old_file(old_model, pause_at):
    before = old_model.read_bytes()
    proc = child(old_model, 2, pause_at=pause_at)
    wait_for(proc, pause_at)
    temporaries = list(old_model.parent.glob(".m.joblib.*.tmp"))
    assert len(temporaries) == 1  # the new file was being written beside the old one
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert old_model.read_bytes() == before and complete(old_model) == "1"
    # the next save succeeds and replaces it; the killed process's temporary file is only litter
    assert child(old_model, 3).wait(timeout=HANG_SECONDS) == 0
    assert complete(old_model) == "3"


@pytest.mark.slow
def test_kill_at_random_moments_leaves_old_or_new(old_model):
    rng = random.Random(0)
    for attempt in range(6):
        tag = 10 + attempt
        proc = child(old_model, tag, n_features=300_000, loops=5)  # ~5 MB saves
        wait_for(proc, "ready")
        time.sleep(rng.uniform(0.0, 0.4))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        # whatever the moment, the file is a complete model: the previous one or this child's
        assert complete(old_model) in {str(t) for t in (1, *range(10, tag + 1))}


def test_concurrent_savers_leave_one_complete_file_and_readers_never_see_a_partial_one(old_model):
    procs = [child(old_model, tag, n_features=20_000, loops=15) for tag in (21, 22)]
    loads = 0
    while any(p.poll() is None for p in procs):
        assert complete(old_model) in {"1", "21", "22"}  # every read in between is a whole model
        loads += 1
    assert [p.wait(timeout=HANG_SECONDS) for p in procs] == [0, 0]
    assert complete(old_model) in {"21", "22"} and loads > 0
    assert sorted(p.name for p in old_model.parent.iterdir()) == ["m.joblib"]  # no temporaries left


# ---------------------------------------------------------------- corpus downloads

DOWNLOAD_CHILD = textwrap.dedent("""
    import sys
    from textcw.corpus.datahome import RemoteFile, fetch
    url, digest = sys.argv[1], sys.argv[2]
    print(fetch(RemoteFile("toy", "data.bin", url, (digest,))), flush=True)
""")


class _QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # the client was killed on purpose: its broken connection is expected


@pytest.fixture
def slow_server(tmp_path):
    """Serves ``data.bin``; while ``stall`` is set it sends half the body and then waits."""
    root = tmp_path / "served"
    root.mkdir()
    body = os.urandom(4 << 20)  # the client reads 1 MB chunks: half the body is two of them
    (root / "data.bin").write_bytes(body)
    stall, done = threading.Event(), threading.Event()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def copyfile(self, source, outputfile):
            data = source.read()
            try:
                if stall.is_set():
                    outputfile.write(data[: len(data) // 2])
                    outputfile.flush()
                    done.wait(30)  # until the test ends; the client is killed meanwhile
                    return
                outputfile.write(data)
            except OSError:  # the killed client's connection
                pass

    httpd = _QuietServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/data.bin", hashlib.sha256(body).hexdigest(), stall
    done.set()
    httpd.shutdown()
    httpd.server_close()


def test_kill_mid_download_leaves_no_partial_corpus_file(slow_server, tmp_path):
    url, digest, stall = slow_server
    env = {**os.environ, "TEXTCW_DATA": str(tmp_path / "home"), "TEXTCW_OFFLINE": "0"}
    folder = tmp_path / "home" / "toy"
    stall.set()
    proc = subprocess.Popen([sys.executable, "-c", DOWNLOAD_CHILD, url, digest], env=env,
                            stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    part = folder / ".data.bin.part"
    while not (part.exists() and part.stat().st_size > 0):
        assert time.monotonic() < deadline and proc.poll() is None, "the download never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert sorted(p.name for p in folder.iterdir()) == [".data.bin.part"]  # only the hidden partial file
    stall.clear()
    out = subprocess.run([sys.executable, "-c", DOWNLOAD_CHILD, url, digest], env=env, capture_output=True,
                         text=True, timeout=HANG_SECONDS)
    assert out.returncode == 0, out.stderr
    assert Path(out.stdout.strip()) == folder / "data.bin"
    assert hashlib.sha256((folder / "data.bin").read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in folder.iterdir()) == ["data.bin"]  # the next download reused the .part
