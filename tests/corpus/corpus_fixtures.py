"""Fixtures of the corpus tests: no downloads, and data homes built from the synthetic fixtures.

Test modules import them by name (``from corpus_fixtures import offline``) rather than through a
``conftest.py``, whose module name would shadow ``tests/conftest.py`` for modules that import
helpers from it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "corpora"


@pytest.fixture
def offline(monkeypatch):
    """Never download during a test: a missing real file fails at once with its message."""
    monkeypatch.setenv("TEXTCW_OFFLINE", "1")


@pytest.fixture
def fixture_home(tmp_path, monkeypatch):
    """A data home holding copies of ``corpora/<name>/fixture/*`` as ``<home>/<name>/*``."""

    def make(*names: str) -> Path:
        home = tmp_path / "data-home"
        for name in names:
            shutil.copytree(FIXTURES / name / "fixture", home / name)
        monkeypatch.setenv("TEXTCW_DATA", str(home))
        monkeypatch.setenv("TEXTCW_OFFLINE", "1")
        return home

    return make
