"""The first-party plugins reach textcw through public names only, as a third-party plugin must.

Every module of both plugins is parsed (never imported) and each use of a textcw name whose
module path or name has a component starting with ``_`` is a failure: ``import textcw._jit``,
``from textcw.learners._kernels import f``, ``from textcw.x import _y``, ``textcw._y`` after
``import textcw``, and ``importlib.import_module("textcw._y")``. Dunder names such as
``textcw.__version__`` are public. Overriding a documented ``_``-named method of a textcw base
class is not an import and is not flagged (see ``docs/plugins.md``, "The one rule").
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGIN_SOURCES = [ROOT / "plugins" / "textcw-example" / "src",
                  ROOT / "plugins" / "textcw-pixels" / "textcw_pixels",
                  ROOT / "plugins" / "textcw-serve" / "src"]

# Modules that still use a private textcw name, each with why; the test of each must fail
# (strict xfail), so the entry has to go the moment the module is fixed.
KNOWN_PRIVATE: dict[str, str] = {}


def _private(dotted: str) -> bool:
    return any(part.startswith("_") and not (part.startswith("__") and part.endswith("__"))
               for part in dotted.split("."))


def private_textcw_uses(source: str, filename: str = "<source>") -> list[str]:
    """``"line: textcw.dotted.name"`` for every private textcw name ``source`` reaches."""
    tree = ast.parse(source, filename=filename)
    bound: dict[str, str] = {}  # local name -> the textcw module it stands for
    found = []

    def note(line: int, dotted: str) -> None:
        if dotted.split(".")[0] == "textcw" and _private(dotted):
            found.append(f"{line}: {dotted}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                note(node.lineno, alias.name)
                if alias.name.split(".")[0] == "textcw":
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["textcw"] = "textcw"
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                note(node.lineno, f"{node.module}.{alias.name}")
                if node.module.split(".")[0] == "textcw":
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            note(node.lineno, node.args[0].value)
    for node in ast.walk(tree):  # attribute chains on names bound to textcw modules
        if isinstance(node, ast.Attribute):
            parts, base = [node.attr], node.value
            while isinstance(base, ast.Attribute):
                parts.insert(0, base.attr)
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                note(node.lineno, ".".join([bound[base.id], *parts]))
    return sorted(set(found), key=lambda entry: int(entry.split(":")[0]))


def plugin_modules() -> list:
    modules = sorted(path for folder in PLUGIN_SOURCES for path in folder.rglob("*.py"))
    params = []
    for path in modules:
        key = path.relative_to(ROOT).as_posix()
        marks = ([pytest.mark.xfail(strict=True, raises=AssertionError, reason=KNOWN_PRIVATE[key])]
                 if key in KNOWN_PRIVATE else [])
        params.append(pytest.param(path, marks=marks, id=key))
    return params


def test_every_plugin_module_is_found():
    keys = {param.id for param in plugin_modules()}
    assert {"plugins/textcw-example/src/textcw_example/winnow.py",
            "plugins/textcw-pixels/textcw_pixels/usps.py"} <= keys and len(keys) >= 8
    assert set(KNOWN_PRIVATE) <= keys, "KNOWN_PRIVATE names a module that does not exist"


@pytest.mark.parametrize("path", plugin_modules())
def test_plugin_module_uses_public_textcw_names_only(path):
    uses = private_textcw_uses(path.read_text("utf-8"), str(path))
    assert not uses, (f"{path.relative_to(ROOT)} uses private textcw names (use the public API, "
                      "see docs/plugins.md):\n" + "\n".join(uses))


def test_each_way_of_reaching_a_private_name_is_caught():
    source = textwrap.dedent('''
        import importlib
        import textcw
        import textcw._jit
        import textcw.learners._kernels as kernels
        from textcw import _atomic, __version__, hookimpl
        from textcw.learners import _kernels
        from textcw.learners.base import _helper, OnlineLinearClassifier
        from textcw.errors import InputError
        from . import _local
        import numpy._core
        import textcw.learners.base as base
        textcw._PUBLIC
        base._private_attribute
        textcw.hookimpl, textcw.__version__, base.OnlineLinearClassifier
        importlib.import_module("textcw.corpus._hidden")
        importlib.import_module("textcw.corpus.base")

        class Mine(OnlineLinearClassifier):
            def _kernel_args(self):
                return self._state
    ''')
    assert private_textcw_uses(source) == [
        "4: textcw._jit",
        "5: textcw.learners._kernels",
        "6: textcw._atomic",
        "7: textcw.learners._kernels",
        "8: textcw.learners.base._helper",
        "13: textcw._PUBLIC",
        "14: textcw.learners.base._private_attribute",
        "16: textcw.corpus._hidden",
    ]
