"""The API reference renders the docstrings' Sphinx roles as cross-references, never as raw text.

``mkdocs_hooks.SphinxRoles`` rewrites each role into an optional autorefs reference to the
object's canonical path (rendered as a link, or as code when the target is not on the site), and
the strict build fails when a built reference page still shows a raw role
(``mkdocs_hooks.raw_roles``, checked in ``on_post_build``). These tests cover the rewriting, the
resolution of targets against textcw itself and the build-time check, without a full site build.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parent.parent


def _hooks():
    spec = importlib.util.spec_from_file_location("textcw_mkdocs_hooks", ROOT / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


def _ref(identifier: str, title: str) -> str:
    return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'


def _resolve(target: str) -> str:
    return "pkg." + target.lstrip(".")


@pytest.mark.parametrize(("text", "expected"), [
    (":func:`load`", _ref("pkg.load", "load")),
    (":class:`~textcw.errors.DataError`", _ref("pkg.textcw.errors.DataError", "DataError")),
    (":mod:`.gaussian_exact`", _ref("pkg.gaussian_exact", "gaussian_exact")),
    (":py:meth:`Dataset.from_columns`", _ref("pkg.Dataset.from_columns", "Dataset.from_columns")),
    (":func:`train_stream <textcw.scale.training.train_stream>`",
     _ref("pkg.textcw.scale.training.train_stream", "train_stream")),
    (":func:`!not_linked`", "<code>not_linked</code>"),
    (":data:`A<B`", _ref("pkg.A<B", "A&lt;B").replace('"pkg.A<B"', '"pkg.A&lt;B"')),
    ("see :exc:`E` and :attr:`x.y`.", f"see {_ref('pkg.E', 'E')} and {_ref('pkg.x.y', 'x.y')}."),
])
def test_roles_become_optional_autorefs(text, expected):
    assert hooks.convert_roles(text, _resolve) == expected


@pytest.mark.parametrize("text", [
    "written as ``:func:`name``` in a literal",
    "```python\nx = ':func:`name`'\n```",
    "no role: a:b and `code`",
    ":unknownrole:`x` is not a Python role",
])
def test_literals_fences_and_other_text_are_left_alone(text):
    assert hooks.convert_roles(text, _resolve) == text


@pytest.fixture(scope="module")
def package():
    extensions = griffe.load_extensions(hooks.CombinedAttributes, hooks.SphinxRoles)
    return griffe.load("textcw", search_paths=[str(ROOT)], extensions=extensions,
                       docstring_parser="numpy")


@pytest.mark.parametrize(("where", "target", "identifier"), [
    # an import of the docstring's module
    ("corpus.amazon", "DataError", "textcw.errors.DataError"),
    # a member of the docstring's class, from the class
    ("corpus.base.Dataset", "from_columns", "textcw.corpus.base.Dataset.from_columns"),
    # relative to the current package, as Sphinx reads a leading dot
    ("learners._kernels.gaussian_diag", ".gaussian_exact", "textcw.learners._kernels.gaussian_exact"),
    ("learners._kernels.gaussian_diag", ".common.move_mean", "textcw.learners._kernels.common.move_mean"),
    # a name the package imports on first use (textcw/__init__.py's _PUBLIC table)
    ("", "textcw.make_pipeline", "textcw.pipeline.make_pipeline"),
    ("", "textcw.hookimpl", "textcw.hookspecs.hookimpl"),
    # a name the module never imports: the one loaded object whose path ends with it
    ("testing.plugin_checks", "check_learner", "textcw.testing.learner_checks.check_learner"),
    # an absolute path, and a ~ or () the role may carry
    ("errors", "textcw.corpus.base.Dataset()", "textcw.corpus.base.Dataset"),
    # nothing of that name: the target as written (the reference renders as code)
    ("errors", "numpy.ndarray", "numpy.ndarray"),
    ("errors", "no_such_name", "no_such_name"),
])
def test_targets_resolve_to_canonical_paths(package, where, target, identifier):
    obj = package[where] if where else package
    assert hooks.resolve_role_target(obj, target) == identifier


_ANY_ROLE = re.compile(r":(?:py:)?[a-z]+:`")
_LITERAL = re.compile(r"``.+?``", re.DOTALL)


def test_no_docstring_of_textcw_keeps_a_raw_role(package):
    """Every role of every docstring is read (a misspelt role would stay raw and is listed)."""
    raw = []

    def walk(node):
        if node.docstring is not None:
            for line in _LITERAL.sub("", node.docstring.value).splitlines():
                if _ANY_ROLE.search(line):
                    raw.append(f"{node.path}: {line.strip()}")
        for member in node.members.values():
            if not member.is_alias:
                walk(member)

    walk(package)
    assert raw == []


def test_the_extension_rewrites_a_docstring_in_place(package):
    value = package["corpus.sampling.balanced_sample"].docstring.value
    assert value.endswith("Raises " + _ref("textcw.errors.DataError", "DataError")
                          + " when a class has fewer documents than its share.")


def test_the_build_check_counts_raw_roles_per_reference_page(tmp_path):
    reference = tmp_path / "reference"
    reference.mkdir()
    (reference / "clean.html").write_text('<a class="autorefs" href="x.html#a"><code>a</code></a>')
    (reference / "raw.html").write_text("uses :func:<code>load</code> and :py:class:<code>A</code>")
    (tmp_path / "guide.html").write_text(":func:<code>outside the reference</code>")
    assert hooks.raw_roles(tmp_path) == {"reference/raw.html": 2}
