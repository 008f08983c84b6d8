"""Fixtures of the plugin's tests (the plugin is tested on its own, like any third-party one).

Imported by name, not from a ``conftest.py``, so that running these tests together with
textcw's own never puts two modules named ``conftest`` in one process.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def data_home() -> Path:
    """The folder holding ``usps/zip.train.gz`` (``$TEXTCW_DATA``); absence fails, never skips."""
    env = os.environ.get("TEXTCW_DATA")
    assert env, "TEXTCW_DATA is not set; point it at the corpora folder"
    path = Path(env)
    assert (path / "usps").is_dir(), f"TEXTCW_DATA={env} has no usps/ folder"
    return path


@pytest.fixture
def offline(monkeypatch):
    """Never download during a test."""
    monkeypatch.setenv("TEXTCW_OFFLINE", "1")
