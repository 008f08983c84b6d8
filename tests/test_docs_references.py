"""The repository stands alone: its code and documentation cite the papers and docs/algorithms.md,
never files that live outside the checkout.

Two checks over the shipped text (textcw/, plugins/, docs/, README.md):

- no mention of an external design note (``ALGORITHMS.md``) or of a ``papers/`` or ``shared/``
  path. Web addresses are allowed (``https://jmlr.org/papers/...`` is a paper's home page), and
  so is ``shared/corpora``: the corpora folder that ``dev.py`` uses when it stands beside the
  checkout (see README.md), which holds data, not documentation;
- every citation ``docs/algorithms.md "Heading"`` (in code, tests and docs) and every link
  ``algorithms.md#anchor`` (in docs) names a heading that docs/algorithms.md has.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ALGORITHMS = ROOT / "docs" / "algorithms.md"
TEXT_SUFFIXES = {".py", ".md", ".json", ".toml", ".txt", ".cfg", ".ini", ".rst", ".yml", ".yaml", ".in", ".typed"}
SKIP_PARTS = {"__pycache__", "build", "dist", ".venv", ".git"}

_URL = re.compile(r"https?://\S+")
_FORBIDDEN = [
    ("the external design note ALGORITHMS.md", re.compile(r"ALGORITHMS\.md")),
    ("a papers/ path", re.compile(r"(?<![\w-])papers/")),
    ("a shared/ path", re.compile(r"(?<![\w-])shared/(?!corpora\b)")),
]
# `docs/algorithms.md "A"`, `docs/algorithms.md "A", "B" and "C"`, `algorithms.md "A" to "B"`
_CITATION = re.compile(r'(?:docs/)?algorithms\.md((?:\s*(?:,|and|or|to)?\s*"[^"\n]+")+)')
_QUOTED = re.compile(r'"([^"\n]+)"')
_ANCHOR = re.compile(r"\(algorithms\.md#([^)\s]+)\)")


def shipped_files() -> list[Path]:
    """Every text file of the shipped tree: textcw/, plugins/, docs/ and README.md."""
    files = [ROOT / "README.md"]
    for top in ("textcw", "plugins", "docs"):
        for path in sorted((ROOT / top).rglob("*")):
            rel = path.relative_to(ROOT).parts
            if path.is_file() and path.suffix in TEXT_SUFFIXES and not SKIP_PARTS.intersection(rel):
                if not any(part.endswith(".egg-info") for part in rel):
                    files.append(path)
    return files


def outside_references(text: str) -> list[str]:
    """``"line N: <what> in <line>"`` for each mention of a file outside the repository."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        bare = _URL.sub("", line)
        for what, pattern in _FORBIDDEN:
            if pattern.search(bare):
                found.append(f"line {number}: {what} in {line.strip()!r}")
    return found


def headings(markdown: str) -> list[str]:
    """The text of every Markdown heading (``#`` to ``######``), outside fenced code blocks."""
    names, fenced = [], False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            names.append(line.lstrip("#").strip())
    return names


def slug(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's rules) gives ``heading``."""
    kept = re.sub(r"[^\w\- ]", "", heading.lower())
    return kept.replace(" ", "-")


def cited_sections(text: str) -> list[str]:
    """The section names cited as ``docs/algorithms.md "Name"`` (several may follow one path)."""
    return [name for match in _CITATION.finditer(text) for name in _QUOTED.findall(match.group(1))]


def citing_files() -> list[Path]:
    files = shipped_files()
    files += [p for p in sorted((ROOT / "tests").rglob("*.py")) if "__pycache__" not in p.parts]
    return [p for p in files if p != ALGORITHMS and p.name != Path(__file__).name]


# ------------------------------------------------------------------- the checks on the repository

def test_shipped_files_cite_nothing_outside_the_repository():
    files = shipped_files()
    assert ALGORITHMS in files and ROOT / "textcw" / "learners" / "_kernels" / "gaussian_rules.py" in files
    problems = [
        f"{path.relative_to(ROOT)} {problem}"
        for path in files
        for problem in outside_references(path.read_text(encoding="utf-8"))
    ]
    assert problems == [], "cite the paper (title, table, section) or docs/algorithms.md instead:\n" + "\n".join(problems)


def test_algorithms_headings_are_unique_and_cover_the_rules():
    names = headings(ALGORITHMS.read_text(encoding="utf-8"))
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    for rule in ("Notation", "Perceptron", "Passive-Aggressive", "Second-order perceptron", "SGD",
                 "CW var", "CW stdev", "Covariance forms", "CW exact diagonal", "AROW", "SCW",
                 "Multi-class", "Multi-class exact", "Label probabilities", "Shard combination",
                 "Stable step sizes", "Variance floor", "Underflow guards", "Non-finite steps",
                 "Joint solver checks", "Evaluation protocol"):
        assert rule in names


def test_every_citation_names_an_existing_section():
    names = set(headings(ALGORITHMS.read_text(encoding="utf-8")))
    cited, unknown = 0, []
    for path in citing_files():
        for name in cited_sections(path.read_text(encoding="utf-8")):
            cited += 1
            if name not in names:
                unknown.append(f"{path.relative_to(ROOT)}: {name!r}")
    assert unknown == [], "no such heading in docs/algorithms.md:\n" + "\n".join(unknown)
    assert cited >= 20  # the kernels, learners, combination and evaluators all cite it


def test_every_docs_link_to_a_section_resolves():
    anchors = {slug(name) for name in headings(ALGORITHMS.read_text(encoding="utf-8"))}
    links, broken = 0, []
    for path in sorted((ROOT / "docs").glob("*.md")):
        for anchor in _ANCHOR.findall(path.read_text(encoding="utf-8")):
            links += 1
            if anchor not in anchors:
                broken.append(f"{path.name}: #{anchor}")
    assert broken == []
    assert links >= 2


def test_published_tables_keep_line_numbers_as_numbers_not_paths():
    # A few rows keep the line of the quoted sentence in the paper's text; nothing names that text
    # as a file.
    published = ROOT / "textcw" / "evaluation" / "experiments" / "published"
    lines = 0
    for path in sorted(published.glob("*.json")):
        def walk(node):
            nonlocal lines
            if isinstance(node, dict):
                for key, value in node.items():
                    if key == "line":
                        assert isinstance(value, int) and value > 0, (path.name, value)
                        lines += 1
                    walk(value)
            elif isinstance(node, list):
                for value in node:
                    walk(value)
            elif isinstance(node, str):
                assert not re.search(r"\.txt\b|papers/|shared/", node), (path.name, node)
        walk(json.loads(path.read_text(encoding="utf-8")))
    assert lines >= 5


# ------------------------------------------------------------------------ the checks themselves

@pytest.mark.parametrize("line", [
    "The formulas are those of ALGORITHMS.md.",
    "copied by hand from papers/cw-jmlr-2012.txt",
    "see ../shared/ALGORITHMS.md",
    "read /work/shared/papers/README.md",
    "``shared/notes.txt``",
])
def test_outside_references_are_found(line):
    assert len(outside_references("first line\n" + line)) >= 1
    assert outside_references("first line\n" + line)[0].startswith("line 2: ")


@pytest.mark.parametrize("line", [
    'docs/algorithms.md "CW stdev" (NIPS 2008, eq. 14)',
    'APPENDIX = "https://jmlr.org/papers/volume5/lewis04a/"',
    "`dev.py` uses a `shared/corpora` folder beside the checkout",
    "JMLR 2012 Table 3, section 7.7",
])
def test_repository_references_pass(line):
    assert outside_references(line) == []


def test_citations_are_parsed_across_lists_and_line_breaks():
    text = ('formulas of docs/algorithms.md "CW var", "CW stdev", "AROW" and "SCW"; then\n'
            '(docs/algorithms.md\n        "Label probabilities"); written from docs/algorithms.md.\n'
            '[algorithms.md "Multi-class"](algorithms.md#multi-class)')
    assert cited_sections(text) == ["CW var", "CW stdev", "AROW", "SCW", "Label probabilities", "Multi-class"]
    assert slug("Multi-class exact") == "multi-class-exact" and slug("CW stdev") == "cw-stdev"
    assert headings("# Title\n```\n# not a heading\n```\n## CW var\ntext") == ["Title", "CW var"]
