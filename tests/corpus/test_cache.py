"""The cache of parsed corpora and featurized matrices (textcw.corpus.cache)."""

from __future__ import annotations

import io
import json
import logging
import os
import tarfile
import zipfile

import numpy as np
import pytest

from textcw import cache_location
from textcw.corpus import cache, feature_cache, newsgroups
from textcw.corpus.datahome import RemoteFile
from textcw.features.text import binary_bow
from textcw.features.weighting import tfidf
from textcw.persist import save
from textcw.pipeline import train


def _archive(path, messages: dict[str, str]) -> None:
    """A small 20news-bydate-style tarball: ``{"train/group/id": text}``."""
    with tarfile.open(path, "w:gz") as tar:
        for name, text in messages.items():
            data = text.encode("latin-1")
            info = tarfile.TarInfo(f"20news-bydate-{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


MESSAGES = {"train/sci.med/1": "doctor pills caf\xe9", "train/sci.space/2": "orbit rocket",
            "test/sci.med/3": "nurse", "test/sci.space/4": "moon \xff landing"}


@pytest.fixture
def small(tmp_path, monkeypatch):
    """An unpinned newsgroups-style archive in a data home, and a cache folder beside it."""
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    (tmp_path / "home" / "small").mkdir(parents=True)
    remote = RemoteFile(corpus="small", filename="small.tar.gz", url=None, sha256=())
    _archive(remote.path, MESSAGES)
    cache._parsed.clear()
    yield remote
    cache._parsed.clear()


def _read(remote, calls):
    def parse(path):
        calls.append(path)
        return newsgroups._read_archive.__wrapped__(path)
    return cache.cached_parse(remote, "test-parser-1", parse, newsgroups._encode, newsgroups._decode)


def _corpus_files(tmp_path):
    return sorted((tmp_path / "cache" / "corpus").glob("*.npz"))


def test_hit_gives_identical_data(small, tmp_path):
    calls = []
    first = _read(small, calls)
    cache._parsed.clear()
    second = _read(small, calls)
    assert len(calls) == 1  # parsed once; the second read came from the file
    assert second == first
    assert first["train"] == [("sci.med", 1, "doctor pills caf\xe9"), ("sci.space", 2, "orbit rocket")]
    assert first["test"][1] == ("sci.space", 4, "moon \xff landing")
    assert len(_corpus_files(tmp_path)) == 1
    digests = json.loads((tmp_path / "cache" / "digests.json").read_text())
    assert list(digests.values())[0]["sha256"] == cache.sha256_of(small.path)


def test_changed_archive_misses(small, tmp_path):
    calls = []
    _read(small, calls)
    _archive(small.path, {**MESSAGES, "train/sci.med/5": "aspirin"})
    cache._parsed.clear()
    changed = _read(small, calls)
    assert len(calls) == 2 and ("sci.med", 5, "aspirin") in changed["train"]
    assert len(_corpus_files(tmp_path)) == 2  # one entry per archive digest


def test_changed_version_misses(small, monkeypatch):
    calls = []
    _read(small, calls)
    monkeypatch.setattr(cache, "__version__", "99.0")
    cache._parsed.clear()
    _read(small, calls)
    assert len(calls) == 2


def test_unchanged_archive_is_not_hashed_again(small, monkeypatch):
    _read(small, [])
    cache._parsed.clear()
    monkeypatch.setattr(cache, "sha256_of", lambda path: pytest.fail("hashed again"))
    assert _read(small, [])["test"][0] == ("sci.med", 3, "nurse")


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage"])
def test_damaged_file_is_detected_deleted_and_rebuilt(small, tmp_path, caplog, damage):
    calls = []
    good = _read(small, calls)
    (path,) = _corpus_files(tmp_path)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[data.index(b"orbit")] ^= 1  # a byte of a document, inside a stored member
    else:
        data = b"not a zip file at all"
    path.write_bytes(bytes(data))
    cache._parsed.clear()
    with caplog.at_level(logging.WARNING, logger="textcw"):
        again = _read(small, calls)
    assert again == good and len(calls) == 2
    assert f"the cache file {path} is damaged" in caplog.text and "rebuilding" in caplog.text
    assert _corpus_files(tmp_path) == [path]  # written anew
    cache._parsed.clear()
    assert _read(small, calls) == good and len(calls) == 2


def test_member_with_a_lying_header_is_refused_before_allocating(small, tmp_path):
    _read(small, [])
    (path,) = _corpus_files(tmp_path)
    with zipfile.ZipFile(path) as zf:
        members = {n: zf.read(n) for n in zf.namelist()}
    raw = members["train_id.npy"]
    assert b"(2,)" in raw
    members["train_id.npy"] = raw.replace(b"(2,)", b"(9,)")  # claims 9 ids, holds 2
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    with pytest.raises(ValueError, match="member 'train_id.npy' is cut short or padded"):
        cache.read_npz(path)


def test_object_arrays_are_refused(tmp_path):
    path = tmp_path / "x.npz"
    np.savez(path, a=np.array([{"x": 1}], dtype=object))
    with pytest.raises(ValueError, match="member 'a.npy' is not a plain array"):
        cache.read_npz(path)


def test_no_cache_neither_reads_nor_writes(small, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setenv("TEXTCW_NO_CACHE", "1")
    _read(small, calls)
    _read(small, calls)
    assert len(calls) == 2 and not (tmp_path / "cache").exists()
    monkeypatch.delenv("TEXTCW_NO_CACHE")
    with cache.disabled():
        _read(small, calls)
    assert len(calls) == 3 and not (tmp_path / "cache").exists()


def test_clear_and_entries(small, tmp_path):
    _read(small, [])
    (entry,) = cache.entries()
    assert entry["kind"] == "corpus" and entry["name"] == "small"
    assert entry["bytes"] == _corpus_files(tmp_path)[0].stat().st_size
    files, nbytes = cache.clear()
    assert files == 2 and nbytes > entry["bytes"]  # the entry and digests.json
    assert cache.entries() == [] and not (tmp_path / "cache" / "corpus").exists()


def test_location(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "c"))
    assert cache.location() == (tmp_path / "c", "$TEXTCW_CACHE")
    monkeypatch.delenv("TEXTCW_CACHE")
    # never the data folder, writable or not: the user's cache folder (XDG rules)
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(cache_location.sys, "platform", "linux")
    assert cache.location()[0] == tmp_path / "xdg" / "textcw"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")  # only an absolute path counts
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    assert cache.location()[0] == tmp_path / "user" / ".cache" / "textcw"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.location()[0] == tmp_path / "user" / ".cache" / "textcw"
    monkeypatch.setattr(cache_location.sys, "platform", "darwin")
    assert cache.location()[0] == tmp_path / "user" / "Library" / "Caches" / "textcw"
    monkeypatch.setattr(cache_location.sys, "platform", "win32")
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "local"))
    assert cache.location()[0] == tmp_path / "local" / "textcw" / "Cache"


def test_tfidf_state_round_trips_after_transform_and_idf_is_checked():
    """The compiled path's vocabulary table (derived, left out of the pickle) does not stop a
    transformed featurizer from being cached; idf_ is restored only when it fits the vocabulary."""
    docs = ["the cat sat", "a dog ran far", "cat and dog"]
    fitted = tfidf()
    fitted.fit_transform(docs)
    fitted.transform(docs)  # as a run does with the test split before saving
    state = feature_cache.featurizer_state(fitted, tfidf())
    assert state is not None
    assert [name for name, _, _ in state][-2:] == ["vocabulary_", "idf_"]
    restored = feature_cache.restore_featurizer(tfidf(), json.loads(cache._to_json(state)))
    assert feature_cache._pickled(restored) == feature_cache._pickled(fitted)
    assert (restored.transform(docs) != fitted.transform(docs)).nnz == 0
    n = len(fitted.vocabulary_)
    for bad in ([1.0] * (n - 1), [-1.0] * n, [0.0] * n, [1] * n, "1.0"):
        edited = [[a, how, bad if a == "idf_" else v] for a, how, v in json.loads(cache._to_json(state))]
        with pytest.raises(ValueError, match="idf weights"):
            feature_cache.restore_featurizer(tfidf(), edited)


def test_featurizer_state_round_trips_and_parameters_change_the_key(small):
    docs = ["the cat sat", "a dog ran far", "cat and dog"]
    fitted = binary_bow()
    fitted.fit_transform(docs)
    state = feature_cache.featurizer_state(fitted, binary_bow())
    assert [name for name, _, _ in state][-3:] == ["fixed_vocabulary_", "_stop_words_id", "vocabulary_"]
    restored = feature_cache.restore_featurizer(binary_bow(), json.loads(cache._to_json(state)))
    assert feature_cache._pickled(restored) == feature_cache._pickled(fitted)
    assert (restored.transform(docs) != fitted.transform(docs)).nnz == 0

    def key(**params):
        return feature_cache.features_key("small", _Loader, "binary-bow", None, params, binary_bow(**params))
    assert key() == key() and key(min_df=2) != key() and key(min_df=2)["params"] == {"min_df": 2}
    assert cache.entry_path(key(min_df=2)) != cache.entry_path(key())
    assert feature_cache.features_key("small", lambda: None, "binary-bow", None, {}, binary_bow()) is None


class _Loader:
    cache_sources = ()


_Loader.cache_sources = (RemoteFile(corpus="small", filename="small.tar.gz", url=None, sha256=()),)


@pytest.mark.corpus
@pytest.mark.parametrize("corpus", ["newsgroups:comp", "reuters:r8"])
def test_saved_model_is_identical_with_and_without_the_cache(data_home, tmp_path, monkeypatch, corpus):
    """Real tasks: no cache, a miss that fills it and a hit give the same model file."""
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    files, results = [], []
    for run, use in enumerate([False, True, True]):  # off, then a miss that fills it, then a hit
        cache._parsed.clear()
        result = train(corpus, "cw-stdev", cache=use)
        files.append(tmp_path / f"m{run}.textcw-model")
        save(result.model, files[-1], info={"accuracy": result.accuracy})
        results.append(result)
    assert {e["kind"] for e in cache.entries()} == {"corpus", "features"}
    assert files[0].read_bytes() == files[1].read_bytes() == files[2].read_bytes()
    assert results[0].accuracy == results[1].accuracy == results[2].accuracy
    assert (results[2].n_train, results[2].n_test, results[2].n_features) == \
        (results[0].n_train, results[0].n_test, results[0].n_features)
    # another featurizer parameter is another entry
    cache._parsed.clear()
    other = train(corpus, "cw-stdev", featurizer_params={"min_df": 2})
    assert other.n_features < results[0].n_features
    assert sum(e["kind"] == "features" for e in cache.entries()) == 2


def test_clear_removes_the_plugin_index_too(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    from textcw.plugins import index

    index_folder = tmp_path / "cache" / cache_location.PLUGIN_INDEX_FOLDER
    index_folder.mkdir(parents=True, mode=0o700)
    os.chmod(tmp_path / "cache", 0o700)
    (index_folder / "index-0123.json").write_text("{}")
    assert index.cache_folder() == tmp_path / "cache"
    assert cache.clear() == (1, 2)
    assert not index_folder.exists()


def test_the_archive_read_in_memory_is_tarfiles_own_reading(tmp_path, monkeypatch):
    import gzip

    path = tmp_path / "small.tar.gz"
    _archive(path, MESSAGES)
    parsed = newsgroups._read_archive.__wrapped__(str(path))
    assert parsed["train"] == [("sci.med", 1, "doctor pills caf\xe9"), ("sci.space", 2, "orbit rocket")]
    assert parsed["test"] == [("sci.med", 3, "nurse"), ("sci.space", 4, "moon \xff landing")]
    # a gzip file of two members (as `cat a.gz b.gz` makes) is read whole, as gzip reads it
    whole = gzip.decompress(path.read_bytes())
    two = tmp_path / "two.tar.gz"
    two.write_bytes(gzip.compress(whole[:1000]) + gzip.compress(whole[1000:]) + b"\0" * 512)  # zero-padded
    assert newsgroups._read_archive.__wrapped__(str(two)) == parsed
    # member names that are not plain are read as pathlib reads them
    odd = tmp_path / "odd.tar.gz"
    _archive(odd, {**MESSAGES, "train//sci.med/8": "double slash", "test/./sci.space/9": "dot part",
                   "train/sci.med/extra/10": "too deep"})
    again = newsgroups._read_archive.__wrapped__(str(odd))
    assert again["train"] == [*parsed["train"][:1], ("sci.med", 8, "double slash"), *parsed["train"][1:]]
    assert again["test"] == [*parsed["test"], ("sci.space", 9, "dot part")]
    # cut short, or decompressing past the bound: one line that says what to do
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(path.read_bytes()[:-30])
    with pytest.raises(newsgroups.DataError, match=r"^cannot read .*cut\.tar\.gz: .*delete it and download it again$"):
        newsgroups._read_archive.__wrapped__(str(cut))
    monkeypatch.setattr(newsgroups, "MAX_TAR_BYTES", len(whole) - 1)
    with pytest.raises(newsgroups.DataError, match=f"decompresses to more than {len(whole) - 1:,} bytes"):
        newsgroups._read_archive.__wrapped__(str(path))
    size = path.stat().st_size  # a file larger than the bound is refused before it is read
    monkeypatch.setattr(newsgroups, "MAX_TAR_BYTES", size - 1)
    with pytest.raises(newsgroups.DataError, match=f"it is larger than {size - 1:,} bytes"):
        newsgroups._read_archive.__wrapped__(str(path))


@pytest.mark.parametrize("value, plain", [
    ({"cat": 0, "dog": 1}, True),
    ([1.5, 2.0, 1e-300], True),
    ({"a": [1, "x", None, True, {"b": [0.5]}]}, True),
    ([], True), ({}, True), ("text", True), (None, True), (3, True),
    ([1.0, float("inf")], False), ({"a": [1.0, float("nan")]}, False), (float("-inf"), False),
    ({"a": 1, 2: "b"}, False),  # a key JSON would turn into "2"
    ([1, (2, 3)], False), ({"a": [[np.float64(1.0)]]}, False), ([np.int64(1)], False),
    ({"a": {"b": {"c": [1, {"d": (1,)}]}}}, False),
])
def test_only_values_json_gives_back_exactly_are_plain(value, plain):
    assert feature_cache._plain(value) is plain
    if plain:
        text = cache._to_json(value)
        assert json.loads(text) == value and cache._to_json(json.loads(text)) == text


def test_an_entry_written_from_its_json_text_is_the_same_file(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    meta = {"state": [["vocabulary_", "json", {"caf\xe9": 0, "\ud800": 1, "x\"\\": 2}], ["idf_", "json", [0.1, 1e300]]],
            "names": ["a"]}
    key = cache.make_key("features", name="small", featurizer="tfidf")
    text = cache._entry_json(key, meta, cache._to_json(meta))
    assert text == cache._to_json({"key": key, "meta": meta})
    # the members, byte for byte (the zip's own timestamps may differ by a second)
    first = cache.read_npz(cache.save_entry(key, {"x": np.arange(3)}, meta))
    second = cache.read_npz(cache.save_entry(key, {"x": np.arange(3)}, meta, meta_json=cache._to_json(meta)))
    assert first.keys() == second.keys() and all(first[k].tobytes() == second[k].tobytes() for k in first)
    assert cache.load_entry(key)[1] == meta


@pytest.mark.corpus
def test_chosen_bigrams_have_their_own_entry_and_the_same_model(data_home, tmp_path, monkeypatch):
    """A run whose documents chose bigrams (textcw.learners.ngram_choice; here every document
    counts as short and the wider matrix makes fewer mistakes) caches them under an entry of its
    own: a hit gives the same model file, and a run given ngram_range=(1, 2) does not take it."""
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    monkeypatch.setattr("textcw.learners.ngram_choice.SHORT_TEXT_WORDS", 10**6)
    monkeypatch.setattr("textcw.learners.ngram_choice.probe_mistakes", lambda X, y: -X.shape[1])
    files = []
    for run, use in enumerate([False, True, True]):  # off, then a miss that fills it, then a hit
        cache._parsed.clear()
        result = train("newsgroups:comp", "arow", cache=use, mistake_curve=False)
        assert result.model.textcw_components_["featurizer"]["params"] == {"ngram_range": (1, 2)}
        files.append(tmp_path / f"m{run}.textcw-model")
        save(result.model, files[-1], info={"accuracy": result.accuracy})
    assert files[0].read_bytes() == files[1].read_bytes() == files[2].read_bytes()
    assert sum(e["kind"] == "features" for e in cache.entries()) == 1
    cache._parsed.clear()
    given = train("newsgroups:comp", "arow", featurizer_params={"ngram_range": [1, 2]}, mistake_curve=False)
    assert given.n_features == result.n_features
    assert sum(e["kind"] == "features" for e in cache.entries()) == 2
