"""Every shell command of the pages that teach the command line runs, as written.

The page's ```python blocks run first (they make the files its commands read), then each ```sh
block, in order, as one ``bash -e -o pipefail`` script in the same fresh folder, with this
environment's ``textcw`` first on the ``PATH`` and the environment the other tests have
(``$TEXTCW_DATA``, offline). ``pip install`` lines are left out: the installed-package tests
(tests/install) run every install line of the README against a built wheel.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_doc_examples import python_blocks

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "docs" / "guide" / "quickstart.md", ROOT / "docs" / "guide" / "your-own-data.md"]
_SH = re.compile(r"^```(?:sh|bash|console)\s*$")


def shell_blocks(markdown: str) -> list[tuple[int, str]]:
    """``(line, script)`` of every ```sh block, without its ``pip install`` lines."""
    blocks, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        if _SH.match(lines[i].strip()):
            start, body = i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                if not lines[i].strip().startswith("pip install"):
                    body.append(lines[i])
                i += 1
            blocks.append((start, "\n".join(body) + "\n"))
        i += 1
    return blocks


def test_shell_blocks_are_found_without_pip_lines():
    page = "text\n```sh\npip install x\ntextcw list learners\n```\n```python\nprint(1)\n```\n```sh\necho a\n```\n"
    assert shell_blocks(page) == [(2, "textcw list learners\n"), (9, "echo a\n")]


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_of_the_page_runs(page, tmp_path, monkeypatch):
    markdown = page.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__doc__"}
    for block in python_blocks(markdown):
        if block.runs:
            exec(compile(block.code, f"{page.name}:{block.line}", "exec"), namespace)  # noqa: S102
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    for line, script in shell_blocks(markdown):
        run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=tmp_path, env=env,
                             capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, f"{page.name} line {line}:\n{script}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"

