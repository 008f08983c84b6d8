"""The plugin index: which installed plugin provides which names and commands, kept between runs
so that a start imports no plugin it does not use.

Why: importing every installed plugin at every start cost each command about half a second, for
names most commands never ask for. The index records, per entry point of the group ``textcw``,
the names each plugin registers (``{kind: [names]}``) and its commands with their help; with it,
:mod:`textcw.plugins.lazy` imports a plugin only when one of its names or commands is asked for.

Keyed by the environment
------------------------
:func:`environment_key` is a sha256 of textcw's version, the Python version and every installed
distribution: the ``*.dist-info``/``*.egg-info`` folder names on ``sys.path`` (name and version)
and the bytes of their ``entry_points.txt``. Installing, removing or upgrading any distribution,
or changing an entry point, gives a new key: the index of the old one is not read, and the
start that finds none loads every plugin and writes the index anew. Several environments sharing
one cache folder each keep their own file (``plugins/index-KEY.json``; the eight newest are
kept). What the key cannot see (the code of an editable install edited in place) is caught when
it matters: a name the index does not know makes textcw load every plugin before saying it is
unknown, and a plugin that registers other names than the index says discards the index.

Read back as untrusted state
----------------------------
The index decides which code runs for a name, so it is read back only as textcw's other state is
(:mod:`textcw.trust`): from the cache folder (``$TEXTCW_CACHE``, else the user's cache folder),
whose folder, ``plugins/`` subfolder and file must be the user's own and writable by nobody else;
at most :data:`MAX_BYTES`, strict JSON of exactly the expected shape, names printable and
bounded. Anything else (absent, damaged, untrusted, of another textcw version) is not used, and
the start loads every plugin as it always did. The index never names code to import: a plugin is
still loaded through its entry point, by its name. ``TEXTCW_NO_CACHE=1`` neither reads nor writes
it. No index is written while a plugin is broken, so that every start reports it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from textcw._version import __version__
from textcw.cache_location import PLUGIN_INDEX_FOLDER, location, off_by_environment
from textcw.errors import TextcwError
from textcw.registry import KINDS
from textcw.trust import check_trusted_dir, check_trusted_file, ensure_private_dir

FORMAT = 1
#: The largest index read back (an index of a hundred plugins takes a few kilobytes).
MAX_BYTES = 4 << 20
MAX_PLUGINS = 1000
MAX_NAMES = 100_000
MAX_COMMANDS = 200
MAX_NAME_CHARS = 300
MAX_HELP_CHARS = 20_000
KEEP = 8
_META = (".dist-info", ".egg-info")
_COMMAND_FIELDS = {"name", "help", "short_help", "panel", "hidden", "deprecated"}

log = logging.getLogger("textcw")


class BadIndex(ValueError):
    """The index is not of the expected shape."""


def cache_folder() -> Path | None:
    """Where textcw's cache lives (:func:`textcw.cache_location.location`); None under
    ``TEXTCW_NO_CACHE=1``."""
    return None if off_by_environment() else location()[0]


def environment_key() -> str:
    """The sha256 (hex) of textcw's and Python's versions and every installed distribution's
    name, version and entry points (module docstring). About a millisecond: folder listings and
    small reads, no metadata parsing."""
    digest = hashlib.sha256(f"textcw-plugin-index {FORMAT} {__version__} {sys.version}".encode())
    for entry in sys.path:
        folder = entry or "."
        try:
            with os.scandir(folder) as found:
                names = sorted(e.name for e in found if e.name.endswith(_META))
        except OSError:  # a zip archive on sys.path, or a folder that is not there
            with contextlib.suppress(OSError):
                st = os.stat(folder)
                digest.update(f"\0file\0{entry}\0{st.st_size}\0{st.st_mtime_ns}".encode())
            continue
        if names:  # a folder without distributions (the current one, usually) does not count
            digest.update(b"\0folder\0" + os.fsencode(os.path.abspath(folder)))
        for name in names:
            digest.update(b"\0dist\0" + os.fsencode(name))
            with contextlib.suppress(OSError):
                with open(os.path.join(folder, name, "entry_points.txt"), "rb") as fh:
                    digest.update(b"\0entry_points\0" + fh.read(1 << 20))
    return digest.hexdigest()


def index_path(folder: Path, key: str) -> Path:
    return folder / PLUGIN_INDEX_FOLDER / f"index-{key[:32]}.json"


def read(key: str) -> dict[str, dict[str, Any]] | None:
    """``{plugin name: {"names": {kind: [names]}, "commands": [...]}}`` from the index of ``key``,
    or None when there is none usable (absent, untrusted, damaged: module docstring)."""
    folder = cache_folder()
    if folder is None:
        return None
    path = index_path(folder, key)
    if not os.path.lexists(path):
        return None
    try:
        check_trusted_dir(folder, "the cache folder")
        check_trusted_dir(path.parent, "the cache's plugins folder")
        check_trusted_file(path, "the plugin index")
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
        if len(raw) > MAX_BYTES:
            raise BadIndex(f"larger than {MAX_BYTES} bytes")
        return validate(json.loads(raw.decode("utf-8"), object_pairs_hook=_no_duplicates,
                                   parse_constant=_no_constant), key)
    except (TextcwError, OSError, ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        log.debug("not using the plugin index %s (%s): loading every plugin", path, exc)
        return None


def validate(value: Any, key: str) -> dict[str, dict[str, Any]]:
    """The plugins of an index read back, checked field by field; :class:`BadIndex` names the
    first thing that is not as :func:`write` makes it."""
    _check(isinstance(value, dict) and set(value) == {"format", "key", "textcw", "plugins"}, "top-level fields")
    _check(value["format"] == FORMAT and value["key"] == key and value["textcw"] == __version__, "format/key/version")
    plugins = value["plugins"]
    _check(isinstance(plugins, dict) and len(plugins) <= MAX_PLUGINS, "plugins")
    total = 0
    for name, info in plugins.items():
        _check_name(name)
        _check(isinstance(info, dict) and set(info) == {"names", "commands"}, f"plugin {name!r}")
        names, commands = info["names"], info["commands"]
        _check(isinstance(names, dict) and set(names) <= set(KINDS), f"kinds of {name!r}")
        for kind, listed in names.items():
            _check(isinstance(listed, list) and listed == sorted(set(listed)), f"{kind} of {name!r}")
            total += len(listed)
            _check(total <= MAX_NAMES, "too many names")
            for item in listed:
                _check_name(item)
        _check(isinstance(commands, list) and len(commands) <= MAX_COMMANDS, f"commands of {name!r}")
        for command in commands:
            _check(isinstance(command, dict) and set(command) == _COMMAND_FIELDS, f"a command of {name!r}")
            _check_name(command["name"])
            _check(all(command[f] is None or isinstance(command[f], str) and len(command[f]) <= MAX_HELP_CHARS
                       for f in ("help", "short_help", "panel")), f"help of {command['name']!r}")
            _check(all(isinstance(command[f], bool) for f in ("hidden", "deprecated")), "command flags")
    return plugins


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    _check(len(value) == len(pairs), "repeated key")
    return value


def _no_constant(name: str) -> Any:
    raise BadIndex(f"unexpected {name}")


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise BadIndex(f"unexpected {what}")


def _check_name(name: Any) -> None:
    _check(isinstance(name, str) and 0 < len(name) <= MAX_NAME_CHARS and name.isprintable(), "name")


def write(key: str, plugins: dict[str, dict[str, Any]]) -> Path | None:
    """Write the index of ``key`` owner-only and atomically (the path, or None when the cache
    folder is off, untrusted or not writable: the next start loads every plugin again)."""
    folder = cache_folder()
    if folder is None:
        return None
    document = {"format": FORMAT, "key": key, "textcw": __version__, "plugins": plugins}
    try:
        validate(json.loads(json.dumps(document)), key)  # never write what read() would refuse
        data = json.dumps(document, ensure_ascii=True, sort_keys=True).encode("ascii")
        if len(data) > MAX_BYTES:
            raise BadIndex("too large")
        from textcw.atomic import atomic_write_bytes

        ensure_private_dir(folder, "the cache folder")
        ensure_private_dir(folder / PLUGIN_INDEX_FOLDER, "the cache's plugins folder")
        path = index_path(folder, key)
        atomic_write_bytes(path, data, private=True)
    except (TextcwError, OSError, ValueError, TypeError) as exc:
        log.debug("not writing the plugin index (%s)", exc)
        return None
    _prune(path.parent, path)
    return path


def _prune(folder: Path, keep: Path) -> None:
    """Delete all but the :data:`KEEP` newest indexes (environments long gone)."""
    with contextlib.suppress(OSError):
        found = [(e.stat(follow_symlinks=False).st_mtime_ns, e.path) for e in os.scandir(folder)
                 if e.name.startswith("index-") and e.name.endswith(".json") and e.is_file(follow_symlinks=False)]
        for _, path in sorted(found, reverse=True)[KEEP:]:
            if path != str(keep):
                with contextlib.suppress(OSError):
                    os.unlink(path)


def discard(key: str) -> None:
    """Delete the index of ``key`` (it no longer says what the plugins register): the next start
    loads every plugin and writes it anew."""
    folder = cache_folder()
    if folder is not None:
        path = index_path(folder, key)
        with contextlib.suppress(OSError):
            if os.path.isfile(path) and not os.path.islink(path):
                os.unlink(path)
                log.debug("discarded the plugin index %s: it no longer matches the plugins", path)
