"""Every Python example in README.md and docs/ runs, so none can go stale.

One test per page: the page's ```python blocks run in order in one namespace (a later block may
use what an earlier one made), in a fresh working folder, with the environment the other tests
have (``$TEXTCW_DATA``, offline, a fresh corpus cache). A block is skipped only when it needs
something a test cannot have (a running service, files the reader supplies): its fence says
```` ```python no-run ```` or an HTML comment ``<!-- no-run: why -->`` stands on the line before
it, and the page says why next to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

_FENCE = re.compile(r"^(`{3,})\s*python\b(?P<info>[^\n]*)$")
_NO_RUN_COMMENT = re.compile(r"^<!--\s*no-run\b.*-->$")


@dataclass(frozen=True)
class Block:
    line: int  # of the opening fence, counted from 1
    code: str
    runs: bool


def python_blocks(markdown: str) -> list[Block]:
    """The ```python blocks of ``markdown``, in order, each marked whether it is to run."""
    blocks, lines, i = [], markdown.splitlines(), 0
    while i < len(lines):
        opening = _FENCE.match(lines[i].strip())
        if opening is None:
            if lines[i].strip().startswith("```"):  # another language's block: skip past it
                fence = re.match(r"`{3,}", lines[i].strip()).group(0)
                i += 1
                while i < len(lines) and lines[i].strip() != fence:
                    i += 1
            i += 1
            continue
        fence, start = opening.group(1), i
        indent = len(lines[i]) - len(lines[i].lstrip())
        i += 1
        body = []
        while i < len(lines) and lines[i].strip() != fence:
            body.append(lines[i][indent:])
            i += 1
        previous = next((line.strip() for line in reversed(lines[:start]) if line.strip()), "")
        runs = "no-run" not in opening.group("info").split() and not _NO_RUN_COMMENT.match(previous)
        blocks.append(Block(start + 1, "\n".join(body) + "\n", runs))
        i += 1
    return blocks


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


# Pages whose examples do not run yet, and why; strict, so a page that runs loses its entry.
KNOWN_FAILING: dict[str, str] = {}
PAGES_WITH_CODE = [
    pytest.param(page, id=page_id(page), marks=[pytest.mark.xfail(reason=KNOWN_FAILING[page_id(page)], strict=True)]
                 if page_id(page) in KNOWN_FAILING else [])
    for page in PAGES if python_blocks(page.read_text(encoding="utf-8"))
]


@pytest.mark.parametrize("page", PAGES_WITH_CODE)
def test_page_examples_run(page, data_home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": f"doc_example_{page.stem}"}
    ran = 0
    for block in python_blocks(page.read_text(encoding="utf-8")):
        if not block.runs:
            continue
        code = compile(block.code, f"{page_id(page)}:{block.line}", "exec")
        try:
            exec(code, namespace)
        except Exception as exc:
            pytest.fail(f"{page_id(page)}, the example at line {block.line} failed: "
                        f"{type(exc).__name__}: {exc}")
        ran += 1
    assert ran, f"{page_id(page)} has Python examples but none runs"


def test_the_block_reader():
    page = "\n".join([
        "text", "```python", "a = 1", "```", "```sh", "```python", "not python", "```",
        "<!-- no-run: needs a server -->", "", "```python", "server()", "```",
        "```python no-run", "also skipped()", "```",
        "- item", "  ```python", "  b = a + 1", "  ```",
    ])
    blocks = python_blocks(page)
    assert [(b.line, b.code, b.runs) for b in blocks] == [
        (2, "a = 1\n", True), (11, "server()\n", False), (14, "also skipped()\n", False),
        (18, "b = a + 1\n", True)]
