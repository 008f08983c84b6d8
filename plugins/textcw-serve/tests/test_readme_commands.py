"""Every command line of the top-level ``README.md`` runs as written.

The README's ```` ```sh ```` blocks are run in order, in one fresh folder, so the later lines
use what the earlier ones made (one trained model serves the predict, export and import lines).
Before them, the first Python block of ``docs/guide/your-own-data.md`` makes the files the
README's CSV block names (``news.csv``, ``new.csv``, ``more.jsonl``) from a shipped corpus, as a
reader of that guide does. ``textcw serve`` starts in the background on a free loopback port
(the helpers of ``test_serve_doc_commands``), and the ``curl`` correction must change the model.

Three kinds of line are not run here, and are checked instead: ``pip ...`` lines are run by the
installed-package test (``tests/install/test_readme_install.py``) in a fresh environment;
``python3 dev.py ...`` lines are CI's own entry point (``dev.py test`` is what CI runs;
``dev.py train`` must train what the README's first ``textcw train`` line trains, which runs);
and ``textcw reproduce NAME --quick`` lines are run, with their results checked, by
``tests/cli/test_reproduce.py::test_quick_reproduction`` for every registered experiment (here
they must name one).
``HOME`` is a folder of the test's own, so ``textcw --install-completion`` writes there.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_serve_doc_commands import COMMAND_SECONDS, Service, shell_commands

REPO = Path(__file__).resolve().parents[3]
README = REPO / "README.md"
GUIDE = REPO / "docs" / "guide" / "your-own-data.md"


def kind(command: str) -> str:
    """How the test treats a README command line: ``install``, ``dev``, ``serve`` or ``run``."""
    if command.startswith("pip "):
        return "install"
    if command.startswith("python3 dev.py "):
        return "dev"
    if re.match(r"^textcw reproduce \S+ --quick$", without_comment(command)):
        return "reproduce"
    if re.match(r"^textcw serve \S+\.textcw-model", command):
        return "serve"
    return "run"


def without_comment(command: str) -> str:
    return command.split("  #", 1)[0].strip()


def test_the_readme_s_lines_are_commands_not_patterns():
    """A line a user pastes must be a command: no ``a|b`` alternatives, no ``[optional]`` parts."""
    commands = shell_commands(README.read_text(encoding="utf-8"))
    assert len(commands) > 20
    for command in map(without_comment, commands):
        assert not re.search(r"\w\|\w", command), f"a pattern, not a command: {command}"
        assert not re.search(r"\[--|\.\.\.", command), f"a pattern, not a command: {command}"
    assert [kind(c) for c in commands].count("serve") == 1


def test_the_readme_s_quick_reproductions_are_the_ones_test_reproduce_runs():
    from textcw.evaluation import experiments

    commands = [without_comment(c) for c in shell_commands(README.read_text(encoding="utf-8"))]
    reproduced = [c.split()[2] for c in commands if kind(c) == "reproduce"]
    assert reproduced, "the README shows no quick reproduction"
    assert set(reproduced) <= set(experiments.names()), reproduced
    test_reproduce = (REPO / "tests" / "cli" / "test_reproduce.py").read_text(encoding="utf-8")
    assert '@pytest.mark.parametrize("name", experiments.names())\ndef test_quick_reproduction(' in test_reproduce


def test_dev_py_train_trains_what_the_readme_s_first_train_line_trains():
    commands = [without_comment(c) for c in shell_commands(README.read_text(encoding="utf-8"))]
    assert {c for c in commands if kind(c) == "dev"} == {"python3 dev.py train", "python3 dev.py test"}
    tree = ast.parse((REPO / "dev.py").read_text(encoding="utf-8"))
    (default,) = [node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", None) == "DEFAULT_TRAIN" for t in node.targets)]
    first_train = next(c for c in commands if c.startswith("textcw train "))
    assert first_train == "textcw train " + " ".join(ast.literal_eval(default))


def example_tables_script() -> str:
    """The guide's first Python block: it writes news.csv, new.csv and more.jsonl."""
    blocks = re.findall(r"^```python\n(.*?)^```", GUIDE.read_text(encoding="utf-8"), flags=re.S | re.M)
    assert blocks and "news.csv" in blocks[0] and "more.jsonl" in blocks[0]
    return blocks[0]


@pytest.mark.slow
def test_every_command_line_of_the_readme_runs_as_written(tmp_path):
    data = os.environ.get("TEXTCW_DATA")
    assert data and Path(data).is_dir(), "TEXTCW_DATA is not set; point it at the corpora folder"
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "TEXTCW_OFFLINE": "1", "TEXTCW_CACHE": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1",
           "HOME": str(home), "SHELL": "/bin/bash", "MPLBACKEND": "Agg"}
    for name in ("TEXTCW_SIGNING_KEY", "TEXTCW_SIGNING_KEY_FILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME"):
        env.pop(name, None)
    work = tmp_path / "work"
    work.mkdir()
    made = subprocess.run([sys.executable, "-c", example_tables_script()], cwd=work, env=env, capture_output=True,
                          text=True, timeout=COMMAND_SECONDS)
    assert made.returncode == 0, made.stderr[-3000:]

    service, outputs = None, {}
    try:
        for command in shell_commands(README.read_text(encoding="utf-8")):
            if kind(command) in ("install", "dev", "reproduce"):
                continue
            if kind(command) == "serve":
                service = Service(command, work, env)
                continue
            if service is not None:
                command = re.sub(r"(localhost|127\.0\.0\.1):8000", rf"\g<1>:{service.port}", command)
            # The trailing ":" keeps bash as the command's parent instead of letting it exec the
            # line: `textcw --install-completion` finds its shell among its parent processes, and
            # an exec'ed line has none when the tests were not started from a shell.
            done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", f"{command}\n:"], cwd=work, env=env,
                                  capture_output=True, text=True, timeout=COMMAND_SECONDS)
            assert done.returncode == 0, f"README: `{command}` exited with {done.returncode}:\n" \
                                         f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
            outputs[command] = done.stdout
    finally:
        code = service.stop() if service is not None else None
    assert service is not None and "(learning)" in service.output()
    assert code == 128 + 15, service.output()  # a clean stop after SIGTERM, the final checkpoint written

    # what the lines claim: the files they name exist and the correction was learned
    (learn,) = [json.loads(out) for command, out in outputs.items() if command.startswith("curl")]
    assert learn["changed"] is True and learn["updates"] == 1 and learn["unseen_tokens"] is None, learn
    header = (work / "predictions.csv").read_text(encoding="utf-8").splitlines()[0]
    assert header == "subject,body,predicted,probability"
    for name in ("comp.textcw-model", "news.textcw-model", "news-more.textcw-model", "comp.textcw",
                 "theirs.textcw-model", "out.json"):
        assert (work / name).is_file(), name
    predicted = [out for command, out in outputs.items() if command.startswith("textcw predict comp.textcw-model")]
    assert predicted and predicted[0].startswith("letter.txt\tcomp."), predicted
