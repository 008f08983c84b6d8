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

Within the rooms too, no two modules import each other, directly or through others
(:func:`test_no_import_cycle_between_modules`): every import counts, inside functions included,
and so does the ``__init__`` of each package an import enters from outside (importing
``textcw.corpus.tabular.spec`` from ``textcw.corpus.multilabel`` runs ``textcw/corpus/tabular/__init__``
and whatever it imports).
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
    ("textcw._version", "textcw.errors", "textcw._jit", "textcw._jit_numba", "textcw._compile_notice", "textcw._limits",
     "textcw._compare", "textcw._deferred", "textcw._sklearn_compat"),
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
    ("textcw.evaluation", "textcw.scale", "textcw.explain", "textcw.model_words", "textcw.suggest",
     "textcw.multilabel_run"),
    # Model files and exports.
    ("textcw.signing", "textcw.model_manifest", "textcw.persist", "textcw.model_card", "textcw.portable_format",
     "textcw.portable_export", "textcw.portable_rebuild", "textcw.portable_multilabel", "textcw.portable"),
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
    "textcw.corpus.tabular": [("limits", "spec"), ("files", "split", "parquet", "multilabel"), ("readers",),
                              ("scan",), ("index",), ("corpus",)],
    "textcw.evaluation.designs": [("options",), ("splits", "tune", "timing", "curve", "online", "combination", "active")],
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


def imported_modules(module: str, path: Path, tree: ast.AST | None = None) -> set[str]:
    """The textcw modules ``module`` imports anywhere in its file (functions included), or in
    ``tree`` (a part of it) when given."""
    is_package = path.name == "__init__.py"
    found = set()
    for node in ast.walk(tree if tree is not None else ast.parse(path.read_text(encoding="utf-8"), str(path))):
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


# Known cycles between modules, each in code its owners are rewriting: {the modules of the cycle:
# why it is still there}. Empty this mapping; never add to it to hide a new cycle: break that by
# moving what both modules need to a module that imports neither.
KNOWN_MODULE_CYCLES: dict[frozenset[str], str] = {}


def _package_edges(module: str, path: Path, target: str) -> set[str]:
    """The packages whose ``__init__`` importing ``target`` from ``module`` runs: each package
    above ``target`` that ``module`` is not itself inside (its own are being imported already)."""
    own = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    parts = target.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts))
            if ".".join(parts[:i]) in MODULES and own[:i] != parts[:i]}


def _module_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, target in EDGES:
        graph[module].add(target)
        graph[module] |= _package_edges(module, MODULES[module], target) - {module}
    return graph


def cycle_path(graph: dict[str, set[str]], members: frozenset[str]) -> list[str]:
    """One cycle through the strongly connected ``members`` of ``graph``, as ``[a, b, ..., a]``
    (breadth first from the first member, so the shortest through it)."""
    start = min(members)
    came_from: dict[str, str] = {}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [*reversed(path), start]
            if nxt in members and nxt not in came_from:
                came_from[nxt] = node
                queue.append(nxt)
    raise AssertionError(f"{sorted(members)} is not a cycle")


def test_the_module_graph_sees_packages_and_cycles():
    # a package's __init__ counts when an import enters the package from outside, not from inside
    assert _package_edges("textcw.corpus.multilabel", ROOT / "corpus" / "multilabel.py",
                          "textcw.corpus.tabular.spec") == {"textcw.corpus.tabular"}
    assert _package_edges("textcw.corpus.tabular.index", ROOT / "corpus" / "tabular" / "index.py",
                          "textcw.corpus.tabular.spec") == set()
    graph = {"a": {"b"}, "b": {"c", "d"}, "c": {"a"}, "d": set()}
    (found,) = cycles(graph)
    assert found == frozenset("abc") and cycle_path(graph, found) == ["a", "b", "c", "a"]
    # the circles this test was written for are gone, and would be seen again: the scanner importing
    # a part of the tabular package runs the package (whose TableCorpus imports the scanner's
    # driver), and the contract's deferred import of the engine is an edge like any other
    assert _package_edges("textcw.corpus._table_scan", ROOT / "corpus" / "_table_scan.py",
                          "textcw.corpus.tabular.limits") == {"textcw.corpus.tabular"}
    assert "textcw.evaluation.suite" in _module_graph()["textcw.evaluation.contract"]


def test_no_import_cycle_between_modules():
    graph = _module_graph()
    new = [cycle for cycle in cycles(graph) if not any(cycle <= known for known in KNOWN_MODULE_CYCLES)]
    assert not new, "import cycles between modules (imports inside functions and packages' __init__ included): " + \
        "; ".join(" -> ".join(cycle_path(graph, cycle)) for cycle in new) + \
        "; move what both need into a module that imports neither"


def test_the_known_module_cycles_still_happen():
    found = cycles(_module_graph())
    stale = [sorted(known) for known in KNOWN_MODULE_CYCLES if not any(cycle <= known for cycle in found)]
    assert not stale, f"fixed cycles still in KNOWN_MODULE_CYCLES of tests/test_layers.py: {stale}"


def test_the_evaluation_contract_loads_no_engine():
    """What a plugin imports to write a metric, design or comparison
    (:mod:`textcw.evaluation.contract`) imports, at module level and through what those import,
    only the shared leaves of the evaluation room: never the engine that runs designs, which
    imports the contract's users in turn."""
    def module_level(module: str) -> set[str]:
        tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
        found = set()
        for node in tree.body:  # top-level statements only: not functions, not ``if TYPE_CHECKING``
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found |= imported_modules(module, MODULES[module], node)
        return found

    seen, todo = set(), ["textcw.evaluation.contract"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += [m for m in module_level(module) if m.startswith("textcw.evaluation.")]
    assert sorted(seen) == ["textcw.evaluation.contract", "textcw.evaluation.folds", "textcw.evaluation.report",
                            "textcw.evaluation.specs"]


def test_the_core_imports_no_plugin():
    """Plugins depend on textcw, never the reverse: the core reaches a plugin's code only through
    the entry points the plugin declares (the textcw hook group; textcw.client asks the
    provide_client hook)."""
    plugins = {"textcw_serve", "textcw_example", "textcw_pixels"}
    found = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{module} imports {name}" for name in names if name.split(".")[0] in plugins]
    assert found == []
