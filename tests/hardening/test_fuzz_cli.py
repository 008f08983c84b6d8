"""The command line under malformed user data: it works, or it says what is wrong in one line.

Every run goes through ``textcw.cli.main`` in-process (a few through a real ``python -m
textcw.cli`` process) on corpora built from hypothesis-generated content. The contract checked
on every run:

- the exit code is 0, 1 or 2 (1 for bad data, 2 for bad names and parameters);
- on failure stderr is exactly one line, ``error: ...``, naming the problem; never a
  traceback, never the catch-all ``unexpected ...`` that signals a bug;
- on success the output is well formed: one known label per document, accuracies in [0, 1],
  as many documents as the input holds.

Where the outcome follows from the input (see ``bad_data``), the test also checks which error,
or that it succeeds.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from bad_data import (
    WORDS,
    Layout,
    decoded,
    document_bytes,
    expect_folder,
    expect_svmlight,
    folder_layouts,
    good_layout,
    is_hidden,
    label_names,
    label_of,
    names,
    svmlight_files,
    unreadable,
)
from hypothesis import event, given, settings
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st

from cli_run import run
from textcw.cli import main
from textcw.untrusted import safe_text
from hang import HANG_SECONDS

FAST_LEARNERS = ["perceptron", "pa", "cw-var", "arow"]
_counter = itertools.count()


# ------------------------------------------------------------------------------------ helpers

def contract(code, out: str, err: str) -> str | None:
    """Check the contract every run must keep; the error line on failure, else ``None``."""
    if currently_in_test_context():  # which outcomes the examples reach (--hypothesis-show-statistics)
        event("ok" if code == 0 else "error: " + _kind_of_error(err))
    assert code in (0, 1, 2), f"exit code {code!r}; stderr: {err}"
    assert "Traceback" not in out and "Traceback" not in err, err
    if code == 0:
        return None
    if code == 2 and is_usage_text(out + err):
        return "error: " + " ".join(err.split())  # typer's own usage error: usage, hint, message
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), f"not one error line: {err!r}"
    assert "unexpected" not in lines[0], f"the catch-all for bugs fired: {lines[0]}"
    assert len(lines[0]) > len("error: ") + 10
    return lines[0]


def is_usage_text(text: str) -> bool:
    """typer's answer to a bad command line: its error panel, usually after the usage line and
    where to get help (for no arguments at all, the whole help)."""
    usage = "Usage: textcw" in text and ("for help" in text or "Commands" in text)
    return (usage or "─ Error ─" in text) and "error: unexpected" not in text and "Traceback" not in text


# Words of every kind a command line can hold. Nothing here starts long work: the only corpus
# that could load is tiny, experiments are not named, and --install-completion is left out
# (it would edit the shell's start-up file).
CLI_WORDS = ["train", "predict", "list", "evaluate", "export", "import", "inspect", "plugins",
             "reproduce", "trian", "learners", "corpora", "--corpus", "--learner", "--lerner",
             "--epochs", "--param", "--featurizer-param", "--json", "--json-out", "--seed", "--shards",
             "--stream", "--chunk-size", "--out", "--folds", "--quick", "-q", "-v", "--version", "-h",
             "--help", "three", "-1", "0", "1e9", "eta=2", "eta", "x=1=2", "", "synthetic-text:200",
             "newsgroups:nope", "cw-stdev", "cw-stedv", "pa", "nb", "m.joblib", "\x1b[31mred", "a\nb"]


@settings(max_examples=150, deadline=None)
@given(argv=st.lists(st.one_of(st.sampled_from(CLI_WORDS), st.text(max_size=6)), max_size=7))
def test_any_command_line_keeps_the_contract(capsys, tmp_path, monkeypatch, argv):
    """Usage errors included: exit 0, 1 or 2, one error line or typer's usage text, never the
    catch-all for bugs, never a traceback."""
    monkeypatch.chdir(tmp_path)  # whatever a command writes lands here
    contract(*run(capsys, *argv))


def _kind_of_error(err: str) -> str:
    """The gist of an error line, without paths (for hypothesis' statistics)."""
    import re

    return re.sub(r"(/[^ ]*)|'[^']*'|\d+", "_", err.strip())[:70]


def fresh_dir(base: Path) -> Path:
    """A new folder per hypothesis example (the function-scoped tmp_path is shared by them)."""
    path = base / f"ex{next(_counter)}"
    path.mkdir()
    return path


def expect_failure(line: str | None, code, fragments: list[str], exit_code: int = 1) -> None:
    assert line is not None, f"succeeded, but the input must fail with one of {fragments}"
    assert code == exit_code, line
    assert any(f in line for f in fragments), f"{line!r} names none of {fragments}"


def succeeded_as_expected(code, out: str, err: str, expected) -> bool:
    """True when the run succeeded and was allowed to; a failure must be one it expected."""
    line = contract(code, out, err)
    if line is not None:
        assert expected.errors, f"well-formed input failed: {line}"
        expect_failure(line, code, expected.errors)
        return False
    assert not expected.must_fail, f"succeeded, but must fail with one of {expected.errors}"
    return True


def predicted_lines(out: str) -> list[str]:
    assert out.endswith("\n") or out == "", repr(out)
    return out.split("\n")[:-1]


def predicted_file_labels(out: str, paths) -> list[str]:
    """The labels of ``predict FILE...`` output, after checking each line is ``PATH<TAB>label``
    for the files in order, with the path escaped onto one line."""
    rows = [line.split("\t") for line in predicted_lines(out)]
    assert [len(row) for row in rows] == [2] * len(paths), rows
    assert [row[0] for row in rows] == [safe_text(os.fsdecode(p), limit=None) for p in paths]
    return [row[1] for row in rows]


def visible_docs(layout: Layout, root: bytes) -> list[bytes]:
    return [os.path.join(root, folder, name) for folder, files in layout.classes.items()
            if not is_hidden(folder) for name, _ in files if not is_hidden(name)]


@pytest.fixture(scope="module")
def text_model(tmp_path_factory) -> tuple[Path, list[str]]:
    """A model trained on a small text corpus whose labels look like numbers."""
    root = tmp_path_factory.mktemp("text")
    labels = [b"1", b"01", b"-1.0"]
    good_layout(labels=labels, per_class=8).write(root / "corpus")
    model = root / "model.joblib"
    with contextlib.redirect_stdout(io.StringIO()):
        main(["train", "--corpus", f"folder:{root / 'corpus'}", "--learner", "cw-var",
              "--epochs", "1", "--out", str(model)])
    return model, [label.decode() for label in labels]


@pytest.fixture(scope="module")
def vector_model(tmp_path_factory) -> Path:
    """A model trained on an svmlight corpus (precomputed features)."""
    root = tmp_path_factory.mktemp("vectors")
    lines = [f"1 1:{1 + i % 3} 3:1" if i % 2 else f"-1 2:{1 + i % 3} 4:1" for i in range(20)]
    (root / "train.svm").write_text("\n".join(lines) + "\n")
    model = root / "model.joblib"
    with contextlib.redirect_stdout(io.StringIO()):
        main(["train", "--corpus", f"svmlight:{root / 'train.svm'}", "--learner", "pa",
              "--out", str(model)])
    return model


# ------------------------------------------------------------------------- train on folders
def train_and_predict(capsys, base: Path, layout: Layout, learner: str, featurizer: str) -> None:
    root = layout.write(base / "corpus")
    model = base / "model.joblib"
    expected = expect_folder(layout, train=featurizer != "hashing")
    code, out, err = run(capsys, "train", "--corpus", b"folder:" + root, "--learner", learner,
                         "--featurizer", featurizer, "--epochs", "1", "--out", model, "--json")
    if not succeeded_as_expected(code, out, err, expected):
        return
    assert err == f"saved {os.fsdecode(model)}\n"
    result = json.loads(out)
    assert result["n_train"] + result["n_test"] == expected.n_docs
    assert 0.0 <= result["accuracy"] <= 1.0 and result["n_features"] >= 1

    docs = visible_docs(layout, root)[:6]
    code, out, err = run(capsys, "predict", model, *docs)
    assert contract(code, out, err) is None and err == ""
    predicted = predicted_file_labels(out, docs)
    assert set(predicted) <= set(expected.labels), predicted


@given(layout=folder_layouts(min_classes=2, class_names=label_names, faults=False),
       learner=st.sampled_from(FAST_LEARNERS),
       featurizer=st.sampled_from(["binary-bow", "bigram-counts", "hashing"]))
def test_train_and_predict_on_fuzzed_documents(capsys, tmp_path, layout, learner, featurizer):
    """Label folders that make valid labels, documents of any bytes: it trains and predicts,
    unless no training document holds a word or the split cannot hold every class."""
    train_and_predict(capsys, fresh_dir(tmp_path), layout, learner, featurizer)


@given(layout=folder_layouts(), learner=st.sampled_from(FAST_LEARNERS))
def test_train_on_any_folder_layout(capsys, tmp_path, layout, learner):
    """Any names (control characters, random bytes), empty and hidden folders and files."""
    train_and_predict(capsys, fresh_dir(tmp_path), layout, learner, "binary-bow")


@settings(max_examples=30)
@given(layout=st.one_of(folder_layouts(max_classes=3, max_docs=5),
                        folder_layouts(min_classes=2, max_classes=3, class_names=label_names,
                                       faults=False)))
def test_evaluate_on_fuzzed_folders(capsys, tmp_path, layout):
    base = fresh_dir(tmp_path)
    root = layout.write(base / "corpus")
    report = base / "report.json"
    expected = expect_folder(layout, train=False)
    code, out, err = run(capsys, "evaluate", "--corpus", b"folder:" + root, "--learner",
                         "perceptron", "--folds", "2", "--json-out", report)
    line = contract(code, out, err)
    if expected.errors:  # the loader's errors come first
        expect_failure(line, code, expected.errors)
        return
    if line is not None:  # the folds may not fit (fewer documents of a class than folds), or
        # a fold's training part may hold no word
        assert any(f in line for f in ("fewer than the 2 folds", "found no words")), line
        return
    cells = json.loads(report.read_text())["cells"]
    assert len(cells) == 1 and cells[0]["fold_errors"]
    assert all(0.0 <= e <= 100.0 for e in cells[0]["fold_errors"])
    assert len(cells[0]["outcomes"]) == expected.n_docs and set(cells[0]["outcomes"]) <= set("01")


# ------------------------------------------------------------------------------------ predict
@given(docs=st.lists(document_bytes, min_size=1, max_size=5), file_names=st.lists(names, min_size=5,
                                                                       max_size=5, unique=True))
def test_predict_labels_every_fuzzed_file(capsys, tmp_path, text_model, docs, file_names):
    model, labels = text_model
    base = fresh_dir(tmp_path)
    paths = []
    for name, content in zip(file_names, docs):
        path = os.path.join(os.fsencode(base), name)
        with open(path, "wb") as fh:
            fh.write(content)
        paths.append(path)
    code, out, err = run(capsys, "predict", model, *paths)
    assert contract(code, out, err) is None and err == ""
    assert set(predicted_file_labels(out, paths)) <= set(labels)


@given(data=st.one_of(st.binary(max_size=400),
                      st.lists(document_bytes, max_size=6).map(b"\n".join),
                      st.lists(st.sampled_from(WORDS), max_size=20).map(" ".join).map(str.encode),
                      st.sampled_from([b"", b"\n", b"\r\n", b"\n\n\n", b"\x00\n", b"\xff\xfe\n"])),
       proba=st.booleans())
def test_predict_labels_every_fuzzed_stdin_line(capsys, text_model, data, proba):
    model, labels = text_model
    code, out, err = run(capsys, "predict", model, *(["--proba"] if proba else []), stdin=data)
    assert contract(code, out, err) is None and err == ""
    n_lines = len(io.BytesIO(data).readlines())  # one document per line, as the CLI reads them
    rows = predicted_lines(out)
    assert len(rows) == n_lines
    for row in rows:
        label, _, p = row.partition("\t") if proba else (row, "", "")
        assert label in labels
        if proba:
            assert 0.0 <= float(p) <= 1.0


def test_predict_on_a_document_in_an_unexpected_encoding(capsys, tmp_path, text_model):
    model, labels = text_model
    docs = []
    for k, encoding in enumerate(["utf-16", "utf-32", "latin-1", "cp1252", "shift_jis"]):
        docs.append(tmp_path / f"doc{k}.txt")
        docs[-1].write_bytes(f"{WORDS[2]} {WORDS[3]} café 東京".encode(encoding, "replace"))
    code, out, err = run(capsys, "predict", model, *docs)
    assert contract(code, out, err) is None
    assert set(predicted_file_labels(out, docs)) <= set(labels)


def test_predict_decodes_files_as_training_did(capsys, tmp_path):
    """A Latin-1 file gets the words it was trained with, not U+FFFD-split fragments."""
    layout = Layout({b"french": [(f"{i}.txt".encode(), "caf\xe9 cr\xe8me".encode("latin-1"))
                                 for i in range(6)],
                     b"other": [(f"{i}.txt".encode(), b"caf cr me zzz") for i in range(6)]})
    root = layout.write(tmp_path / "corpus")
    model = tmp_path / "m.joblib"
    code, out, err = run(capsys, "train", "--corpus", b"folder:" + root, "--learner", "perceptron",
                         "--out", model)
    assert contract(code, out, err) is None
    doc = tmp_path / "doc.txt"
    doc.write_bytes("caf\xe9 cr\xe8me".encode("latin-1"))
    code, out, err = run(capsys, "predict", model, doc)
    assert contract(code, out, err) is None and out == f"{doc}\tfrench\n"


@pytest.mark.parametrize("stdin,expected_lines", [(b"", 0), (b"\n", 1), (b"\r\n", 1),
                                                  (b"\n\n", 2), (b"no newline at end", 1)])
def test_predict_empty_stdin_and_empty_lines(capsys, text_model, stdin, expected_lines):
    model, labels = text_model
    code, out, err = run(capsys, "predict", model, stdin=stdin)
    assert contract(code, out, err) is None and err == ""
    assert len(predicted_lines(out)) == expected_lines and set(predicted_lines(out)) <= set(labels)


def test_proba_of_a_learner_without_probabilities(capsys, tmp_path):
    root = good_layout().write(tmp_path / "corpus")
    model = tmp_path / "m.joblib"
    code, out, err = run(capsys, "train", "--corpus", b"folder:" + root, "--learner", "perceptron",
                         "--probability", "raw", "--out", model)  # the perceptron's own: none
    assert contract(code, out, err) is None
    code, out, err = run(capsys, "predict", model, "--proba", stdin=b"alpha\n")
    # the model is sound; the option asked of it is the mistake (docs/reference/cli.md, exit codes)
    assert code == 2 and "defines no probabilities; drop --proba" in contract(code, out, err)


def test_predict_bad_paths_are_one_line_errors(capsys, tmp_path, text_model, vector_model):
    model, _ = text_model
    doc = tmp_path / "doc.txt"
    doc.write_text("alpha beta")
    not_a_model = tmp_path / "notes.txt"
    not_a_model.write_bytes(b"\x80\x04 this is not a model \x00\xff")
    cases = [
        ((model, tmp_path / "missing.txt"), "cannot read document", "No such file or directory"),
        ((model, tmp_path), "cannot read document", "give a file, one per document"),
        ((model, doc, tmp_path / "a\nb.txt"), "cannot read document", "a\\nb.txt"),
        ((tmp_path, doc), "is a folder, not a model file", "textcw train --out"),
        ((tmp_path / "missing.joblib", doc), "missing.joblib", ""),
        ((not_a_model, doc), "notes.txt", ""),
        ((doc, doc), "doc.txt", ""),
        ((vector_model, doc), "was trained on feature vectors", "cannot label text documents"),
    ]
    for argv, fragment, advice in cases:
        code, out, err = run(capsys, "predict", *argv)
        line = contract(code, out, err)
        assert line is not None and code == 1 and out == "", (argv, err)
        assert fragment in line and advice in line, line


def test_predict_with_stdin_closed(capsys, text_model, monkeypatch):
    model, _ = text_model
    monkeypatch.setattr(sys, "stdin", None)
    code, out, err = run(capsys, "predict", model)
    assert code == 1 and "no documents: give document files" in contract(code, out, err)


def test_vector_model_given_text_on_stdin(capsys, vector_model):
    code, out, err = run(capsys, "predict", vector_model, stdin=b"1 1:1 3:1\nhello\n")
    line = contract(code, out, err)
    assert code == 1 and "was trained on feature vectors" in line


# ---------------------------------------------------------------------------- folder extras
def test_special_layouts(capsys, tmp_path):
    """A file where a folder is expected, an empty corpus, one class, train/test look-alikes."""
    file_root = tmp_path / "file"
    file_root.write_text("I am a file")
    empty = tmp_path / "empty"
    empty.mkdir()
    files_only = tmp_path / "files-only"
    files_only.mkdir()
    (files_only / "a.txt").write_text("alpha")
    (files_only / "b.txt").write_text("beta")
    one = good_layout(labels=[b"only"]).write(tmp_path / "one")
    empty_class = good_layout().write(tmp_path / "empty-class")
    os.mkdir(os.path.join(empty_class, b"hollow"))
    train_test = good_layout(labels=[b"train", b"test"]).write(tmp_path / "train-test")
    control = good_layout(labels=[b"ok", b"tab\there"]).write(tmp_path / "control")
    cases = [
        (file_root, "not found (or not a folder)"),
        (tmp_path / "nowhere", "not found (or not a folder)"),
        (empty, "has 0 class sub-folder(s)"),
        (files_only, "has 0 class sub-folder(s)"),
        (one, "has 1 class sub-folder(s)"),
        (empty_class, "hollow has no files"),
        (train_test, "train has 0 class sub-folder(s)"),
        (control, "has a control character (U+0009)"),
    ]
    for root, fragment in cases:
        code, out, err = run(capsys, "train", "--corpus", b"folder:" + os.fsencode(root),
                             "--learner", "perceptron")
        line = contract(code, out, err)
        assert code == 1 and fragment in line, (root, line)
    for spec in ("folder:", "folder:   "):
        code, out, err = run(capsys, "train", "--corpus", spec, "--learner", "perceptron")
        line = contract(code, out, err)
        assert line is not None and "folder:PATH" in line


@pytest.mark.parametrize("folders", [
    [b"1", b"01", b"1.0"],
    [b"nan", b"inf", b"-0", b"None"],
    ["東京".encode(), "емейл".encode(), "\u200b".encode(), b" 1 "],
])
def test_number_like_and_unicode_labels_are_kept_as_written(capsys, tmp_path, folders):
    layout = good_layout(labels=folders)
    root = layout.write(tmp_path / "corpus")
    model = tmp_path / "m.joblib"
    code, out, err = run(capsys, "train", "--corpus", b"folder:" + root, "--learner", "pa",
                         "--out", model)
    assert contract(code, out, err) is None
    docs = visible_docs(layout, root)
    code, out, err = run(capsys, "predict", model, *docs)
    assert contract(code, out, err) is None
    assert set(predicted_file_labels(out, docs)) == {name.decode() for name in folders}


def test_two_folders_that_read_as_one_label(capsys, tmp_path):
    root = good_layout(labels=["café".encode(), b"caf\xe9"]).write(tmp_path / "corpus")
    code, out, err = run(capsys, "train", "--corpus", b"folder:" + root, "--learner", "pa")
    assert code == 1 and "both read as the label 'café'; rename one" in contract(code, out, err)


def test_latin1_label_name_is_read_as_latin1(capsys, tmp_path):
    root = good_layout(labels=[b"caf\xe9", b"na\xefve"]).write(tmp_path / "corpus")
    model = tmp_path / "m.joblib"
    code, out, err = run(capsys, "train", "--corpus", b"folder:" + root, "--learner", "pa",
                         "--out", model)
    assert contract(code, out, err) is None
    docs = visible_docs(good_layout(labels=[b"caf\xe9", b"na\xefve"]), root)
    code, out, err = run(capsys, "predict", model, *docs)
    assert contract(code, out, err) is None and set(predicted_file_labels(out, docs)) == {"café", "naïve"}


@pytest.mark.parametrize("what", ["file", "class folder", "nested folder"])
def test_unreadable_files_and_folders(capsys, tmp_path, monkeypatch, what):
    root = good_layout().write(tmp_path / "corpus")
    target = Path(os.fsdecode(root)) / "class0"
    if what == "file":
        target = target / "003.txt"
    elif what == "nested folder":
        target = target / "deeper"
        target.mkdir()
        (target / "x.txt").write_text("alpha")
    try:
        unreadable(target, monkeypatch)
        code, out, err = run(capsys, "train", "--corpus", b"folder:" + root, "--learner", "pa")
    finally:
        os.chmod(target, 0o755)
    line = contract(code, out, err)
    assert code == 1 and str(target) in line and "Permission denied" in line
    assert "fix its permissions or remove it" in line


def test_links_pipes_and_hidden_files(capsys, tmp_path):
    root = Path(os.fsdecode(good_layout().write(tmp_path / "corpus")))
    (root / "class0" / ".hidden.txt").write_text("ignored")
    (root / ".hidden-class").mkdir()
    (root / ".hidden-class" / "x.txt").write_text("ignored")
    (root / "README").write_text("a file directly under PATH is ignored")
    os.symlink(root / "class0" / "000.txt", root / "class1" / "linked.txt")  # a document
    os.symlink(root, root / "class0" / "loop")  # a link to a folder is not followed
    os.mkfifo(root / "class1" / "pipe")  # reading it would block: skipped
    os.symlink(root / "class1", root / "class2")  # a linked class folder is a class
    model = tmp_path / "m.joblib"
    code, out, err = run(capsys, "train", "--corpus", f"folder:{root}", "--learner", "pa",
                         "--out", model, "--json")
    assert contract(code, out, err) is None
    result = json.loads(out)
    assert result["n_train"] + result["n_test"] == 6 + 7 + 7

    os.symlink(root / "gone.txt", root / "class1" / "dangling.txt")
    code, out, err = run(capsys, "train", "--corpus", f"folder:{root}", "--learner", "pa")
    line = contract(code, out, err)
    assert code == 1 and "dangling.txt is a symbolic link to a file that does not exist" in line

    os.unlink(root / "class1" / "dangling.txt")
    os.symlink(root / "class1" / "self", root / "class1" / "self")  # a link to itself
    code, out, err = run(capsys, "train", "--corpus", f"folder:{root}", "--learner", "pa")
    line = contract(code, out, err)
    assert code == 1 and "self: Too many levels of symbolic links; fix it or remove it" in line


def test_very_long_lines_and_big_files(capsys, tmp_path):
    layout = Layout({b"long": [(f"{i}".encode(), b"alpha " * 200_000 + b"x" * 100_000)
                               for i in range(3)],
                     b"nul": [(f"{i}".encode(), b"\x00" * 50_000 + b" beta gamma") for i in range(3)]})
    root = layout.write(tmp_path / "corpus")
    code, out, err = run(capsys, "train", "--corpus", b"folder:" + root, "--learner", "cw-var",
                         "--json")
    assert contract(code, out, err) is None
    assert json.loads(out)["accuracy"] == 1.0


# ---------------------------------------------------------------------------------- svmlight
@given(data=st.one_of(svmlight_files(), svmlight_files(min_docs=8, fault_rate=0.0)),
       learner=st.sampled_from(FAST_LEARNERS))
def test_train_on_fuzzed_svmlight(capsys, tmp_path, data, learner):
    base = fresh_dir(tmp_path)
    path = base / "data.svm"
    path.write_bytes(data.content)
    expected = expect_svmlight(data)
    code, out, err = run(capsys, "train", "--corpus", f"svmlight:{path}", "--learner", learner,
                         "--epochs", "1", "--json")
    line = contract(code, out, err)
    if line is not None:
        assert expected.errors, f"a well-formed file failed: {line}"
        expect_failure(line, code, expected.errors)
        assert all(f in line for f in expected.errors if f.startswith("line ")), line
        return
    assert not expected.must_fail, f"succeeded, but must fail with one of {expected.errors}"
    result = json.loads(out)
    assert result["n_train"] + result["n_test"] == expected.n_docs
    assert 0.0 <= result["accuracy"] <= 1.0
    if expected.n_features is not None:
        assert result["n_features"] == expected.n_features


@settings(max_examples=30)
@given(train=svmlight_files(min_docs=3, fault_rate=0.2),
       test=svmlight_files(min_docs=1, fault_rate=0.2, max_feature=60))
def test_train_on_fuzzed_svmlight_pairs(capsys, tmp_path, train, test):
    base = fresh_dir(tmp_path)
    (base / "train.svm").write_bytes(train.content)
    (base / "test.svm").write_bytes(test.content)
    expected = expect_svmlight(train, test)
    if not expected.must_fail and len(set(train.labels)) == 1:
        expected.errors, expected.may_succeed = ["the training split of svmlight:"], False
    code, out, err = run(capsys, "train", "--corpus",
                         f"svmlight:{base / 'train.svm'},{base / 'test.svm'}", "--learner", "pa",
                         "--json")
    if not succeeded_as_expected(code, out, err, expected):
        return
    result = json.loads(out)
    assert (result["n_train"], result["n_test"]) == (len(train.labels), len(test.labels))
    assert 0.0 <= result["accuracy"] <= 1.0
    if expected.n_features is not None:  # the test file may reach further than the training file
        assert result["n_features"] == expected.n_features


@pytest.mark.parametrize("content,fragment", [
    (b"", "holds no documents"),
    (b"\n\n# only comments\n\r\n", "holds no documents"),
    ("\n".join(["1 1:1"] * 6).encode(), "has a single label (1)"),
    (b"1 1:1\n-1 2:1\n", "has only 1 document"),
    (b"1 1:1\n2 2:1\n3 3:1\n" * 2, "add documents or give a separate test set"),
    ("\n".join(["1 1:1", "-1 2:1"] * 5).encode("utf-16"), "the file is UTF-16 text"),
    (bytes(range(256)) * 3, "line 1: the label"),
    (b"1 1:1\n-1 2:1\n" * 5 + b"1 2147483648:1\n", "line 11: the index in '2147483648:1' is too large"),
    (b"1 1:1\n-1 2:1\n" * 5 + b"nan 1:1\n", "line 11: the label 'nan' is not finite"),
    (b"1 1:1\n-1 2:1\n" * 5 + b"1 1:1e+309\n", "line 11: the value in '1:1e+309' is not finite"),
    (b"1 1:1\n-1 2:1e+300\n" * 5, "1e+300"),  # finite, but its square overflows
])
def test_svmlight_files_that_cannot_be_used(capsys, tmp_path, content, fragment):
    path = tmp_path / "data.svm"
    path.write_bytes(content)
    code, out, err = run(capsys, "train", "--corpus", f"svmlight:{path}", "--learner", "pa")
    line = contract(code, out, err)
    assert code == 1 and fragment in line, line


def test_svmlight_paths_that_are_not_files(capsys, tmp_path):
    for spec, fragment in [(f"svmlight:{tmp_path}", "is a folder; give the svmlight file"),
                           (f"svmlight:{tmp_path / 'nope.svm'}", "not found"),
                           ("svmlight:a,b,c", "not PATH or PATH,TEST_PATH"),
                           ("svmlight:", "svmlight needs a file")]:
        code, out, err = run(capsys, "train", "--corpus", spec, "--learner", "pa")
        line = contract(code, out, err)
        assert line is not None and fragment in line, line


@pytest.mark.parametrize("featurizer", ["binary-bow", "bigram-counts", "hashing"])
def test_text_featurizer_on_svmlight_names_the_corpus_featurizer(capsys, tmp_path, featurizer):
    path = tmp_path / "data.svm"
    path.write_text("1 1:1\n-1 2:1\n" * 5)
    code, out, err = run(capsys, "train", "--corpus", f"svmlight:{path}", "--learner", "pa",
                         "--featurizer", featurizer)
    line = contract(code, out, err)
    assert code == 1 and f"featurizer {featurizer!r} cannot read the documents of svmlight:" in line
    assert "its documents are numeric vectors" in line and "'precomputed'" in line


def test_svmlight_quirks_that_load(capsys, tmp_path):
    """A BOM, CRLF, tabs, qid, comments in any bytes, 1e+20 and 1e-300 values, index 0."""
    lines = [b"1 qid:3 0:1e-300 3:1\t# caf\xe9", b"", b"-1\t2:1e+20 4:1 # \x00\xff",
             b"+1 1:4.9e-324 3:2", b"-1.0 qid:1 2:1 4:1"] * 3
    path = tmp_path / "quirks.svm"
    path.write_bytes(b"\xef\xbb\xbf# made on Windows\r\n" + b"\r\n".join(lines) + b"\r\n")
    code, out, err = run(capsys, "train", "--corpus", f"svmlight:{path}", "--learner", "pa",
                         "--json")
    assert contract(code, out, err) is None
    result = json.loads(out)
    assert result["n_train"] + result["n_test"] == 12 and result["n_features"] == 5
    assert 0.0 <= result["accuracy"] <= 1.0


def test_evaluate_svmlight_train_and_test_files(capsys, tmp_path):
    """A comma inside ``svmlight:TRAIN,TEST`` does not split --corpus into two tasks."""
    lines = [f"1 1:{1 + i % 3} 3:1" if i % 2 else f"-1 2:{1 + i % 3} 4:1" for i in range(20)]
    for name in ("a.svm", "b.svm"):
        (tmp_path / name).write_text("\n".join(lines) + "\n")
    spec = f"svmlight:{tmp_path / 'a.svm'},{tmp_path / 'b.svm'}"
    code, out, err = run(capsys, "evaluate", "--corpus", spec, "--learner", "pa", "--split",
                         "--json-out", tmp_path / "r.json")
    assert contract(code, out, err) is None
    assert [t["corpus"] for t in json.loads((tmp_path / "r.json").read_text())["tasks"]] == [spec]


# ------------------------------------------------------------------------- real processes
def cli(*argv: str | os.PathLike, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "textcw.cli", *map(os.fsdecode, argv)],
                          input=stdin, capture_output=True, timeout=HANG_SECONDS)


def test_no_traceback_end_to_end(tmp_path, vector_model):
    """Bad data through a real process: one line on stderr, exit 1, no traceback."""
    weird = Layout({b"good": [(b"1", b"alpha beta"), (b"2", b"alpha gamma")],
                    b"bad\nname": [(b"1", b"delta"), (b"2", b"delta beta")]}).write(tmp_path / "w")
    svm = tmp_path / "binary.svm"
    svm.write_bytes(bytes(range(256)) * 4)
    not_a_model = tmp_path / "x.joblib"
    not_a_model.write_bytes(b"\x00" * 64)
    runs = [
        cli("train", "--corpus", b"folder:" + weird, "--learner", "cw-var"),
        cli("train", "--corpus", f"svmlight:{svm}", "--learner", "arow"),
        cli("evaluate", "--corpus", f"folder:{tmp_path / 'nowhere'}", "--learner", "pa"),
        cli("predict", tmp_path, tmp_path),
        cli("predict", not_a_model, stdin=b"hello\n"),
        cli("predict", vector_model, stdin=b"caf\xe9\n\xff\xfe\n"),
    ]
    for proc in runs:
        err = proc.stderr.decode("utf-8", "replace")
        assert proc.returncode == 1, (proc.args, err)
        assert "Traceback" not in err and "unexpected" not in err, err
        assert len(err.splitlines()) == 1 and err.startswith("error: "), err


def test_round_trip_end_to_end_with_odd_names(tmp_path):
    """Non-UTF-8 and number-like label folders, odd file names: train, then predict from stdin."""
    labels = [b"1", "日本".encode(), b"caf\xe9"]
    root = good_layout(labels=labels).write(tmp_path / "corpus")
    os.rename(os.path.join(root, b"1", b"000.txt"), os.path.join(root, b"1", b"\xff\xfe name"))
    model = tmp_path / "m.joblib"
    proc = cli("train", "--corpus", b"folder:" + root, "--learner", "arow", "--out", model)
    assert proc.returncode == 0, proc.stderr
    proc = cli("predict", model, stdin=f"{WORDS[0]} {WORDS[1]}\n{WORDS[4]} {WORDS[5]}\n\n".encode())
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    rows = proc.stdout.decode("utf-8").split("\n")[:-1]
    assert len(rows) == 3 and rows[:2] == ["1", "café"]
    assert set(rows) <= {label_of(label) for label in labels}
    assert decoded(b"caf\xe9") == "café"
