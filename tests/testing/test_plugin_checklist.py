"""The one-page plugin checklist (docs/guide/plugin-checklist.md) stays true to the code: it lists
every tuning unit, names errors and warnings that exist, and is on the site and linked from the
tutorial."""

from __future__ import annotations

import re
from pathlib import Path

from textcw.learners import protocol
from textcw.learners.selftune import UNITS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "guide" / "plugin-checklist.md"


def test_the_checklist_lists_every_tuning_unit():
    text = PAGE.read_text(encoding="utf-8")
    listed = re.findall(r"^\| `([a-z-]+)` \| `", text, re.M)
    assert listed == list(UNITS)


def test_the_checklist_names_what_exists_and_is_on_the_site():
    text = PAGE.read_text(encoding="utf-8")
    for warning in re.findall(r"`(\w+Warning)`", text):
        assert issubclass(getattr(protocol, warning), protocol.LearnerContractWarning), warning
    assert "`resolved(name)`" in text and "learns_from_mistakes" in text
    assert "guide/plugin-checklist.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "(guide/plugin-checklist.md)" in (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
