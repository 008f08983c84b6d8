"""The API reference shows every parameter's real default.

The reference pages render the ``Parameters`` sections of the docstrings with a "Default" column
that griffe fills from the docstring (``default 0.9``) or, when the docstring states none, from
the signature. A combined entry (``eta, a, covariance`` over "As for ...") used to show its first
name's default on every row (SCW1's ``a`` as 0.9, CWVar's ``covariance`` as 1.0);
``mkdocs_hooks.CombinedParameters`` writes such entries one per name. These tests load textcw
as the site does (mkdocs.yml's griffe extensions and docstring options) and compare the default
shown for each documented parameter of every built-in learner and featurizer with
``get_params()`` of a default instance of its class.
"""

from __future__ import annotations

import ast
import inspect
from functools import cache
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")
yaml = pytest.importorskip("yaml")

from textcw.plugins import current_registries  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def site_options() -> dict:
    """The mkdocstrings options of mkdocs.yml's Python handler."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    for plugin in config["plugins"]:
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            return plugin["mkdocstrings"]["handlers"]["python"]["options"]
    raise AssertionError("mkdocs.yml has no mkdocstrings plugin")


@cache
def loaded():
    """textcw as the site's griffe loads it: the same extensions and docstring options."""
    options = site_options()
    extensions = griffe.load_extensions(*[str(ROOT / ext) if isinstance(ext, str) else ext
                                          for ext in options.get("extensions", [])])
    loader = griffe.GriffeLoader(extensions=extensions, search_paths=[str(ROOT)],
                                 docstring_parser=griffe.Parser(options["docstring_style"]),
                                 docstring_options=options.get("docstring_options", {}))
    loader.load("textcw")
    loader.resolve_aliases(implicit=False)
    return loader.modules_collection


def documented_classes() -> dict[str, type]:
    """``{registered name: class}`` of textcw's own learners and featurizers (a featurizer's
    factory returns an instance: its class is what the reference documents)."""
    classes = {}
    registries = current_registries()
    for kind in ("learners", "featurizers"):
        for entry in registries[kind]:
            factory = entry.factory
            cls = factory if inspect.isclass(factory) else type(factory())
            if cls.__module__.startswith("textcw."):
                classes[f"{kind[:-1]} {entry.name}"] = cls
    return classes


def rendered_defaults(cls: type) -> dict[str, str]:
    """``{parameter: default as the reference shows it}`` for the parameters documented in the
    class's docstring (rows without a default left out)."""
    obj = loaded()[f"{cls.__module__}.{cls.__qualname__}"]
    shown = {}
    for section in obj.docstring.parsed if obj.docstring is not None else []:
        if section.kind is griffe.DocstringSectionKind.parameters:
            for parameter in section.value:
                if parameter.value is not None:
                    shown[parameter.name] = str(parameter.value)
    return shown


def reference_modules() -> set[str]:
    """The modules and objects the reference pages render (their ``::: path`` lines)."""
    paths = set()
    for page in (ROOT / "docs" / "reference").glob("*.md"):
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.startswith("::: "):
                paths.add(line[4:].strip())
    return paths


CLASSES = documented_classes()


def test_every_learner_and_featurizer_is_on_a_reference_page():
    rendered = reference_modules()
    missing = [name for name, cls in CLASSES.items()
               if cls.__module__ not in rendered and f"{cls.__module__}.{cls.__qualname__}" not in rendered]
    assert not missing, f"not on any docs/reference page: {missing}"


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_rendered_defaults_are_the_real_ones(name):
    cls = CLASSES[name]
    real = cls().get_params(deep=False)
    wrong = []
    for parameter, text in rendered_defaults(cls).items():
        if parameter not in real:
            continue
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text  # a name or expression: shown as written, compared as text
        if value != real[parameter] or type(value) is not type(real[parameter]):
            wrong.append(f"{parameter} shown as {text}, really {real[parameter]!r}")
    assert not wrong, f"{cls.__qualname__}: " + "; ".join(wrong)


def test_the_combined_entries_of_the_issue():
    """SCW1 documents ``eta, a, covariance, ...`` together; CWVar ``a, covariance, ...``."""
    from textcw.learners.cw_var import CWVar
    from textcw.learners.scw import SCW1

    assert rendered_defaults(SCW1)["a"] == "1.0"
    assert rendered_defaults(SCW1)["eta"] == "0.9"
    assert ast.literal_eval(rendered_defaults(CWVar)["covariance"]) == "diag-kl"
    assert rendered_defaults(CWVar)["fit_intercept"] == "False"


def test_many_defaults_are_compared():
    """The comparison is not vacuous: the Gaussian learners alone document dozens of rows."""
    assert sum(len(rendered_defaults(cls)) for cls in CLASSES.values()) >= 100


def _hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("textcw_mkdocs_hooks_defaults", ROOT / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_split_parameters_writes_one_entry_per_name():
    doc = ("Summary.\n\nParameters\n----------\nC : float\n    Aggressiveness.\n"
           "eta, a : float\n    As for X.\n\n    More.\n\nNotes\n-----\nx, y : not a parameter\n")
    assert _hooks().split_parameters(doc) == (
        "Summary.\n\nParameters\n----------\nC : float\n    Aggressiveness.\n"
        "eta : float\n    As for X.\n\n    More.\na : float\n    As for X.\n\n    More.\n\n"
        "Notes\n-----\nx, y : not a parameter\n")
