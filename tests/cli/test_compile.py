"""``textcw compile``: the kernels a training uses, compiled ahead, so the first run compiles nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from hang import HANG_SECONDS

# A training through the command line in a fresh process, counting numba's compilations.
TRAIN_COUNTING = """
import sys
from numba.core import event
from textcw.cli import main
table = sys.argv[1]
with event.install_recorder("numba:compile") as recorder:
    try:
        main(["train", "--corpus", f"csv:{table}?text=text&label=label", "--learner", "perceptron",
              "--featurizer", "binary-bow", "--no-cache"])
    except SystemExit as end:
        assert not end.code, end.code
print(sum(1 for _, ev in recorder.buffer if ev.is_start))
"""


def run(args: list[str], env: dict) -> str:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_after_compile_a_first_training_compiles_nothing(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}  # an empty cache: a new machine
    table = tmp_path / "mine.csv"
    table.write_text("text,label\n" + "".join(f"orbit moon rocket {i},space\ndose doctor pill {i},medicine\n"
                                               f"goal match team {i},sport\n" for i in range(40)))
    rows = json.loads(run(["-m", "textcw", "compile", "--learner", "perceptron", "--featurizer", "binary-bow",
                           "--json"], env))
    assert [(r["learner"], r["featurizer"], r["labels"]) for r in rows] == [
        ("perceptron", "binary-bow", 2), ("perceptron", "binary-bow", 3)]
    assert rows[0]["kernels_compiled"] > 0  # the empty cache was filled
    # the user's own three-label table, in a new process: every kernel comes from the cache
    assert run(["-c", TRAIN_COUNTING, str(table)], env).split()[-1] == "0"
    again = json.loads(run(["-m", "textcw", "compile", "--learner", "perceptron", "--featurizer", "binary-bow",
                            "--json"], env))
    assert [r["kernels_compiled"] for r in again] == [0, 0]
