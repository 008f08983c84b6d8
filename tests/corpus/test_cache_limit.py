"""The corpus cache's size limit: least recently used entries go first (textcw.corpus.cache_limit)."""

from __future__ import annotations

import os

import numpy as np
import pytest

from textcw.corpus import cache, cache_limit
from textcw.errors import InputError

KIB = 1 << 10


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    monkeypatch.delenv(cache_limit.LIMIT_VAR, raising=False)
    return tmp_path / "cache"


def _key(name: str) -> dict:
    return cache.make_key("corpus", name=name, parser="test-1", source="0" * 64)


def _save(name: str, kib: int = 10, when: int | None = None):
    """An entry of about ``kib`` KiB, last used at ``when`` (seconds since the epoch)."""
    path = cache.save_entry(_key(name), {"x": np.full(kib * KIB, ord(name[0]), dtype=np.uint8)}, {})
    if path is not None and when is not None:
        os.utime(path, (when, when))
    return path


def _names() -> list[str]:
    return sorted(e["name"] for e in cache.entries())


@pytest.mark.parametrize("text,nbytes", [("0", 0), ("123", 123), ("2G", 2 << 30), ("500M", 500 << 20),
                                         ("1.5g", 3 << 29), ("64KiB", 64 * KIB), ("7 MB", 7 << 20)])
def test_sizes_are_read_in_bytes_or_binary_units(text, nbytes):
    assert cache_limit.parse_size(text) == nbytes


@pytest.mark.parametrize("text", ["lots", "-1", "2X", "1e9", ""])
def test_a_size_that_is_not_one_is_refused_with_the_variable_named(text):
    with pytest.raises(InputError, match=r"TEXTCW_CACHE_LIMIT=.* is not a size: give bytes or a number with K"):
        cache_limit.parse_size(text)


def test_default_limit_is_2_gib(folder, monkeypatch):
    assert cache_limit.limit() == cache_limit.DEFAULT_LIMIT == 2 << 30
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "100M")
    assert cache_limit.limit() == 100 << 20
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "a lot")
    with pytest.raises(InputError, match="TEXTCW_CACHE_LIMIT='a lot' is not a size"):
        cache.save_entry(_key("a"), {"x": np.zeros(4)}, {})


def test_least_recently_written_goes_first_and_the_total_stays_under_the_limit(folder, monkeypatch):
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "35K")
    for t, name in enumerate(["a", "b", "c"]):
        assert _save(name, when=1_000 + t) is not None
    assert _names() == ["a", "b", "c"]
    assert _save("d") is not None  # 4 x 10 KiB do not fit in 35 KiB: "a", the oldest, goes
    assert _names() == ["b", "c", "d"]
    assert sum(e["bytes"] for e in cache.entries()) <= 35 * KIB


def test_reading_an_entry_makes_it_the_most_recently_used(folder, monkeypatch):
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "35K")
    for t, name in enumerate(["a", "b", "c"]):
        _save(name, when=1_000 + t)
    arrays, _ = cache.load_entry(_key("a"))  # "a" is read: now "b" is the one used longest ago
    assert arrays["x"][0] == ord("a")
    _save("d")
    assert _names() == ["a", "c", "d"]
    _save("e")
    assert _names() == ["a", "d", "e"]


def test_a_new_entry_takes_as_many_old_ones_as_it_needs(folder, monkeypatch):
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "40K")
    for t, name in enumerate(["a", "b", "c"]):
        _save(name, when=1_000 + t)
    _save("d", kib=25)  # 25 KiB need two of the three 10 KiB entries gone
    assert _names() == ["c", "d"]


def test_an_entry_larger_than_the_limit_is_not_written_and_nothing_is_evicted(folder, monkeypatch):
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "30K")
    _save("a", when=1_000)
    assert _save("b", kib=40) is None
    assert _names() == ["a"]
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "0")  # keeps nothing
    assert _save("c", kib=1) is None and _names() == ["a"]


def test_rewriting_an_entry_does_not_evict_others_for_its_old_copy(folder, monkeypatch):
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "25K")
    _save("a", when=1_000)
    _save("b", when=1_001)
    _save("b")  # the same key again replaces its own file; "a" still fits beside it
    assert _names() == ["a", "b"]


def test_leftovers_of_interrupted_writes_go_first_but_running_writes_stay(folder, monkeypatch):
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "35K")
    _save("a", when=1_000)
    _save("b", when=1_001)
    orphan = folder / "corpus" / ".x.npz.0123456789ab.tmp"
    orphan.write_bytes(b"\0" * 10 * KIB)
    os.utime(orphan, (2_000, 2_000))  # long ago: no write is still running
    running = folder / "features" / ".y.npz.ba9876543210.tmp"
    running.parent.mkdir()
    running.write_bytes(b"\0" * 5 * KIB)  # just now: a write in progress
    _save("c")
    assert not orphan.exists() and running.exists()
    assert _names() == ["b", "c"]  # 10 + 10 + 5 (running) + new 10 > 35: "a" went too


def test_writes_are_atomic_a_failed_write_leaves_the_old_entry_whole(folder, monkeypatch):
    first = _save("a")
    before = first.read_bytes()

    def broken_savez(fh, **members):
        fh.write(b"PK\3\4 half a zip")
        raise OSError("disk full")

    monkeypatch.setattr(cache.np, "savez", broken_savez)
    assert cache.save_entry(_key("a"), {"x": np.zeros(3)}, {}) is None  # the run goes on uncached
    assert first.read_bytes() == before
    assert [p.name for p in (folder / "corpus").iterdir()] == [first.name]  # no temporary left
    monkeypatch.undo()
    monkeypatch.setenv("TEXTCW_CACHE", str(folder))
    assert cache.load_entry(_key("a"))[0]["x"][0] == ord("a")
