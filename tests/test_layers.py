"""The package's rooms import downward only, and no two rooms import each other.

Every module of ``textcw`` is parsed with :mod:`ast` (nothing is imported) and each of its
``import`` statements, at module level or inside a function, is resolved to a textcw module.
:data:`LAYERS` lists the rooms from the bottom up; a module may import its own room, any room on
its own layer and any room below. Importing a room above is an *upward import*: the lower room
then cannot be understood, tested or reused without the upper one, and lazy imports inside
functions hide the dependency without removing it. Separately, the graph of rooms must have no
cycle (two rooms on one layer importing each other are a cycle even though neither import is
upward).

A new module must be placed in the table: a module that no entry covers fails
:func:`test_every_module_has_a_layer`.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "textcw"

# The rooms, bottom first. A module belongs to the longest entry that is a prefix of its dotted
# name ("textcw.learners._kernels.common" -> "textcw.learners._kernels"); the package root
# ``textcw`` (its lazy public surface) is the top, so nothing inside imports from it.
LAYERS: list[tuple[str, ...]] = [
    # Foundations: depend on nothing in textcw but the errors.
    ("textcw._version", "textcw.errors", "textcw._jit", "textcw._compile_notice", "textcw._limits", "textcw._compare",
     "textcw._deferred", "textcw._sklearn_compat"),
    # Low-level services: the kernel input contract, atomic writes, reading untrusted files, the
    # registry tables and the hook specifications.
    ("textcw._csr", "textcw._csr_kernel", "textcw.atomic", "textcw.untrusted", "textcw.trust", "textcw.cache_location",
     "textcw.registry", "textcw.hookspecs"),
    # numba kernels, then the learners around them.
    ("textcw.learners._kernels",),
    ("textcw.learners", "textcw.kernels"),
    # Featurizers, then corpora (the corpus cache stores featurized matrices).
    ("textcw.features",),
    ("textcw.corpus",),
    # The classification metrics that pipeline.train and the evaluators report.
    ("textcw.metrics",),
    # The plugin manager, then the library functions that build, train and evaluate through it.
    ("textcw.plugins",),
    ("textcw.train_result",),
    ("textcw.pipeline",),
    # What is built on the library functions: evaluation, scale-out training, explanations and
    # what to label next.
    ("textcw.evaluation", "textcw.scale", "textcw.explain", "textcw.model_words", "textcw.suggest"),
    # Model files and exports.
    ("textcw.signing", "textcw.model_manifest", "textcw.persist", "textcw.model_card", "textcw.portable_format",
     "textcw.portable_export", "textcw.portable_rebuild", "textcw.portable"),
    # The command line.
    ("textcw.cli", "textcw.__main__", "textcw.client"),
    # The built-in registrations, the plugin authors' test kit, and the package's public surface.
    ("textcw.default_plugins", "textcw.testing", "textcw"),
]

# Known upward imports (importer module, imported module), each being removed by the room's
# owner. Empty this list; never add to it: a new upward import is fixed by moving code down.
KNOWN_UPWARD: set[tuple[str, str]] = set()

# Known cycles between rooms, each being removed by its owners: a set of rooms within which
# cycles still occur. A cycle passes when all its rooms are in one entry (so the entry may only
# shrink as its imports are fixed); an entry no cycle needs any more fails as stale.
KNOWN_CYCLES: set[frozenset[str]] = set()

_LAYER_OF = {room: number for number, rooms in enumerate(LAYERS) for room in rooms}

# The parts of a package that holds one concept in several modules, bottom first: a part imports
# only parts on its own line or below, and never the package itself (its ``__init__``, which
# imports the public names from the parts, is above them all). Every module of the package is
# listed, so that a new part is placed too.
PART_LAYERS: dict[str, list[tuple[str, ...]]] = {
    "textcw.corpus.tabular": [("limits", "spec", "labels"), ("files", "split", "parquet"), ("readers",), ("index",),
                              ("corpus",)],
    "textcw.evaluation.designs": [("options",), ("splits", "tune", "timing", "curve", "online", "combination")],
}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def room_of(module: str) -> str | None:
    """The longest :data:`LAYERS` entry that ``module`` is, or is inside."""
    best = None
    for room in _LAYER_OF:
        if (module == room or module.startswith(room + ".")) and (best is None or len(room) > len(best)):
            best = room
    return best


def imported_modules(module: str, path: Path) -> set[str]:
    """The textcw modules ``module`` imports anywhere in its file (functions included)."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing package
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            for alias in node.names:
                # "from textcw import hookspecs" imports a module; "from textcw import __version__"
                # a name of the package
                candidate = f"{base}.{alias.name}"
                found.add(candidate if candidate in MODULES else base)
    return {name for name in found if name == "textcw" or name.startswith("textcw.")}


def _edges() -> list[tuple[str, str]]:
    return sorted((module, target) for module, path in MODULES.items()
                  for target in imported_modules(module, path) if target != module)


EDGES = _edges()


def test_the_walk_sees_the_package():
    # the test is only as good as its view of the code: the known rooms and edges must be there
    assert "textcw.learners._kernels.common" in MODULES and "textcw.cli" in MODULES
    assert ("textcw.learners.base", "textcw._csr") in EDGES
    assert room_of("textcw.learners._kernels.common") == "textcw.learners._kernels"
    assert room_of("textcw.portable_format") == "textcw.portable_format"
    assert room_of("textcw") == "textcw"


def test_every_module_has_a_layer():
    missing = sorted(module for module in MODULES if room_of(module) is None)
    assert not missing, f"modules outside the layer table of tests/test_layers.py: {missing}; add each to LAYERS"


def _upward() -> set[tuple[str, str]]:
    found = set()
    for module, target in EDGES:
        source_room, target_room = room_of(module), room_of(target)
        if source_room and target_room and _LAYER_OF[target_room] > _LAYER_OF[source_room]:
            found.add((module, target))
    return found


def test_no_module_imports_upward():
    new = sorted(_upward() - KNOWN_UPWARD)
    assert not new, "upward imports (importer, imported): " + "; ".join(
        f"{a} ({room_of(a)}, layer {_LAYER_OF[room_of(a)]}) imports {b} ({room_of(b)}, layer "
        f"{_LAYER_OF[room_of(b)]})" for a, b in new) + "; move the shared code down instead"


@pytest.mark.parametrize("package", sorted(PART_LAYERS))
def test_the_parts_of_a_package_import_downward(package):
    level = {f"{package}.{part}": number for number, parts in enumerate(PART_LAYERS[package]) for part in parts}
    found = sorted(module for module in MODULES if module.startswith(package + "."))
    assert found == sorted(level), f"{package} has the modules {found}; PART_LAYERS lists {sorted(level)}"
    upward = [(a, b) for a, b in EDGES if a in level and (b == package or b in level and level[b] > level[a])]
    assert not upward, f"{package}: parts importing upward (importer, imported): {upward}"


def _room_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, target in EDGES:
        a, b = room_of(module), room_of(target)
        if a and b and a != b:
            graph[a].add(b)
    return graph


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycle_finder_finds_cycles_and_only_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == {frozenset("abc")}
    assert cycles({"a": {"b"}, "b": {"c"}}) == set()


def test_no_import_cycle_between_rooms():
    new = [cycle for cycle in cycles(_room_graph()) if not any(cycle <= known for known in KNOWN_CYCLES)]
    assert not new, "import cycles between rooms: " + "; ".join(
        ", ".join(f"{m} -> {t}" for m, t in EDGES
                  if room_of(m) in cycle and room_of(t) in cycle and room_of(m) != room_of(t))
        for cycle in new) + "; move the shared code down"


def test_the_allow_lists_hold_only_what_still_happens():
    # an entry whose violation is gone must leave the list, so that it cannot come back unseen
    stale_upward = sorted(KNOWN_UPWARD - _upward())
    assert not stale_upward, f"fixed upward imports still in KNOWN_UPWARD of tests/test_layers.py: {stale_upward}"
    found = cycles(_room_graph())
    stale_cycles = [sorted(known) for known in KNOWN_CYCLES if not any(cycle <= known for cycle in found)]
    assert not stale_cycles, f"fixed cycles still in KNOWN_CYCLES of tests/test_layers.py: {stale_cycles}"


def test_the_core_imports_no_plugin():
    """Plugins depend on textcw, never the reverse: the core reaches a plugin's code only through
    the entry points the plugin declares (textcw.client, the textcw hook group)."""
    plugins = {"textcw_serve", "textcw_example", "textcw_pixels"}
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{module} imports {name}" for name in names if name.split(".")[0] in plugins]
    assert found == []
