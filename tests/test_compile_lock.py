"""Processes starting on a cold kernel cache at once compile each kernel once: a process that
finds another compiling a kernel waits for it, then loads what it saved (``textcw._jit_numba``)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys

from hang import HANG_SECONDS

KERNEL_MODULE = """
from textcw._jit import kernel


@kernel
def doubled(x):
    return 2.0 * x
"""

# Prints the kernel's lock file, waits for a line on stdin, calls the kernel, and prints how long
# the call took and numba's cache hits and misses for it.
CALLER = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
import textcw._jit_numba as side
side.COMPILE_WAIT_SECONDS = float(sys.argv[2])
import doubling
print(side._lock_path(doubling.doubled.dispatcher), flush=True)
sys.stdin.readline()
start = time.monotonic()
assert doubling.doubled(1.5) == 3.0
stats = doubling.doubled.dispatcher.stats
print(json.dumps({"waited": time.monotonic() - start, "hits": sum(stats.cache_hits.values()),
                  "misses": sum(stats.cache_misses.values())}), flush=True)
"""


def start_caller(folder, env, wait: float) -> tuple[subprocess.Popen, str]:
    caller = subprocess.Popen([sys.executable, "-c", CALLER, str(folder), str(wait)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
    return caller, caller.stdout.readline().strip()


def finish(caller: subprocess.Popen) -> dict:
    out, _ = caller.communicate("go\n", timeout=HANG_SECONDS)
    assert caller.returncode == 0
    return json.loads(out)


def setup(tmp_path) -> tuple:
    (tmp_path / "doubling.py").write_text(KERNEL_MODULE)
    return tmp_path, {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_DISABLE_JIT": "0"}


def held(path: str) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_a_process_waits_for_the_one_compiling_and_loads_what_it_saved(tmp_path):
    folder, env = setup(tmp_path)
    waiting, path = start_caller(folder, env, HANG_SECONDS)
    assert path.endswith(".nbi.lock")
    fd = held(path)  # another process is compiling the kernel
    try:
        waiting.stdin.write("go\n")
        waiting.stdin.flush()
        # meanwhile that other process compiles and saves the kernel (its wait 0: it does not
        # wait for the lock this test holds)
        first, _ = start_caller(folder, env, 0.0)
        assert finish(first)["misses"] == 1
    finally:
        os.close(fd)
    second = json.loads(waiting.communicate(timeout=HANG_SECONDS)[0])
    assert (second["hits"], second["misses"]) == (1, 0)  # it waited, then loaded: nothing compiled twice


def test_past_its_wait_a_process_compiles_without_the_lock(tmp_path):
    folder, env = setup(tmp_path)
    caller, path = start_caller(folder, env, 1.0)
    fd = held(path)  # a process holding the lock and never finishing
    try:
        result = finish(caller)
    finally:
        os.close(fd)
    assert result["misses"] == 1 and result["waited"] >= 1.0  # it waited its second, then compiled


# Holds the kernel's lock, forks a child that lives on (as a process forked by another thread
# while a kernel compiles would), leaves the lock, and says whether a third party can take it.
FORKING = """
import fcntl, os, signal, sys
sys.path.insert(0, sys.argv[1])
import textcw._jit_numba as side
import doubling
dispatcher = doubling.doubled.dispatcher
read, write = os.pipe()
with side.compile_lock(dispatcher):
    child = os.fork()
    if child == 0:
        os.write(write, b"x")  # the fork handlers have run
        signal.pause()
    os.read(read, 1)
fd = os.open(side._lock_path(dispatcher), os.O_RDWR)
try:
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("free")
except BlockingIOError:
    print("still held by the child")
finally:
    os.kill(child, signal.SIGKILL)
    os.waitpid(child, 0)
"""


def test_a_child_forked_while_the_lock_is_held_does_not_keep_it(tmp_path):
    folder, env = setup(tmp_path)
    done = subprocess.run([sys.executable, "-c", FORKING, str(folder)], capture_output=True, text=True, env=env,
                          timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "free"
