"""The command-line reference page (docs/reference/cli.md) is generated from the commands.

``mkdocs_hooks.cli_reference`` writes every built-in command's usage, help and options where
the page has its marker line; these tests check that nothing a command offers is left out and
that the page keeps its marker.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

pytest.importorskip("griffe")
import typer  # noqa: E402

from textcw.cli import HELP_OPTIONS, build_app, build_command  # noqa: E402
from textcw.plugins import get_plugin_manager  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _hooks():
    spec = importlib.util.spec_from_file_location("textcw_mkdocs_hooks_cli", ROOT / "mkdocs_hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _hooks()


@pytest.fixture(scope="module")
def page() -> str:
    return hooks.cli_reference()


@pytest.fixture(scope="module")
def root():
    return build_command(build_app(get_plugin_manager(entry_points=False)))


def test_every_built_in_command_has_a_section_with_its_usage(page, root):
    headings = re.findall(r"^#+ (textcw(?: [\w-]+)*)", page, re.MULTILINE)
    assert headings == ["textcw", *(f"textcw {name}" for name in root.commands)]
    assert "\n```text\ntextcw export [OPTIONS] MODEL OUT\n```\n" in page
    assert "\n```text\ntextcw predict [OPTIONS] [MODEL] [FILES...]\n```\n" in page
    assert "\n```text\ntextcw [OPTIONS] COMMAND [ARGS]...\n```\n" in page


def test_every_option_and_argument_is_listed_with_its_help(page, root):
    for name, command in root.commands.items():
        ctx = typer.Context(command, info_name=name, help_option_names=HELP_OPTIONS)
        section = page.split(f" textcw {name}\n", 1)[1].split("\n#", 1)[0]
        for param in command.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            shown = param.name.upper() if param.param_type_name == "argument" else record[0]
            row = f"| `{' '.join(shown.split())}` | {hooks._cell(record[1])} |"
            assert row in section.splitlines(), (name, row)


def test_a_pipe_is_escaped_outside_code_only():
    assert hooks._cell("a | b\n  c") == "a \\| b c"
    assert hooks._cell("--probability calibrated|raw", code=True) == "`--probability calibrated|raw`"


def test_the_page_keeps_its_marker():
    assert hooks.CLI_MARKER in (ROOT / "docs" / hooks.CLI_PAGE).read_text(encoding="utf-8")
