"""A third-party plugin may use only textcw's public modules and names."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def textcw_imports(path: Path):
    """``(line, "module.name")`` for every import from the textcw package in ``path``."""
    for node in ast.walk(ast.parse(path.read_text("utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "textcw":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "textcw":
                for alias in node.names:
                    yield node.lineno, f"{node.module}.{alias.name}"


def test_plugin_imports_nothing_private_from_textcw():
    files = sorted((ROOT / "src").rglob("*.py")) + sorted((ROOT / "tests").rglob("*.py"))
    assert len(files) >= 8
    private = [f"{path.relative_to(ROOT)}:{line}: {name}"
               for path in files for line, name in textcw_imports(path)
               if any(part.startswith("_") for part in name.split("."))]
    assert not private, "private textcw imports:\n" + "\n".join(private)
