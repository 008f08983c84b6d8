"""The Python entry points under malformed user data: a textcw error, or the right result.

``load_corpus`` on fuzzed ``folder:`` layouts and svmlight files, the featurizers'
``fit_transform``/``transform`` on fuzzed documents, and ``pipeline.train`` end to end. No
input may escape as a raw numpy, scipy, scikit-learn, ``UnicodeDecodeError`` or ``OSError``
traceback: every failure is a :class:`~textcw.errors.TextcwError` whose message says what is
wrong. Successes are checked against what the input holds (see ``bad_data``).
"""

from __future__ import annotations

import itertools
import os
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from bad_data import (
    Layout,
    decoded,
    document_bytes,
    expect_folder,
    expect_svmlight,
    folder_layouts,
    good_layout,
    has_words,
    is_hidden,
    label_names,
    label_of,
    svmlight_files,
    unreadable,
)
from hypothesis import event, given, settings
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st

import textcw
from textcw.errors import DataError, InputError, ParameterError, TextcwError
from textcw.pipeline import make_featurizer, train

_counter = itertools.count()


def fresh_dir(base: Path) -> Path:
    path = base / f"ex{next(_counter)}"
    path.mkdir()
    return path


def outcome(fn, *args, **kwargs):
    """``fn(...)``, or the :class:`TextcwError` it raised; any other exception fails the test."""
    try:
        result = fn(*args, **kwargs)
    except TextcwError as exc:
        message = str(exc)
        assert message and "\n" not in message, f"not a one-line message: {message!r}"
        result = exc
    if currently_in_test_context():  # which outcomes the examples reach (--hypothesis-show-statistics)
        event(f"{type(result).__name__}: {re.sub(r'(/[^ ]*)|[0-9]+', '_', str(result))[:60]}"
              if isinstance(result, Exception) else "ok")
    return result


def check_error(result, fragments: list[str], kind=TextcwError) -> None:
    assert isinstance(result, kind), f"{result!r} is not a {kind.__name__} naming {fragments}"
    assert any(f in str(result) for f in fragments), f"{result} names none of {fragments}"


# ------------------------------------------------------------------------------- folder:PATH
@given(layout=st.one_of(folder_layouts(),
                        folder_layouts(min_classes=2, class_names=label_names, faults=False)))
def test_load_folder(tmp_path, layout):
    root = os.fsdecode(layout.write(fresh_dir(tmp_path) / "corpus"))
    expected = expect_folder(layout, train=False)
    train_set = outcome(textcw.load_corpus, f"folder:{root}", "train")
    test_set = outcome(textcw.load_corpus, f"folder:{root}", "test")
    if expected.errors:
        check_error(train_set, expected.errors, (DataError, InputError))
        check_error(test_set, expected.errors, (DataError, InputError))
        return
    assert not isinstance(train_set, Exception) and not isinstance(test_set, Exception), train_set
    assert train_set.target_names == test_set.target_names == expected.labels
    # every visible document exactly once, decoded UTF-8 (a BOM dropped) or else Latin-1
    loaded = Counter(zip(list(train_set.data) + list(test_set.data),
                         list(train_set.labels) + list(test_set.labels)))
    written = Counter((decoded(content), label_of(folder))
                      for folder, files in layout.classes.items() if not is_hidden(folder)
                      for name, content in files if not is_hidden(name))
    assert loaded == written
    assert len(train_set) + len(test_set) == expected.n_docs
    # stratified: with two or more documents per class, the training split holds every class
    assert set(np.unique(train_set.target)) == set(range(len(expected.labels)))


@settings(max_examples=40)
@given(layout=folder_layouts(min_classes=2, max_classes=3, class_names=label_names, faults=False),
       learner=st.sampled_from(["perceptron", "pa", "cw-var", "arow", "cw-stdev"]),
       featurizer=st.sampled_from(["binary-bow", "bigram-counts", "hashing", "tfidf"]))
def test_train_on_folder(tmp_path, layout, learner, featurizer):
    root = os.fsdecode(layout.write(fresh_dir(tmp_path) / "corpus"))
    expected = expect_folder(layout, train=featurizer != "hashing")
    result = outcome(train, f"folder:{root}", learner, featurizer=featurizer, epochs=1)
    if isinstance(result, Exception):
        assert expected.errors, f"a well-formed corpus failed: {result}"
        check_error(result, expected.errors, (DataError, InputError))
        return
    assert not expected.must_fail, f"trained, but must fail with one of {expected.errors}"
    assert result.n_train + result.n_test == expected.n_docs
    assert 0.0 <= result.accuracy <= 1.0
    labels = result.model.predict(["alpha beta", "", "\x00\ufffd", "caf\xe9"])
    assert set(labels) <= set(expected.labels)


def test_symlinks_pipes_and_unreadable_files(tmp_path, monkeypatch):
    root = Path(os.fsdecode(good_layout(per_class=5).write(tmp_path / "corpus")))
    os.symlink(root / "class0" / "000.txt", root / "class1" / "link.txt")
    os.symlink(root, root / "class0" / "loop")
    os.mkfifo(root / "class0" / "pipe")
    (root / "class0" / ".hidden").write_text("ignored")
    both = [textcw.load_corpus(f"folder:{root}", split) for split in ("train", "test")]
    assert sum(len(d) for d in both) == 11
    assert sum(d.startswith("alpha beta doc0") for s in both for d in s.data) == 2  # and the link

    os.symlink(root / "nothing.txt", root / "class1" / "broken.txt")
    with pytest.raises(DataError, match="broken.txt is a symbolic link to a file that does not exist"):
        textcw.load_corpus(f"folder:{root}")
    os.unlink(root / "class1" / "broken.txt")

    target = root / "class1" / "002.txt"
    try:
        unreadable(target, monkeypatch)
        with pytest.raises(DataError, match="Permission denied; fix its permissions or remove it"):
            textcw.load_corpus(f"folder:{root}")
    finally:
        os.chmod(target, 0o644)


def test_root_that_is_not_a_folder(tmp_path):
    (tmp_path / "file.txt").write_text("hello")
    for root, message in [(tmp_path / "file.txt", r"not found \(or not a folder\)"),
                          (tmp_path / "missing", r"not found \(or not a folder\)")]:
        with pytest.raises(DataError, match=message):
            textcw.load_corpus(f"folder:{root}")
    with pytest.raises(InputError, match="folder:PATH"):
        textcw.load_corpus("folder:  ")


def test_label_name_checks(tmp_path):
    bad = good_layout(labels=[b"fine", b"two\nlines"]).write(tmp_path / "a")
    with pytest.raises(DataError, match=r"two\\nlines has a line break \(U\+000A\)"):
        textcw.load_corpus(f"folder:{os.fsdecode(bad)}")
    nel = good_layout(labels=[b"fine", b"x\x85y"]).write(tmp_path / "b")  # Latin-1 NEL
    with pytest.raises(DataError, match=r"has a line break \(U\+0085\)"):
        textcw.load_corpus(f"folder:{os.fsdecode(nel)}")
    same = good_layout(labels=["ñ".encode(), b"\xf1"]).write(tmp_path / "c")
    with pytest.raises(DataError, match="both read as the label 'ñ'"):
        textcw.load_corpus(f"folder:{os.fsdecode(same)}")
    latin = good_layout(labels=[b"\xe9t\xe9", "été".encode() + b"2"]).write(tmp_path / "d")
    assert textcw.load_corpus(f"folder:{os.fsdecode(latin)}").target_names == ["été", "été2"]


def test_new_empty_class_folder_is_seen(tmp_path):
    """The loader's cache must not hide a class folder added after a first load."""
    root = Path(os.fsdecode(good_layout().write(tmp_path / "corpus")))
    textcw.load_corpus(f"folder:{root}")
    (root / "new-class").mkdir()
    with pytest.raises(DataError, match="new-class has no files"):
        textcw.load_corpus(f"folder:{root}")


# ---------------------------------------------------------------------------------- svmlight
@given(data=st.one_of(svmlight_files(), svmlight_files(min_docs=8, fault_rate=0.0)))
def test_load_svmlight(tmp_path, data):
    path = fresh_dir(tmp_path) / "data.svm"
    path.write_bytes(data.content)
    expected = expect_svmlight(data)
    if "accepts feature values up to" in expected.errors:  # the learners' limit, not the loader's
        expected.errors, expected.may_succeed = [], False
    train_set = outcome(textcw.load_corpus, f"svmlight:{path}", "train")
    if expected.errors:
        check_error(train_set, expected.errors, (DataError, InputError))
        if data.fault is not None:
            assert str(train_set).startswith(f"{path}, line {data.fault_line}: ")
        return
    assert not isinstance(train_set, Exception), f"a well-formed file failed: {train_set}"
    test_set = textcw.load_corpus(f"svmlight:{path}", "test")
    assert train_set.target_names == expected.labels
    assert len(train_set) + len(test_set) == expected.n_docs
    for part in (train_set, test_set):
        assert sp.issparse(part.data) and np.all(np.isfinite(part.data.data))
        if expected.n_features is not None:
            assert part.data.shape[1] == expected.n_features
    written = Counter(str(int(v)) if v.is_integer() else repr(v) for v in data.labels)
    assert Counter(list(train_set.labels) + list(test_set.labels)) == written


@settings(max_examples=30)
@given(train_file=svmlight_files(min_docs=1, fault_rate=0.2),
       test_file=svmlight_files(min_docs=1, fault_rate=0.2, max_feature=60))
def test_load_svmlight_pair(tmp_path, train_file, test_file):
    base = fresh_dir(tmp_path)
    (base / "a.svm").write_bytes(train_file.content)
    (base / "b.svm").write_bytes(test_file.content)
    spec = f"svmlight:{base / 'a.svm'},{base / 'b.svm'}"
    expected = expect_svmlight(train_file, test_file)
    if "accepts feature values up to" in expected.errors:
        expected.errors, expected.may_succeed = [], False
    result = outcome(textcw.load_corpus, spec, "test")
    if expected.errors:
        check_error(result, expected.errors, (DataError, InputError))
        return
    assert not isinstance(result, Exception), f"well-formed files failed: {result}"
    train_set = textcw.load_corpus(spec, "train")
    assert (len(train_set), len(result)) == (len(train_file.labels), len(test_file.labels))
    assert train_set.data.shape[1] == result.data.shape[1]  # one width for both
    if expected.n_features is not None:
        assert result.data.shape[1] == expected.n_features


@settings(max_examples=30)
@given(data=svmlight_files(min_docs=8, fault_rate=0.1),
       learner=st.sampled_from(["perceptron", "pa", "cw-var", "arow"]))
def test_train_on_svmlight(tmp_path, data, learner):
    path = fresh_dir(tmp_path) / "data.svm"
    path.write_bytes(data.content)
    expected = expect_svmlight(data)
    result = outcome(train, f"svmlight:{path}", learner, epochs=1)
    if isinstance(result, Exception):
        assert expected.errors, f"a well-formed file failed: {result}"
        check_error(result, expected.errors)
        return
    assert not expected.must_fail, f"trained, but must fail with one of {expected.errors}"
    assert result.featurizer == "precomputed" and 0.0 <= result.accuracy <= 1.0
    assert result.n_train + result.n_test == expected.n_docs


def test_svmlight_reader_errors_name_the_file(tmp_path):
    import bz2
    import gzip

    varied = "".join(f"{(-1) ** i} {i % 7 + 1}:{i * 0.37:.3f} 9:{i}\n" for i in range(400))
    cut_gzip = gzip.compress(varied.encode())
    cut_gzip = cut_gzip[: len(cut_gzip) // 2]  # the deflate stream stops half way
    cases = {
        "bad.svm.gz": (b"not gzip at all", "cannot read svmlight file"),
        "cut.svm.gz": (cut_gzip, "cannot read svmlight file"),
        "bad.svm.bz2": (b"not bz2", "cannot read svmlight file"),
        "ok.svm.bz2": (bz2.compress(b"\xef\xbb\xbf" + b"1 1:1\n-1 2:1\n" * 5), None),
        "utf16.svm": ("1 1:1\n-1 2:1\n".encode("utf-16"), "line 1: the file is UTF-16 text"),
        "huge.svm": (b"1 1:1\n-1 2:1\n1 99999999999999999999:1\n", "line 3: the index in"),
    }
    for name, (content, fragment) in cases.items():
        path = tmp_path / name
        path.write_bytes(content)
        result = outcome(textcw.load_corpus, f"svmlight:{path}")
        if fragment is None:
            assert len(result) == 8, name
        else:
            check_error(result, [fragment], DataError)
            assert str(path) in str(result)
    with pytest.raises(DataError, match="is a folder; give the svmlight file"):
        textcw.load_corpus(f"svmlight:{tmp_path}")


# ------------------------------------------------------------------------------- featurizers
odd_documents = st.one_of(
    document_bytes,
    document_bytes.map(lambda b: b.decode("latin-1")),
    st.text(max_size=40),  # lone surrogates included
    st.sampled_from([None, 3, 2.5, float("nan"), {"a": 1}, ["word list"], b"", "", np.str_("np str"),
                     np.bytes_(b"np bytes")]),
)


def is_text(doc) -> bool:
    return isinstance(doc, (str, bytes))


def has_any_word(docs) -> bool:
    return any(has_words(d if isinstance(d, str) else d.decode("utf-8", "replace")) for d in docs)


@given(fit_docs=st.lists(odd_documents, max_size=8), new_docs=st.lists(odd_documents, max_size=4),
       name=st.sampled_from(["binary-bow", "bigram-counts", "hashing", "tfidf"]))
def test_text_featurizers(fit_docs, new_docs, name):
    featurizer = make_featurizer(name, **({"n_features": 64} if name == "hashing" else {}))
    X = outcome(featurizer.fit_transform, fit_docs)
    if not all(map(is_text, fit_docs)):
        bad = next(i for i, d in enumerate(fit_docs) if not is_text(d))
        check_error(X, [f"document {bad} is {type(fit_docs[bad]).__name__}"], InputError)
        return
    if name != "hashing" and not has_any_word(fit_docs):
        check_error(X, ["no training documents" if not fit_docs else "found no words"], InputError)
        return
    assert not isinstance(X, Exception), X
    assert sp.issparse(X) and X.shape[0] == len(fit_docs) and X.shape[1] >= 1
    assert np.all(np.isfinite(X.data)) and np.all(X.data >= 0)
    Y = outcome(featurizer.transform, new_docs)
    if not all(map(is_text, new_docs)):
        check_error(Y, ["featurizes text"], InputError)
        return
    assert Y.shape == (len(new_docs), X.shape[1])
    assert (featurizer.transform(fit_docs) != X).nnz == 0  # deterministic


@pytest.mark.parametrize("name", ["binary-bow", "bigram-counts", "hashing", "tfidf"])
@pytest.mark.parametrize("docs,message", [
    ("one string", "not a single string"),
    (b"one bytes", "not a single string"),
    (np.zeros((2, 3)), "already numeric vectors"),
    (sp.eye(2, format="csr"), "already numeric vectors"),
    ([{"a": 1}], "not dict"),
    (["ok", None], "document 1 is NoneType"),
])
def test_text_featurizers_refuse_what_is_not_text(name, docs, message):
    with pytest.raises(InputError, match=message):
        make_featurizer(name).fit_transform(docs)


def test_text_featurizer_stream_with_a_non_text_item():
    with pytest.raises(InputError, match="featurizes text"):
        make_featurizer("binary-bow").fit_transform(d for d in ["good words", 7])
    feat = make_featurizer("hashing", n_features=16).fit(["a b"])
    with pytest.raises(InputError, match="featurizes text"):
        feat.transform(d for d in ["good words", None])
    assert feat.transform([]).shape == (0, 16)  # no documents: no rows


def test_bag_of_words_pruning_parameters():
    docs = ["alpha beta", "gamma delta"]
    with pytest.raises(ParameterError, match="lower min_df or raise max_df"):
        make_featurizer("binary-bow", min_df=0.9, max_df=0.1).fit(docs)
    with pytest.raises(InputError, match="kept no words"):
        make_featurizer("binary-bow", min_df=2).fit(docs)
    with pytest.raises(ParameterError):
        from textcw.features.text import binary_bow

        binary_bow(max_features=-1).fit(docs)


finite = st.floats(-1e6, 1e6)
special = st.sampled_from([float("nan"), float("inf"), float("-inf"), 1e300, -1e-300, 0.0])
cells = st.one_of(finite, special)


@given(rows=st.integers(1, 5), cols=st.integers(0, 5), data=st.data(),
       form=st.sampled_from(["csr", "dense", "list", "rows", "mappings"]))
def test_precomputed(rows, cols, data, form):
    values = np.array(data.draw(st.lists(st.lists(cells, min_size=cols, max_size=cols),
                                         min_size=rows, max_size=rows)), dtype=float)
    values = values.reshape(rows, cols)
    if form == "csr":
        X = sp.csr_matrix(values)
    elif form == "dense":
        X = values
    elif form == "list":
        X = values.tolist()
    elif form == "rows":
        X = [sp.csr_matrix(row.reshape(1, -1)) for row in values]
    else:
        X = [{f"f{j}": v for j, v in enumerate(row) if v != 0} for row in values]
    feat = make_featurizer("precomputed")
    out = outcome(feat.fit_transform, X)
    if not np.all(np.isfinite(values)):
        bad_row = int(np.flatnonzero(~np.isfinite(values).all(axis=1))[0])
        check_error(out, [f"not finite (NaN or infinity) in row {bad_row}"], InputError)
        return
    assert not isinstance(out, Exception), out
    assert sp.issparse(out) and out.shape[0] == rows
    if form != "mappings":
        assert np.array_equal(out.toarray(), values)
    else:  # the columns are the features seen, in sorted order
        assert sorted(out.toarray().ravel()[out.toarray().ravel() != 0]) == \
            sorted(values.ravel()[values.ravel() != 0])


@pytest.mark.parametrize("fit_on,then,message", [
    (np.eye(2), np.array([[np.nan, 0.0]]), "not finite"),
    ([{"a": 1.0}], [{"a": float("inf")}], "not finite"),
    ([{1: 1.0, "a": 2.0}], None, r"feature names \(all str, or all numbers\)"),
    ([{"a": {"nested": 1}}], None, "expects mappings from feature names"),
    ([sp.csr_matrix([[1.0, 2.0]]), sp.csr_matrix([[1.0, 2.0, 3.0]])], None, "different widths"),
    ([[1, 2], [3]], None, "numeric rows"),
])
def test_precomputed_refusals(fit_on, then, message):
    feat = make_featurizer("precomputed")
    with pytest.raises(InputError, match=message):
        feat.fit(fit_on)
        feat.transform(then)


# ---------------------------------------------------------------------------- pipeline.train
def test_train_reports_single_label_training_split(tmp_path):
    (tmp_path / "a.svm").write_text("1 1:1\n1 2:1\n1 3:1\n")
    (tmp_path / "b.svm").write_text("-1 1:1\n1 2:1\n")
    with pytest.raises(InputError, match=r"training split of svmlight:.* has a single label \(1\)"):
        train(f"svmlight:{tmp_path / 'a.svm'},{tmp_path / 'b.svm'}", "pa")


def test_train_out_of_memory_is_a_clear_error(tmp_path, monkeypatch):
    from textcw.learners.perceptron import Perceptron

    def no_memory(self, X, y, **kwargs):
        raise MemoryError()

    monkeypatch.setattr(Perceptron, "fit", no_memory)
    root = os.fsdecode(good_layout().write(tmp_path / "corpus"))
    with pytest.raises(InputError, match="not enough memory to train 'perceptron' on"):
        train(f"folder:{root}", "perceptron")


def test_train_documents_without_words(tmp_path):
    layout = Layout({b"a": [(f"{i}".encode(), b"! ? .") for i in range(5)],
                     b"b": [(f"{i}".encode(), b"x y z") for i in range(5)]})
    root = os.fsdecode(layout.write(tmp_path / "corpus"))
    with pytest.raises(InputError, match="found no words in the 8 training documents"):
        train(f"folder:{root}", "perceptron")
    result = train(f"folder:{root}", "perceptron", featurizer="hashing")  # no vocabulary needed
    assert result.n_train == 8 and 0.0 <= result.accuracy <= 1.0
