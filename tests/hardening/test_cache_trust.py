"""The corpus cache is read like an untrusted file (issue 26, item 4 and 5; issue 25's cache
location): owner-only folders and files, entries validated as an import, clean-up that never
follows a link out of the cache folder, and listing corpora that writes nothing."""

from __future__ import annotations

import json
import logging
import os
import stat
import types

import numpy as np
import pytest

from textcw.corpus import cache, cache_limit, feature_cache
from textcw.corpus.datahome import RemoteFile
from textcw.features.text import binary_bow

posix_only = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="POSIX owners and modes")

DOCS = ["the cat sat", "a dog ran far", "cat and dog"]


@pytest.fixture
def folder(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    monkeypatch.setattr(cache, "_warned", set())
    return tmp_path / "cache"


def _key(name="small"):
    return cache.make_key("features", name=name, featurizer="binary-bow", params={})


def _entry(key):
    """A real features entry of DOCS, as a run writes it."""
    fitted = binary_bow()
    X = fitted.fit_transform(DOCS)
    split = types.SimpleNamespace(target_names=["a", "b"], target=np.array([0, 1, 0]))
    assert feature_cache.save_features(key, fitted, binary_bow, X, X, split, split)
    return fitted, X


def _rewrite(key, edit):
    """Rewrite the entry of ``key`` as whoever can write the cache could: with ``edit`` applied
    to its JSON and its digest recomputed (save_entry computes it)."""
    arrays, meta = cache.load_entry(key)
    edit(meta)
    assert cache.save_entry(key, arrays, meta) is not None


@posix_only
def test_cache_folders_and_entries_are_owner_only_whatever_the_umask(folder):
    old = os.umask(0)
    try:
        key = _key()
        _entry(key)
    finally:
        os.umask(old)
    path = cache.entry_path(key)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((folder / "digests.json").stat().st_mode if (folder / "digests.json").exists()
                        else 0o600) == 0o600


def test_a_poisoned_featurizer_entry_with_file_input_is_refused_and_deleted(folder, caplog):
    key = _key()
    _entry(key)
    assert feature_cache.load_features(key, binary_bow())[0].input == "content"

    def file_input(meta):
        meta["state"] = [[n, h, v] for n, h, v in meta["state"] if n != "input"] + [["input", "json", "filename"]]
    _rewrite(key, file_input)
    with caplog.at_level(logging.WARNING, logger="textcw"):
        assert feature_cache.load_features(key, binary_bow()) is None
    assert "cannot take 'input' as 'json'" in caplog.text
    assert not cache.entry_path(key).exists()  # deleted, so the next run rebuilds it


@pytest.mark.parametrize("state, reason", [
    ([["transform", "json", 1]], "cannot take 'transform'"),          # a method
    ([["_secret", "json", 1]], "cannot take '_secret'"),              # not a fitted name
    ([["vocabulary_", "made", None]], "cannot take 'vocabulary_' as 'made'"),  # not made so
    ([["vocabulary_", "json", {"cat": 0, "dog": 5}]], "distinct columns"),
    ([["vocabulary_", "json", {"cat": 0}], ["vocabulary_", "json", {"cat": 0}]], "given twice"),
    ("not a list", "not a list"),
])
def test_restoring_a_featurizer_allows_only_what_an_import_allows(state, reason):
    fresh = binary_bow()
    made = [[name, "made", None] for name in fresh.__dict__] if isinstance(state, list) else []
    with pytest.raises(ValueError, match=reason):
        feature_cache.restore_featurizer(fresh, made + state if isinstance(state, list) else state)


def test_a_parameter_left_out_of_the_state_is_refused():
    fresh = binary_bow()
    state = [[name, "made", None] for name in fresh.__dict__ if name != "lowercase"]
    with pytest.raises(ValueError, match="leaves out 'lowercase'"):
        feature_cache.restore_featurizer(fresh, state)


def test_an_unsafe_parameter_made_by_the_run_fails_the_import_check():
    fresh = binary_bow()
    fresh.token_pattern = r"(a+)+$"  # a key cannot say this, but the check is the import's own
    with pytest.raises(ValueError, match="token_pattern"):
        feature_cache.restore_featurizer(fresh, [[n, "made", None] for n in fresh.__dict__])


def test_a_vocabulary_wider_than_the_cached_matrices_is_refused(folder, caplog):
    key = _key()
    _entry(key)

    def wider(meta):
        for item in meta["state"]:
            if item[0] == "vocabulary_":
                item[2] = {**item[2], "zebra": len(item[2])}
    _rewrite(key, wider)
    with caplog.at_level(logging.WARNING, logger="textcw"):
        assert feature_cache.load_features(key, binary_bow()) is None
    assert "makes 8 features but the cached matrices have 7" in caplog.text


def test_an_oversized_json_member_is_refused_before_parsing(folder, monkeypatch, caplog):
    key = _key()
    _entry(key)
    monkeypatch.setattr(cache, "MAX_META_BYTES", 100)
    with caplog.at_level(logging.WARNING, logger="textcw"), pytest.raises(cache.CacheMiss):
        cache.load_entry(key)
    assert "more than the 100 a cache entry may hold" in caplog.text


@posix_only
def test_a_cache_folder_others_can_write_is_not_used(folder, caplog):
    key = _key()
    _entry(key)
    os.chmod(folder, 0o777)
    with caplog.at_level(logging.WARNING, logger="textcw"):
        with pytest.raises(cache.CacheMiss):
            cache.load_entry(key)
        assert cache.save_entry(_key("other"), {"x": np.zeros(2)}, {}) is None
    assert "can be written by others" in caplog.text and "chmod go-w" in caplog.text
    assert caplog.text.count("not using the corpus cache") == 1  # warned once


@posix_only
@pytest.mark.parametrize("where", ["subfolder", "entry"])
def test_an_entry_or_subfolder_others_can_write_is_not_read(folder, where, caplog):
    key = _key()
    _entry(key)
    path = cache.entry_path(key)
    os.chmod(path.parent if where == "subfolder" else path, 0o777 if where == "subfolder" else 0o666)
    with caplog.at_level(logging.WARNING, logger="textcw"), pytest.raises(cache.CacheMiss):
        cache.load_entry(key)
    assert "can be written by others" in caplog.text
    assert path.exists()  # left alone, not deleted through a folder we do not trust


@pytest.fixture
def outside(tmp_path):
    """A folder outside the cache holding files that look like cache entries."""
    target = tmp_path / "precious"
    target.mkdir()
    for name in ("a.npz", "b.tmp", "c.npz"):
        (target / name).write_bytes(b"x" * 1000)
    return target


@pytest.mark.parametrize("kind", cache.KINDS)
def test_clear_never_deletes_through_a_linked_subfolder(folder, outside, kind, caplog):
    _entry(_key())
    linked = folder / kind
    if linked.exists():
        for p in linked.iterdir():
            p.unlink()
        linked.rmdir()
    linked.symlink_to(outside, target_is_directory=True)
    with caplog.at_level(logging.WARNING, logger="textcw"):
        cache.clear()
    assert sorted(p.name for p in outside.iterdir()) == ["a.npz", "b.tmp", "c.npz"]
    assert linked.is_symlink() and "is a symbolic link" in caplog.text
    assert all(e["kind"] != kind for e in cache.entries())  # nor listed through the link


def test_clear_skips_links_to_files(folder, outside):
    _entry(_key())
    (folder / "features" / "x.npz").symlink_to(outside / "a.npz")
    (folder / "digests.json").unlink(missing_ok=True)
    (folder / "digests.json").symlink_to(outside / "c.npz")
    files, _ = cache.clear()
    assert files == 1  # the real entry only
    assert sorted(p.name for p in outside.iterdir()) == ["a.npz", "b.tmp", "c.npz"]


@pytest.mark.parametrize("kind", cache.KINDS)
def test_eviction_never_deletes_through_a_linked_subfolder(folder, outside, monkeypatch, kind):
    folder.mkdir(mode=0o700)
    (folder / kind).symlink_to(outside, target_is_directory=True)
    for old in outside.iterdir():
        os.utime(old, (1, 1))  # "used" long ago, orphaned temporaries included
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "1500")
    assert cache_limit.entry_files(folder, cache.KINDS) == []
    cache_limit.make_room(folder, cache.KINDS, 1000)
    assert sorted(p.name for p in outside.iterdir()) == ["a.npz", "b.tmp", "c.npz"]


def test_eviction_deletes_only_regular_files_inside(folder, outside, monkeypatch):
    (folder / "corpus").mkdir(parents=True)
    (folder / "corpus" / "old.npz").write_bytes(b"y" * 1000)
    (folder / "corpus" / "link.npz").symlink_to(outside / "a.npz")
    os.utime(folder / "corpus" / "old.npz", (1, 1))
    monkeypatch.setenv(cache_limit.LIMIT_VAR, "1500")
    assert cache_limit.make_room(folder, cache.KINDS, 1000)
    assert not (folder / "corpus" / "old.npz").exists()
    assert (folder / "corpus" / "link.npz").is_symlink() and (outside / "a.npz").exists()


def test_read_only_reads_but_writes_nothing(folder, tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    (tmp_path / "home" / "small").mkdir(parents=True)
    remote = RemoteFile(corpus="small", filename="small.txt", url=None, sha256=())
    remote.path.write_text("one\ntwo\n")
    parse = lambda path: open(path).read().split()  # noqa: E731
    encode = lambda words: ({"w": np.array(words)}, {})  # noqa: E731
    decode = lambda arrays, meta: arrays["w"].tolist()  # noqa: E731
    cache._parsed.clear()
    with cache.read_only():
        assert cache.cached_parse(remote, "p-1", parse, encode, decode) == ["one", "two"]
    assert not folder.exists()  # not even the folder
    cache._parsed.clear()
    assert cache.cached_parse(remote, "p-1", parse, encode, decode) == ["one", "two"]
    (entry,) = cache.entries()
    before = os.stat(entry["path"]).st_mtime_ns
    os.utime(entry["path"], ns=(1, 1))
    cache._parsed.clear()
    with cache.read_only():
        assert cache.cached_parse(remote, "p-1", lambda p: pytest.fail("parsed"), encode, decode) == ["one", "two"]
    assert os.stat(entry["path"]).st_mtime_ns == 1 != before  # read without even marking it used
    cache._parsed.clear()


@pytest.mark.corpus
def test_listing_corpora_writes_nothing_to_the_cache(data_home, folder):
    from textcw.corpus.catalogue import task_rows
    from textcw.plugins import current_registries

    cache._parsed.clear()
    rows = task_rows(current_registries().corpora.get("spam"))
    assert any(r.train for r in rows)
    assert not folder.exists()
