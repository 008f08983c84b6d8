"""What the corpus cache (:mod:`textcw.corpus.cache`) holds, and emptying it: the work of
``textcw cache info`` and ``textcw cache clear`` in a cache folder already checked to be the
user's own.

Clearing deletes only regular files inside the cache folder, each relative to its open folder
(:func:`textcw.corpus.cache_limit.remove_entry`): a ``corpus/`` or ``features/`` subfolder that is
a symbolic link (to anywhere) is skipped with a warning, and nothing in its target is touched.
"""

from __future__ import annotations

import contextlib
import logging
import os
from pathlib import Path

from textcw.cache_location import PLUGIN_INDEX_FOLDER
from textcw.corpus import cache_limit

__all__ = ["clear_folder", "list_entries"]

log = logging.getLogger("textcw")


def list_entries(folder: Path, kinds: tuple[str, ...]) -> list[dict]:
    """Every entry in the ``kinds`` subfolders of ``folder``: ``{"kind", "name", "path", "bytes"}``
    (regular ``.npz`` files in subfolders that are not links), by kind, then file name."""
    out = []
    for kind in kinds:
        for _, name, size in sorted(cache_limit.scan_folder(folder, kind, (".npz",)), key=lambda e: e[1]):
            out.append({"kind": kind, "name": name.rsplit("-", 1)[0], "path": str(folder / kind / name),
                        "bytes": size})
    return out


def clear_folder(folder: Path, kinds: tuple[str, ...], files: tuple[str, ...] = ()) -> tuple[int, int]:
    """Delete the entries of the ``kinds`` subfolders (and unfinished ``.tmp`` writes), the plugin
    index and the ``files`` at the top of ``folder``; ``(files, bytes)`` removed."""
    removed = size = 0
    for name in files:
        path = folder / name
        with contextlib.suppress(OSError):
            st = os.lstat(path)
            if os.path.isfile(path) and not os.path.islink(path):
                path.unlink()
                removed, size = removed + 1, size + st.st_size
    # the plugin index (textcw.plugins.index) lives here too; it is rebuilt at the next start
    for _, name, nbytes in cache_limit.scan_folder(folder, PLUGIN_INDEX_FOLDER, (".json", ".tmp")):
        if cache_limit.remove_entry(folder, PLUGIN_INDEX_FOLDER, name):
            removed, size = removed + 1, size + nbytes
    with contextlib.suppress(OSError):
        (folder / PLUGIN_INDEX_FOLDER).rmdir()  # only when empty; a link is not a folder to rmdir
    for kind in kinds:
        sub = folder / kind
        if os.path.islink(sub):
            log.warning("not clearing %s: it is a symbolic link (to %s), and textcw deletes only inside "
                        "its cache folder; remove the link yourself", sub, os.readlink(sub))
            continue
        for _, name, nbytes in cache_limit.scan_folder(folder, kind, (".npz", ".tmp")):
            if cache_limit.remove_entry(folder, kind, name):
                removed, size = removed + 1, size + nbytes
        with contextlib.suppress(OSError):
            sub.rmdir()  # not a link (checked above); only when empty
    return removed, size
