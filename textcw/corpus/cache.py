"""A cache of parsed corpora and featurized matrices, so that a second run skips the parsing.

Reading 20 Newsgroups means decompressing a 14 MB tarball and decoding 18,846 messages, and
featurizing it means tokenising every message with a regular expression: seconds of work whose
result only changes when the archive, the featurizer or textcw changes. Both results are kept
here, in files that hold only arrays and JSON (never a pickle), and are found again by a key of
everything they depend on.

Where
-----
``$TEXTCW_CACHE`` when set; otherwise the user's cache folder, as platformdirs' ``user_cache_dir``
chooses it (:func:`user_cache_dir`): ``$XDG_CACHE_HOME/textcw`` or ``~/.cache/textcw`` on Linux
and other Unix systems, ``~/Library/Caches/textcw`` on macOS, ``%LOCALAPPDATA%\\textcw\\Cache``
on Windows. Never the data folder, unless ``$TEXTCW_CACHE`` names it: a data folder is often
shared or read-only (a team's corpora, a CI mount), and a cache is the user's own.

Whoever can write to the cache folder decides what a run reads (the pinned-digest check of an
unchanged archive is not repeated, and an entry restores a fitted featurizer), so the cache is
read back only as untrusted state is (:mod:`textcw.trust`): the folder and its ``corpus/`` and
``features/`` subfolders are created owner-only (``0700``) and must be the user's own, not
writable by others and not symbolic links, and every entry must be a regular file of the
user's that nobody else can write (entries are written ``0600``). A cache folder that fails
these checks is not used at all: one warning says why and how to fix it, and the run goes on
uncached. ``TEXTCW_NO_CACHE=1``, ``textcw train --no-cache`` and :func:`disabled` turn the cache
off (neither read nor written); :func:`read_only` reads it without writing (``textcw list
corpora``). ``textcw cache info`` shows where it is and what it holds, ``textcw cache clear``
empties it, never following a link out of the cache folder. It holds at most
``$TEXTCW_CACHE_LIMIT`` bytes (default 2 GiB); the entries used longest ago make room for a new
one (:mod:`textcw.corpus.cache_limit`).

What a file is keyed by
-----------------------
- the sha256 of every source file (a corpus archive). Hashing 14 MB on every run would cost
  what the cache saves, so a file's digest is kept in ``digests.json`` by its path, size,
  modification and change time and inode; it is computed again (after the usual pinned-digest
  check of :func:`~textcw.corpus.datahome.fetch`) as soon as any of these changes;
- what was made from it: the parser and its format version, or the corpus task, the
  featurizer's registered name, provider, class and parameters;
- the versions of textcw, and for matrices of scikit-learn, SciPy and NumPy.

The key's sha256 names the file; the key itself is stored in it and compared on reading.

Checked on reading
------------------
A file is a NumPy ``.npz`` archive of plain arrays, read in bounded memory without unpickling
anything, its members' sha256 compared with the digest written beside them
(:mod:`textcw.corpus.cache_format`). A file that fails any check (cut short, damaged, edited, of
another key) is deleted, logged, and rebuilt from the source. The digest only detects damage:
whoever writes an entry can recompute it, so what an entry restores is validated as an import is
(:mod:`textcw.corpus.feature_cache`). Files are written atomically
(:func:`textcw.atomic.atomic_output`): a reader sees a whole file or none, and two processes
writing the same entry leave one whole file. Listing and clearing the entries:
:mod:`textcw.corpus.cache_contents`.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import logging
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np

from textcw._version import __version__
from textcw.atomic import _may_create_in, atomic_output, atomic_write_text
from textcw.cache_location import CACHE_VAR, NO_CACHE_VAR, location, off_by_environment, user_cache_dir
from textcw.corpus import cache_limit
from textcw.corpus.cache_contents import clear_folder, list_entries
from textcw.corpus.cache_format import (
    MAX_FILE_BYTES,
    from_text,
    members_digest,
    pack_texts,
    read_npz,
    text_array,
    to_json as _to_json,
    unpack_texts,
)
from textcw.corpus.datahome import RemoteFile, fetch, sha256_of
from textcw.errors import ModelFileError
from textcw.trust import UntrustedLocationError, check_trusted_dir, check_trusted_file, ensure_private_dir
from textcw.untrusted import parse_json

__all__ = [
    "CACHE_VAR", "FORMAT", "KINDS", "MAX_FILE_BYTES", "MAX_META_BYTES", "NO_CACHE_VAR", "CacheMiss", "cache_dir",
    "cached_parse", "clear", "disabled", "discard_entry", "entry_name", "kind_dir", "problem", "read_only",
    "user_cache_dir", "enabled", "entries", "entry_path", "load_entry", "location",
    "log", "make_key", "pack_texts", "read_npz", "save_entry", "source_digest", "sources",
    "unpack_texts"
]

#: Bumped whenever the layout of a cache file changes; part of every key.
FORMAT = 1
#: The most bytes of JSON (the key, the parsed corpus's facts, a fitted featurizer) one entry may
#: hold: the vocabulary of the largest built-in corpus takes about 5 MB.
MAX_META_BYTES = 256 << 20
KINDS = ("corpus", "features")
_DIGESTS = "digests.json"
_DIGEST_MEMBER = "__sha256__"
_KEY_MEMBER = "__key__"

log = logging.getLogger("textcw")
_parsed: dict[str, object] = {}
_off = contextvars.ContextVar("textcw_cache_off", default=False)
_no_writes = contextvars.ContextVar("textcw_cache_read_only", default=False)
_warned: set[str] = set()


class CacheMiss(Exception):
    """A cache file is absent, or was damaged and has been deleted."""


def enabled() -> bool:
    """False under ``TEXTCW_NO_CACHE=1`` or inside :func:`disabled`."""
    return not off_by_environment() and not _off.get()


@contextlib.contextmanager
def disabled(off: bool = True):
    """Neither read nor write the cache inside this block (``textcw train --no-cache``)."""
    token = _off.set(off or _off.get())
    try:
        yield
    finally:
        _off.reset(token)


@contextlib.contextmanager
def read_only():
    """Read the cache but write nothing inside this block: ``textcw list corpora`` counts the
    documents of every corpus and must not fill the cache with all of them."""
    token = _no_writes.set(True)
    try:
        yield
    finally:
        _no_writes.reset(token)


def problem() -> str | None:
    """Why the cache folder is not used (not the user's own: :mod:`textcw.trust`), or None. The
    caller shows it, so it is not also logged as a warning."""
    folder, _ = location()
    if not os.path.lexists(folder):
        return None
    try:
        check_trusted_dir(folder, "the cache folder")
    except UntrustedLocationError as exc:
        _warned.add(str(folder))
        return str(exc)
    return None


def _warn_once(folder: Path, message: str) -> None:
    if str(folder) not in _warned:
        _warned.add(str(folder))
        log.warning("not using the corpus cache: %s; the run goes on uncached", message)


def cache_dir(create: bool = False) -> Path | None:
    """The cache folder, made owner-only if ``create``; None when it does not exist, cannot be
    written, or is not the user's own (:func:`textcw.trust.check_trusted_dir`; warned once)."""
    folder, _ = location()
    try:
        if create and not _no_writes.get():
            ensure_private_dir(folder, "the cache folder")
        elif not os.path.lexists(folder):
            return None
        else:
            check_trusted_dir(folder, "the cache folder")
    except UntrustedLocationError as exc:
        _warn_once(folder, str(exc))
        return None
    except OSError as exc:
        log.debug("not caching: cannot create %s (%s)", folder, exc)
        return None
    return folder if not create or _writable(folder) else None


def kind_dir(folder: Path, kind: str, *, create: bool = False) -> Path | None:
    """``folder/kind`` (``corpus`` or ``features``) when it is the user's own; made owner-only if
    ``create``; None when it is missing (and not to be made) or not trusted (warned once)."""
    path = folder / kind
    try:
        if create and not _no_writes.get():
            return ensure_private_dir(path, f"the cache's {kind} folder")
        if not os.path.lexists(path):
            return None
        return check_trusted_dir(path, f"the cache's {kind} folder")
    except UntrustedLocationError as exc:
        _warn_once(path, str(exc))
    except OSError as exc:
        log.debug("not caching: cannot create %s (%s)", path, exc)
    return None


def _writable(folder: Path) -> bool:
    """Whether files can be made in ``folder``."""
    # A folder nobody may write to (mode a-w) is read-only by intent, even to root, whom the
    # permission check lets through.
    return folder.is_dir() and _may_create_in(folder) and bool(folder.stat().st_mode & 0o222)


# -- source digests ---------------------------------------------------------------------------

def _stat_key(path: Path) -> list:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def source_digest(remote: RemoteFile, *, download: bool = True) -> str:
    """The sha256 of ``remote``'s local file, verified against its pins the first time.

    The digest is remembered in ``digests.json`` by (path, size, mtime, ctime, inode), so a
    file that has not changed is neither hashed nor verified again.
    """
    path = remote.path
    folder = cache_dir(create=True)
    table = _read_digests(folder) if folder is not None else {}
    name = str(path.resolve()) if path.exists() else str(path)
    entry = table.get(name)
    if entry is not None and path.is_file() and entry.get("stat") == _stat_key(path):
        return entry["sha256"]
    fetch(remote, download=download)  # downloads a missing file; checks it against its pins
    digest = sha256_of(path)
    if folder is not None:
        table[str(path.resolve())] = {"stat": _stat_key(path), "sha256": digest}
        _write_digests(folder, table)
    return digest


def _read_digests(folder: Path) -> dict:
    path = folder / _DIGESTS
    if not os.path.lexists(path):
        return {}
    try:
        check_trusted_file(path, "the cache's digest table")
        table = json.loads(path.read_text("utf-8"))
    except UntrustedLocationError as exc:
        _warn_once(path, str(exc))
        return {}
    except (OSError, ValueError):
        return {}
    ok = isinstance(table, dict) and all(
        isinstance(v, dict) and isinstance(v.get("sha256"), str) and isinstance(v.get("stat"), list)
        for v in table.values())
    return table if ok else {}


def _write_digests(folder: Path, table: dict) -> None:
    if _no_writes.get():
        return
    with contextlib.suppress(Exception):  # a digest not remembered is computed again next time
        atomic_write_text(folder / _DIGESTS, json.dumps(table, indent=1, sort_keys=True), private=True)


# -- cache files ------------------------------------------------------------------------------

def make_key(kind: str, **facts) -> dict:
    """The full key of a cache entry: ``facts`` plus the cache format and textcw's version."""
    return {"kind": kind, "format": FORMAT, "textcw": __version__, **facts}


def entry_path(key: dict) -> Path | None:
    """Where the entry of ``key`` lives (None when there is no usable cache folder)."""
    folder = cache_dir()
    if folder is None:
        return None
    return folder / key["kind"] / entry_name(key)


def entry_name(key: dict) -> str:
    """The file name of the entry of ``key``: a readable label, then the key's digest."""
    text = json.dumps(key, sort_keys=True)
    label = "".join(c if c.isalnum() or c in "-_" else "-" for c in str(key.get("name", "")))[:40]
    return f"{label}-{hashlib.sha256(text.encode()).hexdigest()[:32]}.npz"


def save_entry(key: dict, arrays: dict[str, np.ndarray], meta: dict, *, meta_json: str | None = None) -> Path | None:
    """Write one entry atomically and owner-only; returns its path, or None when nothing could
    be written (the cache is off, read-only, not the user's own, or full).

    ``meta_json`` is ``meta`` already written as JSON (``to_json(meta)``), for a caller that
    needed the text itself: it is not encoded twice."""
    if not enabled() or _no_writes.get():
        return None
    folder = cache_dir(create=True)
    sub = kind_dir(folder, key["kind"], create=True) if folder is not None else None
    if sub is None:
        return None
    path = sub / entry_name(key)
    members = {name: np.ascontiguousarray(a) for name, a in arrays.items()}
    # not sort_keys: the order of a fitted dict (a vocabulary) is part of what is restored
    members[_KEY_MEMBER] = text_array(_entry_json(key, meta, meta_json))
    members[_DIGEST_MEMBER] = text_array(members_digest(members))
    if not cache_limit.make_room(folder, KINDS, cache_limit.estimated_size(members), keep=path):
        log.debug("not caching %s: it is larger than the cache limit (%s)", path.name, cache_limit.LIMIT_VAR)
        return None
    try:
        with atomic_output(path, private=True) as fh:
            np.savez(fh, **members)
    except Exception as exc:  # a full disk or a folder made read-only: the run goes on uncached
        log.debug("cannot write the cache file %s: %s", path, exc)
        return None
    return path


def _entry_json(key: dict, meta: dict, meta_json: str | None) -> str:
    """``to_json({"key": key, "meta": meta})``, with ``meta``'s text when it is given: JSON writes
    a dict as its items' texts between braces, so this is the same text (tested)."""
    if meta_json is None:
        return _to_json({"key": key, "meta": meta})
    return '{"key": ' + _to_json(key) + ', "meta": ' + meta_json + "}"


def load_entry(key: dict) -> tuple[dict[str, np.ndarray], dict]:
    """``(arrays, meta)`` of the entry of ``key``; :class:`CacheMiss` when absent or damaged.

    The entry's folders and the file itself must be the user's own (:mod:`textcw.trust`); one
    that is not is left alone and missed. A damaged file is deleted, so the caller rebuilds it.
    """
    folder = cache_dir() if enabled() else None
    sub = kind_dir(folder, key["kind"]) if folder is not None else None
    path = sub / entry_name(key) if sub is not None else None
    if path is None or not os.path.lexists(path):
        raise CacheMiss(str(path))
    try:
        check_trusted_file(path, "the cache file")
    except UntrustedLocationError as exc:
        _warn_once(path, str(exc))
        raise CacheMiss(str(path)) from None
    try:
        members = read_npz(path)
        digest = members.pop(_DIGEST_MEMBER, None)
        if digest is None or from_text(digest) != members_digest(members):
            raise ValueError("its contents do not match their digest")
        stored = _read_meta(members.pop(_KEY_MEMBER))
        if stored.get("key") != key:
            raise ValueError("it belongs to another key")
    except (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile) as exc:
        log.warning("the cache file %s is damaged (%s); deleting it and rebuilding", path, exc)
        if not _no_writes.get():
            cache_limit.remove_entry(folder, key["kind"], path.name)
        raise CacheMiss(str(path)) from None
    if not _no_writes.get():
        cache_limit.mark_used(path)
    return members, stored.get("meta", {})


def discard_entry(key: dict) -> None:
    """Delete the entry of ``key`` (its contents were found wrong), never following a link."""
    folder = cache_dir()
    if folder is not None and not _no_writes.get():
        cache_limit.remove_entry(folder, key["kind"], entry_name(key))


def _read_meta(array: np.ndarray) -> dict:
    """An entry's JSON member, within :data:`MAX_META_BYTES` and the depth limit of any file
    textcw reads (:func:`textcw.untrusted.parse_json`); :class:`ValueError` otherwise."""
    if array.dtype != np.uint8 or array.ndim != 1:
        raise ValueError("a text member is not bytes")
    if array.size > MAX_META_BYTES:
        raise ValueError(f"its JSON is {array.size:,} bytes, more than the {MAX_META_BYTES:,} a cache entry may hold")
    try:
        stored = parse_json(array.tobytes(), "its JSON")
    except ModelFileError as exc:
        raise ValueError(str(exc)) from None
    if not isinstance(stored, dict):
        raise ValueError("its JSON is not a mapping")
    return stored


def cached_parse(remote: RemoteFile, parser: str, parse: Callable[[str], object],
                 encode: Callable[[object], tuple[dict, dict]],
                 decode: Callable[[dict, dict], object], *, download: bool = True):
    """``parse(path)`` of ``remote``'s local file, from the cache when it holds the result.

    ``parser`` names the parser and its output format (change it when either changes);
    ``encode(result) -> (arrays, meta)`` and ``decode(arrays, meta) -> result`` convert the
    result to plain arrays and JSON and back.
    """
    if not enabled():
        return parse(str(fetch(remote, download=download)))
    key = make_key("corpus", name=remote.corpus, parser=parser,
                   source=source_digest(remote, download=download))
    memo_key = json.dumps(key, sort_keys=True)
    if memo_key in _parsed:  # the train and the test split of one run read the same file
        return _parsed[memo_key]
    try:
        arrays, meta = load_entry(key)
        result = decode(arrays, meta)
    except CacheMiss:
        result = None
    except (ValueError, KeyError, TypeError, IndexError) as exc:  # valid digest, wrong contents
        log.warning("the cached %s corpus cannot be read (%s); rebuilding it", remote.corpus, exc)
        result = None
    if result is None:
        result = parse(str(fetch(remote, download=download)))
        save_entry(key, *encode(result))
    _parsed.clear()  # keep one parsed corpus in memory, as the loaders' own lru_cache did
    _parsed[memo_key] = result
    return result


# -- info and clear ---------------------------------------------------------------------------

def entries() -> list[dict]:
    """Every cache file: ``{"kind", "name", "path", "bytes"}``, for ``textcw cache info``
    (regular files in subfolders that are not links; :mod:`textcw.corpus.cache_contents`)."""
    folder = cache_dir()
    return [] if folder is None else list_entries(folder, KINDS)


def clear() -> tuple[int, int]:
    """Delete every file the cache made, the plugin index included; ``(files, bytes)`` removed.

    Only regular files inside the cache folder are deleted: a ``corpus/`` or ``features/`` that
    is a link (to anywhere) is skipped, with a warning, and nothing in its target is touched
    (:mod:`textcw.corpus.cache_contents`).
    """
    folder = cache_dir()
    return (0, 0) if folder is None else clear_folder(folder, KINDS, files=(_DIGESTS,))


# -- featurized matrices ----------------------------------------------------------------------

def sources(*remotes: RemoteFile):
    """Mark a corpus loader as reading only ``remotes``: its featurized matrices may be cached.

    Only loaders whose whole output is determined by these files (and textcw's version) may be
    marked; a loader of a user's folder is not.
    """
    def mark(loader):
        loader.cache_sources = remotes
        return loader
    return mark
