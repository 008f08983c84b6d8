"""Where textcw keeps its caches: the corpus and feature caches and the plugin index.

``$TEXTCW_CACHE`` when set; otherwise the user's cache folder by the rules of platformdirs'
``user_cache_dir`` (``appauthor=False``) as they stood until 2026 (see below). The rule is ten
lines, written here rather than taken from platformdirs, for two reasons:

- platformdirs is not a dependency of textcw (only the documentation tools bring it), and every
  start reads this folder first (the plugin index is in it): importing platformdirs 4.14 costs
  13-15 ms there (``python -X importtime``, best and median of 5, on a shared machine at a load
  average of 17), for ten lines;
- its answer changes with its version: since its pull request 416 (February 2026; 4.14 is
  checked here) platformdirs follows ``$XDG_CACHE_HOME`` on macOS too, which earlier versions did
  not (its issue 269), so the same textcw would move its caches when an unrelated package
  upgrades platformdirs. The folder here stays ``~/Library/Caches/textcw`` on macOS, where
  ``$TEXTCW_CACHE`` is the way to choose another.

``tests/corpus/test_cache.py::test_location`` holds the rule to platformdirs' documented paths on
each system. Nothing here imports NumPy: a start that only reads the plugin index must not pay
for it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["CACHE_VAR", "NO_CACHE_VAR", "PLUGIN_INDEX_FOLDER", "location", "off_by_environment", "user_cache_dir"]

CACHE_VAR = "TEXTCW_CACHE"
PLUGIN_INDEX_FOLDER = "plugins"  # the plugin index's subfolder of the cache folder (textcw.plugins.index)
NO_CACHE_VAR = "TEXTCW_NO_CACHE"


def off_by_environment() -> bool:
    """Whether ``TEXTCW_NO_CACHE=1`` turns every cache off."""
    return os.environ.get(NO_CACHE_VAR, "") == "1"


def user_cache_dir() -> Path:
    """The user's cache folder for textcw, by the rules of platformdirs' ``user_cache_dir``
    (``appauthor=False``): ``%LOCALAPPDATA%\\textcw\\Cache`` on Windows, ``~/Library/Caches/textcw`` on
    macOS, else ``$XDG_CACHE_HOME/textcw`` (the XDG base-directory rule: only an absolute path
    counts) or ``~/.cache/textcw``."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA", "").strip()
        return (Path(base) if base else Path.home() / "AppData" / "Local") / "textcw" / "Cache"
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "textcw"
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache") / "textcw"


def location() -> tuple[Path, str]:
    """The cache folder and why it is that one (for ``textcw cache info``)."""
    env = os.environ.get(CACHE_VAR, "").strip()
    if env:
        return Path(env).expanduser(), f"${CACHE_VAR}"
    return user_cache_dir(), "the user cache folder ($XDG_CACHE_HOME/textcw or ~/.cache/textcw)" \
        if os.name == "posix" and sys.platform != "darwin" else "the user cache folder"
