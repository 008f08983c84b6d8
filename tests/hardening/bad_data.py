"""Malformed user data for the hardening tests, and what textcw must make of it.

Hypothesis strategies build the two bring-your-own formats, ``folder:PATH`` layouts and
svmlight files, with the faults users actually hit: empty documents and folders, one class,
bytes that are not UTF-8 (Latin-1, UTF-16, random bytes, NUL, byte-order marks, lone
surrogates), very long lines, odd file and label names; for svmlight, non-finite and extreme
values, bad indices, garbage tokens, labels that are not numbers, qid fields, comments, blank
lines and CRLF.

Each generated input comes with its *expectation*, worked out here from the input alone (not
by calling textcw): the error fragments it may end in, or that it must load, and if so how many
documents and which labels it holds.
"""

from __future__ import annotations

import math
import os
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

# Words of two or more word characters, so that the bag-of-words featurizer keeps them.
WORDS = ["alpha", "beta", "gamma", "delta", "goal", "market", "zürich", "naïve", "東京", "данные",
         "١٢٣", "x2", "ŉoël", "straße"]
# Label names that a parser could take for numbers, booleans or nothing.
NUMBERLIKE = ["0", "1", "-1", "01", "1.0", "+1", "1e3", "nan", "inf", "-0", "0x10", "True", "None",
              "١٢", "½", " 1", "1 "]
ENCODINGS = ["utf-8", "utf-8-sig", "latin-1", "cp1252", "utf-16", "utf-16-le"]
BOM = b"\xef\xbb\xbf"


# ----------------------------------------------------------------------------------- documents
def encode(text: str, encoding: str) -> bytes:
    return text.encode(encoding, errors="replace")


word_text = st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join)

#: The content of one text file.
document_bytes = st.one_of(
    st.builds(encode, word_text, st.sampled_from(ENCODINGS)),          # text in some encoding
    st.binary(max_size=120),                                           # random bytes, NUL
    st.just(b""),                                                      # empty
    st.sampled_from([b" \n\t ", b"\x00" * 16, b"a b c . , !", BOM, b"\xff\xfe", BOM + b"goal"]),
    st.text(max_size=40).map(lambda t: t.encode("utf-8", "surrogatepass")),  # lone surrogates
    st.builds(lambda w, n: (w + " ").encode() * n,                     # one very long line
              st.sampled_from(WORDS[:6]), st.integers(2_000, 40_000)),
)


def is_hidden(name: bytes) -> bool:
    return name.startswith(b".")


def _fs_name(name: bytes) -> bytes:
    """``name`` made a valid file name (no slash or NUL, not . or ..) without filtering."""
    name = name.replace(b"/", b"_").replace(b"\x00", b"_")[:200] or b"_"
    return b"_" + name if name in (b".", b"..") else name


def _visible_name(name: bytes) -> bytes:
    return b"d" + name if is_hidden(name) else name


_plain_names = st.from_regex(r"\A[a-z0-9_-]{1,10}\Z").map(str.encode)
_numberlike_names = st.sampled_from(NUMBERLIKE).map(str.encode)

#: A file or folder name as bytes: ASCII, any Unicode (UTF-8), random bytes, number-like.
names = st.one_of(
    _plain_names,
    st.text(st.characters(exclude_categories=("Cs",), exclude_characters="/\x00"),
            min_size=1, max_size=12).map(lambda t: t.encode("utf-8")),
    st.binary(min_size=1, max_size=12),
    _numberlike_names,
).map(_fs_name)

#: Names that make valid labels: printable Unicode (as UTF-8, or Latin-1 bytes), number-like.
label_names = st.one_of(
    _plain_names,
    _numberlike_names,
    st.text(st.characters(exclude_categories=("Cs", "Cc", "Zl", "Zp"), exclude_characters="/."),
            min_size=1, max_size=10).map(lambda t: t.encode("utf-8")),
    st.text(st.characters(min_codepoint=0xA0, max_codepoint=0xFF), min_size=1, max_size=6)
    .map(lambda t: b"x" + t.encode("latin-1")),  # not UTF-8: read as Latin-1
).map(_fs_name).map(_visible_name)


# ---------------------------------------------------------------------------- folder layouts
@dataclass
class Layout:
    """A ``folder:PATH`` tree: class folder name -> [(file name, content)], plus extras."""

    classes: dict[bytes, list[tuple[bytes, bytes]]]
    stray_files: list[tuple[bytes, bytes]] = field(default_factory=list)  # directly under PATH

    def write(self, root: bytes | str) -> bytes:
        root = os.fsencode(root)
        os.makedirs(root, exist_ok=True)
        for folder, files in self.classes.items():
            os.makedirs(os.path.join(root, folder), exist_ok=True)
            for name, content in files:
                with open(os.path.join(root, folder, name), "wb") as fh:
                    fh.write(content)
        for name, content in self.stray_files:
            if name not in self.classes:
                with open(os.path.join(root, name), "wb") as fh:
                    fh.write(content)
        return root


def label_of(name: bytes) -> str:
    """The label a class folder's name reads as: UTF-8, else Latin-1."""
    try:
        return name.decode("utf-8")
    except UnicodeDecodeError:
        return name.decode("latin-1")


def printable_label(label: str) -> bool:
    return not any(unicodedata.category(c) in ("Cc", "Zl", "Zp") for c in label)


def decoded(content: bytes) -> str:
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        return content.decode("latin-1")


def has_words(text: str) -> bool:
    """What scikit-learn's default token pattern finds: two or more word characters."""
    import re

    return re.search(r"(?u)\b\w\w+\b", text.lower()) is not None


@dataclass
class Expectation:
    """What loading (and training on) an input must give.

    ``errors``: fragments of the acceptable error messages (empty: must succeed).
    ``may_succeed``: success is acceptable too. On success: ``n_docs`` documents and ``labels``.
    """

    errors: list[str] = field(default_factory=list)
    may_succeed: bool = False
    n_docs: int = 0
    labels: list[str] = field(default_factory=list)
    n_features: int | None = None

    @property
    def must_fail(self) -> bool:
        return bool(self.errors) and not self.may_succeed


def split_sizes(n: int, test_size: float = 0.2) -> tuple[int, int]:
    """scikit-learn's ``train_test_split`` sizes: ``ceil`` for the test share."""
    n_test = math.ceil(test_size * n)
    return n - n_test, n_test


def expect_folder(layout: Layout, *, train: bool) -> Expectation:
    """What ``load_corpus("folder:ROOT")`` (and with ``train``: ``pipeline.train``) must do."""
    visible = [name for name in layout.classes if not is_hidden(name)]
    labels = [label_of(name) for name in visible]
    naming = []
    if not all(printable_label(label) for label in labels):
        naming.append("rename the folder without control characters or line breaks")
    if len(set(labels)) < len(labels):
        naming.append("both read as the label")
    if naming:  # whichever naming problem the directory listing meets first
        return Expectation(errors=naming)
    if len(visible) < 2:
        return Expectation(errors=["class sub-folder(s); a task needs at least two"])
    docs = {name: [content for fname, content in layout.classes[name] if not is_hidden(fname)]
            for name in visible}
    if any(not d for d in docs.values()):
        return Expectation(errors=["has no files; put the class's documents there"])
    counts = [len(d) for d in docs.values()]
    if min(counts) < 2:
        return Expectation(errors=["has only 1 document; a stratified train/test split needs"])
    n = sum(counts)
    n_train, n_test = split_sizes(n)
    if min(n_train, n_test) < len(visible):
        return Expectation(errors=["by class", "add documents or give a separate test set"])
    expectation = Expectation(n_docs=n, labels=sorted(labels))
    if train:
        worded = [has_words(decoded(c)) for d in docs.values() for c in d]
        if not any(worded):
            expectation.errors = ["found no words in the"]
        elif not all(worded):  # the training split may hold only the wordless ones
            expectation.errors, expectation.may_succeed = ["found no words in the"], True
    return expectation


@st.composite
def folder_layouts(draw, *, min_classes: int = 0, max_classes: int = 4, max_docs: int = 6,
                   documents=document_bytes, class_names=names, faults: bool = True) -> Layout:
    """Class folders with fuzzed names and documents; some hidden, some empty, some stray files.

    With ``faults=False`` every class folder has four or more files (of any content, with any
    visible names) and there are no stray files.
    """
    folder_names = draw(st.lists(class_names, min_size=min_classes, max_size=max_classes,
                                 unique_by=label_of))
    # exactly the folders train and test mean "the split is given": a case of its own
    if {label_of(n) for n in folder_names if not is_hidden(n)} == {"train", "test"}:
        folder_names = folder_names[:1]
    classes = {}
    for name in folder_names:
        file_names = draw(st.lists(names if faults else names.map(_visible_name),
                                   min_size=0 if faults else 4, max_size=max(max_docs, 4),
                                   unique=True))
        classes[name] = [(f, draw(documents)) for f in file_names]
    stray = draw(st.lists(st.tuples(names, documents), max_size=2)) if faults else []
    stray = [(n, c) for n, c in stray if n not in classes]
    return Layout(classes, list(dict(stray).items()))


def good_layout(n_classes: int = 2, per_class: int = 6, labels: list[bytes] | None = None) -> Layout:
    """A small learnable corpus: each class has its own words."""
    labels = labels or [f"class{k}".encode() for k in range(n_classes)]
    classes = {}
    for k, label in enumerate(labels):
        own = WORDS[2 * k % len(WORDS)], WORDS[(2 * k + 1) % len(WORDS)]
        classes[label] = [(f"{i:03d}.txt".encode(), f"{own[0]} {own[1]} doc{i}".encode())
                          for i in range(per_class)]
    return Layout(classes)


# ----------------------------------------------------------------------------------- svmlight
MAX_ABS_VALUE = 1e30  # the largest feature value the learners accept

# fault -> a fragment of the error it must give
SVM_FAULTS = {
    "value_not_finite": "is not finite",
    "label_not_finite": "is not finite",
    "unsorted": "indices must increase",
    "duplicate": "indices must increase",
    "negative_index": "is out of range",
    "huge_index": "is too large",
    "no_colon": "is not index:value",
    "bad_index": "is not an integer",
    "bad_value": "is not a number",
    "text_label": "is not a number",
    "missing_label": "is not a number",
    "late_qid": "is not an integer",
}


@dataclass
class SvmFile:
    """An svmlight file: its bytes, its documents' labels (as numbers) and features."""

    content: bytes
    labels: list[float]
    max_index: int | None  # largest feature index written, None if no features at all
    zero_index: bool  # some line uses index 0 (so the files are read as zero-based)
    fault_line: int | None = None  # 1-based number of the first damaged line
    fault: str | None = None
    max_abs: float = 0.0  # the largest feature value, in absolute value


value_texts = st.one_of(
    st.integers(-5, 5).map(str),
    st.floats(-1e6, 1e6).map(repr),
    st.sampled_from(["1e-300", "4.9e-324", "0", "-0", "0.0", "+2", ".5", "5.", "1E3", "1e+20"]),
)
# finite, but beyond what the learners accept (their squares overflow)
huge_value_texts = st.one_of(st.floats(1e31, 1.7e308).map(repr),
                             st.sampled_from(["1e+300", "-1.7976931348623157e+308", "-1e31"]))
label_texts = st.sampled_from(["1", "-1", "+1", "1.0", "2", "2.5", "0", "-0", "3e0", "7"])


@st.composite
def svm_line(draw, fault: str | None, label: str, max_feature: int = 30, huge: bool = False
             ) -> tuple[bytes, list[int], list[float]]:
    indices = sorted(draw(st.lists(st.integers(0, max_feature), max_size=6, unique=True)))
    if fault in ("unsorted", "duplicate") and len(indices) < 2:
        indices = [1, 2]
    values = [draw(value_texts) for _ in indices]
    if huge and fault is None:
        indices, values = indices + [max_feature + 1], values + [draw(huge_value_texts)]
    pairs = [f"{i}:{v}" for i, v in zip(indices, values)]
    if fault == "value_not_finite":
        bad = draw(st.sampled_from(["nan", "inf", "-inf", "NaN", "1e+309", "-1e999"]))
        if not pairs:
            indices, pairs = [1], ["1:1"]
        j = draw(st.integers(0, len(pairs) - 1))
        pairs[j] = f"{indices[j]}:{bad}"
    elif fault == "label_not_finite":
        label = draw(st.sampled_from(["nan", "inf", "-inf", "NaN", "1e999"]))
    elif fault == "unsorted":
        pairs[0], pairs[1] = pairs[1], pairs[0]
    elif fault == "duplicate":
        pairs.insert(1, pairs[0])
    elif fault == "negative_index":
        pairs = [f"-{draw(st.integers(1, 10**6))}:1"] + pairs
    elif fault == "huge_index":
        pairs = pairs + [f"{draw(st.integers(2**31, 10**25))}:1"]
    elif fault == "no_colon":
        pairs = pairs + [draw(st.sampled_from(["foo", "1", "-", "1.5", "x=1"]))]
    elif fault == "bad_index":
        pairs = pairs + [draw(st.sampled_from(["a:1", "1.5:1", ":1", "0x10:1", "ä:1"]))]
    elif fault == "bad_value":
        pairs = pairs + [f"{max_feature + 1}:" + draw(st.sampled_from(["abc", "", "1,5", "0x10", "1:2"]))]
    elif fault == "text_label":
        label = draw(st.sampled_from(["spam", "ham", "yes", "1,2", "ñ", "+-1", "1..0"]))
    elif fault == "late_qid":
        pairs = (pairs or ["1:1"]) + [f"qid:{draw(st.integers(0, 9))}"]
    head = [] if fault == "missing_label" else [label]
    if fault == "missing_label" and not pairs:
        pairs = ["1:1"]
    if fault is None and draw(st.booleans()):
        head.append(f"qid:{draw(st.integers(0, 100))}")
    sep = draw(st.sampled_from([" ", "\t", "  ", " \t"]))
    line = sep.join(head + pairs)
    if draw(st.booleans()):  # a comment, in any bytes but a line break
        comment = draw(st.binary(max_size=20)).replace(b"\n", b"").replace(b"\r", b"")
        return line.encode() + b" # " + comment, indices, [float(v) for v in values]
    return line.encode(), indices, [float(v) for v in values]


@st.composite
def svmlight_files(draw, *, min_docs: int = 0, max_docs: int = 14, fault_rate: float = 0.3,
                   labels=None, max_feature: int = 30) -> SvmFile:
    """A whole file: documents, blank and comment lines, CRLF or LF, maybe a BOM, maybe a fault."""
    n = draw(st.integers(min_docs, max_docs))
    label_pool = draw(st.lists(label_texts, min_size=2, max_size=3, unique_by=float)) \
        if labels is None else labels
    faulty = n > 0 and draw(st.floats(0, 1)) < fault_rate
    fault = draw(st.sampled_from(sorted(SVM_FAULTS))) if faulty else None
    fault_doc = draw(st.integers(0, n - 1)) if faulty else None
    huge_doc = draw(st.integers(0, 8 * n))  # one file in eight has a value beyond 1e30
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    lines, doc_labels, all_indices, fault_line, max_abs = [], [], [], None, 0.0
    for k in range(n):
        for _ in range(draw(st.integers(0, 2))):  # blank, blank-ish and comment-only lines
            lines.append(draw(st.sampled_from([b"", b"   ", b"\t", b"# a comment", b"#"])))
        label = draw(st.sampled_from(label_pool))
        line, indices, values = draw(svm_line(fault if k == fault_doc else None, label,
                                              max_feature, huge=k == huge_doc))
        lines.append(line)
        if k == fault_doc:
            fault_line = len(lines)
        else:
            doc_labels.append(float(label))
            all_indices.extend(indices)
            max_abs = max([max_abs, *map(abs, values)])
    content = eol.join(lines) + (eol if lines and draw(st.booleans()) else b"")
    if draw(st.integers(0, 5)) == 0:
        content = BOM + content
    return SvmFile(content, doc_labels, max(all_indices) if all_indices else None,
                   0 in all_indices, fault_line, fault, max_abs)


def expect_svmlight(train: SvmFile, test: SvmFile | None = None) -> Expectation:
    """What ``load_corpus("svmlight:TRAIN[,TEST]")`` must do with these files."""
    files = [train] if test is None else [train, test]
    for f in files:
        if f.fault is not None:
            return Expectation(errors=[f"line {f.fault_line}: ", SVM_FAULTS[f.fault]])
    for f in files:
        if not f.labels:
            return Expectation(errors=["holds no documents"])
    values = sorted({v for f in files for v in f.labels})
    if len(values) < 2:
        return Expectation(errors=["has a single label"])
    names = [str(int(v)) if v.is_integer() else repr(v) for v in values]
    indices = [f.max_index for f in files if f.max_index is not None]
    # scikit-learn's "auto" reads the files as one-based only if every one of them has a feature
    # and none uses index 0; a file without any feature makes them all zero-based
    zero_based = any(f.zero_index or f.max_index is None for f in files)
    n_features = (max(indices) + (1 if zero_based else 0)) if indices else None
    if test is None:
        counts = [train.labels.count(v) for v in values]
        if min(counts) < 2:
            return Expectation(errors=["has only 1 document; a stratified train/test split needs"])
        n_train, n_test = split_sizes(len(train.labels))
        if min(n_train, n_test) < len(values):
            return Expectation(errors=["by class", "add documents or give a separate test set"])
    expectation = Expectation(n_docs=sum(len(f.labels) for f in files), labels=names,
                              n_features=n_features)
    if max(f.max_abs for f in files) > MAX_ABS_VALUE:
        # The learners refuse values whose squares would overflow (when they meet them: a value
        # only in the test split may get through training)
        expectation.errors, expectation.may_succeed = ["accepts feature values up to"], True
    return expectation


# ------------------------------------------------------------------------- unreadable files
def unreadable(path: Path, monkeypatch) -> None:
    """Make ``path`` unreadable: chmod 000, or, where that does not stop reads (root),
    make reading it fail as it would."""
    os.chmod(path, 0)
    try:
        if path.is_dir():
            os.listdir(path)
        else:
            path.read_bytes()
    except PermissionError:
        return  # chmod works here
    os.chmod(path, 0o755)
    denied = PermissionError(13, "Permission denied", str(path))
    real_scandir, real_read = os.scandir, Path.read_bytes

    def scandir(p="."):
        if os.fsdecode(p) == str(path):
            raise denied
        return real_scandir(p)

    def read_bytes(self):
        if str(self) == str(path):
            raise denied
        return real_read(self)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(Path, "read_bytes", read_bytes)
