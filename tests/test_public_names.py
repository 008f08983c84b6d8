"""Every name a module declares public (``__all__``) can be imported from it, and every public
subpackage declares its public names.

The modules are found by parsing the package (:mod:`ast`), so a module whose ``__all__`` lists a
name it no longer defines fails here, by name, instead of at a user's ``from ... import``.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "textcw"

# Public subpackages whose __init__ does not declare __all__ yet (each owner adds it, then removes
# the entry here): an entry that has one fails as stale.
KNOWN_WITHOUT_ALL: set[str] = set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _declared_all(path: Path) -> list | None:
    """The literal ``__all__`` of the module at ``path``, or ``None`` if it declares none."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            # a list of string literals, or a list built from them (the root's ["__version__", *sorted(...)])
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return []
    return None


DECLARING = sorted(_module_name(p) for p in ROOT.rglob("*.py") if _declared_all(p) is not None)
PUBLIC_PACKAGES = sorted(_module_name(p) for p in ROOT.rglob("__init__.py")
                         if not any(part.startswith("_") for part in _module_name(p).split(".")))


def test_the_walk_finds_the_declarations():
    assert {"textcw", "textcw.corpus", "textcw.features", "textcw.learners", "textcw.scale",
            "textcw.testing", "textcw.untrusted", "textcw._sklearn_compat"} <= set(DECLARING)


@pytest.mark.parametrize("module_name", DECLARING)
def test_every_name_in_all_imports(module_name):
    module = importlib.import_module(module_name)
    names = module.__all__
    assert isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names), module_name
    assert len(set(names)) == len(names), f"{module_name}.__all__ lists a name twice"
    missing = []
    for name in names:
        if hasattr(module, name):
            continue
        try:  # a public submodule, imported on first use
            importlib.import_module(f"{module_name}.{name}")
        except ModuleNotFoundError:
            missing.append(name)
    assert not missing, f"{module_name}.__all__ lists {missing}, which it does not define"
    private = [n for n in names if n.startswith("_") and n != "__version__"]
    assert not private, f"{module_name}.__all__ lists the private names {private}"


@pytest.mark.parametrize("package", PUBLIC_PACKAGES)
def test_every_public_subpackage_declares_all(package):
    declared = _declared_all(ROOT.parent.joinpath(*package.split("."), "__init__.py")) is not None
    if package in KNOWN_WITHOUT_ALL:
        assert not declared, f"{package} declares __all__ now: remove it from KNOWN_WITHOUT_ALL"
    else:
        assert declared, f"{package}/__init__.py declares no __all__; list its public names"


def test_the_package_root_stays_lazy():
    # `import textcw` (and the command line's help) must not pay for scikit-learn, scipy or numba;
    # its public names are still all there, imported on first use.
    code = ("import sys, textcw\n"
            "heavy = sorted(m for m in ('sklearn', 'scipy', 'numba') if m in sys.modules)\n"
            "names = [n for n in textcw.__all__ if n not in vars(textcw)]\n"
            "print(heavy, len(names) == len(textcw.__all__) - 1)\n"
            "from textcw import *\n"
            "print(all(callable(globals()[n]) for n in textcw.__all__ if n != '__version__'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split("\n")[:2] == ["[] True", "True"]
