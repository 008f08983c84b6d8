"""Spam inboxes read through the parsed-corpus cache: a hit gives back exactly what parsing gave."""

from __future__ import annotations

import numpy as np
import pytest

from textcw.corpus import cache, spam
from textcw.corpus.datahome import RemoteFile


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TEXTCW_DATA", str(tmp_path / "home"))
    monkeypatch.setenv("TEXTCW_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TEXTCW_NO_CACHE", raising=False)
    cache._parsed.clear()
    yield tmp_path
    cache._parsed.clear()


def _counting(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)

    def parse(path):
        calls.append(path)
        return real.__wrapped__(path)
    monkeypatch.setattr(module, name, parse)
    return calls


def _entries(kind="corpus"):
    return [e for e in cache.entries() if e["kind"] == kind]


def test_spam_hit_is_the_same_matrix_and_labels(home, monkeypatch):
    (home / "home" / "spam").mkdir(parents=True)
    remote = RemoteFile(corpus="spam", filename="inbox.tf", url=None, sha256=())
    remote.path.write_text("1 1:3 4:1\n-1 2:2\n-1 3:1 5:7\n")
    calls = _counting(monkeypatch, spam, "read_user")
    X, target = spam.read(remote)
    cache._parsed.clear()
    X2, target2 = spam.read(remote)
    assert len(calls) == 1 and len(_entries()) == 1
    assert X2.shape == X.shape == (3, 5) and X2.dtype == X.dtype and X2.indices.dtype == X.indices.dtype
    assert (X2 != X).nnz == 0 and X2.toarray()[2].tolist() == [0, 0, 1, 0, 7]
    assert target2.tolist() == target.tolist() == [1, 0, 0]


def test_spam_entry_whose_arrays_do_not_fit_is_refused():
    import scipy.sparse as sp

    arrays, meta = spam._encode((sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]])), np.array([1, 0])))
    assert (spam._decode(arrays, meta)[0] != sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))).nnz == 0
    with pytest.raises(ValueError, match="do not fit its shape"):
        spam._decode({**arrays, "indices": arrays["indices"] + 2}, meta)
    with pytest.raises(ValueError):
        spam._decode({**arrays, "indptr": arrays["indptr"][::-1].copy()}, meta)


@pytest.mark.corpus
def test_a_real_inbox_loads_the_same_from_the_cache(data_home, home, monkeypatch):
    import textcw

    monkeypatch.setenv("TEXTCW_DATA", str(data_home))
    cold = textcw.load_corpus("spam:u01", "test")
    assert len(_entries()) == 1
    cache._parsed.clear()
    warm = textcw.load_corpus("spam:u01", "test")
    assert warm.target.tolist() == cold.target.tolist() and warm.target_names == cold.target_names
    assert (warm.data != cold.data).nnz == 0 and warm.data.indices.dtype == cold.data.indices.dtype
