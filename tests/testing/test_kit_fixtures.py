"""The kit's data sets, isolated registries, in-memory corpus and pytest fixtures."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
import textcw
from textcw.errors import UnknownNameError
from textcw.pipeline import load_corpus, train
from textcw.plugins import BUILTIN_PROVIDER, use_registries
from textcw.testing import (
    awkward_documents,
    make_corpus_plugin,
    make_documents,
    make_registries,
    make_sparse_classification,
)
from hang import HANG_SECONDS

# The kit's fixtures (make_registries, binary_data, topic_corpus, ...).
pytest_plugins = ["textcw.testing.fixtures"]


def test_sparse_problem_is_seeded_text_like_and_separable():
    X, y = make_sparse_classification(150, 50, 3, random_state=5, label_names=("a", "b", "c"))
    X2, y2 = make_sparse_classification(150, 50, 3, random_state=5, label_names=("a", "b", "c"))
    assert isinstance(X, sp.csr_matrix) and X.dtype == np.float64 and X.shape == (150, 50)
    assert (X != X2).nnz == 0 and np.array_equal(y, y2)
    assert (make_sparse_classification(150, 50, 3, random_state=6)[0] != X).nnz > 0
    assert X.has_sorted_indices and np.all(X.data >= 1) and np.all(X.data <= 3)
    assert sorted(set(y)) == ["a", "b", "c"] and np.all(np.bincount(np.searchsorted(["a", "b", "c"], y)) == 50)
    # Separable by construction: each row's heaviest block of 8 features is its class's.
    blocks = np.column_stack([np.asarray(X[:, 8 * k:8 * k + 8].sum(axis=1)).ravel() for k in range(3)])
    assert np.array_equal(np.array(["a", "b", "c"])[np.argmax(blocks, axis=1)], y)
    assert np.all(blocks.max(axis=1) > 0) and np.all(np.sort(blocks, axis=1)[:, -2] == 0)


def test_sparse_problem_refuses_impossible_shapes():
    with pytest.raises(ValueError, match="n_features >= n_classes"):
        make_sparse_classification(10, 20, 3)
    with pytest.raises(ValueError, match="label_names must hold 2 names"):
        make_sparse_classification(10, 60, 2, label_names=("only-one",))


def test_documents_are_seeded_and_on_two_topics():
    docs, labels = make_documents(10, random_state=3)
    assert len(docs) == 20 and all(isinstance(d, str) and d for d in docs)
    assert sorted(set(labels)) == ["medicine", "space"] and (labels == "space").sum() == 10
    assert make_documents(10, random_state=3)[0] == docs
    assert make_documents(10, random_state=4)[0] != docs


def test_awkward_documents_are_awkward():
    docs = awkward_documents()
    assert "" in docs
    undecodable = [d for d in docs if isinstance(d, bytes)]
    with pytest.raises(UnicodeDecodeError):
        undecodable[0].decode("utf-8")
    assert any(isinstance(d, str) and not d.isascii() for d in docs)


def test_isolated_registries_hold_builtins_and_the_given_plugins_only():
    corpus = make_corpus_plugin("tiny", (["a b", "c d"], ["x", "y"]), (["a", "c"], ["x", "y"]))
    regs = make_registries(corpus)
    assert "perceptron" in regs.learners and "tiny" in regs.corpora
    assert "tiny" not in make_registries().corpora
    assert {e.provider for e in make_registries().learners} == {BUILTIN_PROVIDER}
    assert regs.corpora.get("tiny").provider == "textcw.testing:tiny"


def test_in_memory_corpus_trains_end_to_end():
    corpus = make_corpus_plugin("topics", make_documents(20, random_state=0),
                                make_documents(20, random_state=1))
    with use_registries(make_registries(corpus)):
        test = load_corpus("topics", split="test")
        assert test.target_names == ["medicine", "space"] and len(test) == 40
        assert np.array_equal(test.labels, make_documents(20, random_state=1)[1])
        result = train("topics", "perceptron")
        assert result.n_train == 40 and result.accuracy >= 0.9
        with pytest.raises(UnknownNameError, match="task of corpus 'topics'"):
            load_corpus("topics:sub")
        with pytest.raises(UnknownNameError, match="split"):
            load_corpus("topics", split="validation")
    with pytest.raises(ValueError, match="2 documents but labels of shape"):
        make_corpus_plugin("bad", (["a", "b"], ["x"]), (["a"], ["x"]))


def test_fixtures_give_what_they_promise(binary_data, multiclass_data, text_documents,
                                         awkward_docs, make_registries, make_plugin_manager,
                                         topic_corpus):
    X, y = binary_data
    assert X.shape == (200, 60) and sorted(set(y)) == ["neg", "pos"]
    X, y = multiclass_data
    assert X.shape == (200, 60) and sorted(set(y)) == ["alpha", "beta", "gamma"]
    docs, labels = text_documents
    assert len(docs) == len(labels) == 40
    assert awkward_docs == awkward_documents()
    pm = make_plugin_manager(topic_corpus)
    assert pm.is_registered(topic_corpus)
    with use_registries(make_registries(topic_corpus)):
        assert textcw.load_corpus("topics").name == "topics"


def test_fixtures_load_through_pytest_plugins(tmp_path):
    """The documented one-liner in a plugin's conftest.py makes every fixture available."""
    (tmp_path / "conftest.py").write_text('pytest_plugins = ["textcw.testing.fixtures"]\n')
    (tmp_path / "test_uses_fixtures.py").write_text(textwrap.dedent('''
        import textcw
        from textcw.pipeline import train
        from textcw.plugins import use_registries

        def test_all(make_registries, make_plugin_manager, binary_data, multiclass_data,
                     text_documents, awkward_docs, topic_corpus):
            with use_registries(make_registries(topic_corpus)):
                model = textcw.make_learner("perceptron").fit(*binary_data)
                assert set(model.predict(binary_data[0])) <= {"neg", "pos"}
                assert train("topics", "perceptron").accuracy >= 0.9
    '''))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                          str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, timeout=HANG_SECONDS)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
