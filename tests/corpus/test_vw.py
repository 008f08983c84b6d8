"""Text files of 'label | text' lines: vw:PATH[,TEST_PATH], read in blocks and ranges."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from textcw.corpus import vw
from textcw.errors import DataError, InputError
from textcw.features.hashing import hashing
from textcw.features.native import TextBlock
from textcw.scale.source import CorpusSource
from textcw.scale.training import train_stream


def write(path: Path, lines: list[str], end: str = "\n") -> Path:
    path.write_bytes((end.join(lines) + end).encode("utf-8"))
    return path


def docs(n: int) -> list[tuple[str, str]]:
    return [("1" if i % 3 else "-1", f"doc {i} words{i % 7} shared Ünïcode" if i % 11 == 0 else f"doc{i} good{i % 5}")
            for i in range(n)]


def test_two_files_give_the_documents_labels_and_classes(tmp_path):
    pairs = docs(25)
    train = write(tmp_path / "train.vw", [f"{label} | {text}" for label, text in pairs])
    test = write(tmp_path / "test.vw", ["sports | a match", "", "1 |another one", "   "])
    task = f"{train},{test}"
    assert vw.size(task, "train") == 25 and vw.size(task, "test") == 2
    data = vw.load(task, "train")
    assert isinstance(data.data, TextBlock)
    assert [d.strip() for d in data.data] == [text for _, text in pairs]
    assert data.labels.tolist() == [label for label, _ in pairs]
    assert data.target_names == ["-1", "1", "sports"]  # both files' labels
    test_data = vw.load(task, "test")
    assert list(test_data.data) == [" a match", "another one"] and test_data.labels.tolist() == ["sports", "1"]


def test_any_range_reads_the_same_documents_as_the_whole_file(tmp_path):
    pairs = docs(3 * vw.CHECKPOINT + 17)
    path = write(tmp_path / "all.vw", [f"{label} | {text}" + ("\n" if i % 97 == 0 else "")
                                       for i, (label, text) in enumerate(pairs)], end="\r\n")
    n = vw.size(str(path), "train")
    assert n == len(pairs) - len(pairs) // 5 and vw.size(str(path), "test") == len(pairs) // 5
    whole = vw.load(str(path), "train")
    assert list(whole.data) == [f" {text}" for _, text in pairs[:n]]
    for start, stop, size in [(0, n, 1000), (vw.CHECKPOINT - 1, 2 * vw.CHECKPOINT + 5, 333), (n - 1, n, 7)]:
        chunks = list(vw.stream(str(path), "train", start=start, stop=stop, chunk_size=size))
        assert [len(c) for c in chunks][:-1] == [size] * (len(chunks) - 1)
        assert [d for c in chunks for d in c.data] == list(whole.data)[start:stop]
        assert np.concatenate([c.target for c in chunks]).tolist() == whole.target[start:stop].tolist()
    test = vw.load(str(path), "test")
    assert list(test.data)[-1] == f" {pairs[-1][1]}"


def test_blocks_hash_like_the_documents(tmp_path):
    pairs = docs(50)
    path = write(tmp_path / "d.vw", [f"{label} | {text}" for label, text in pairs])
    data = vw.load(f"{path},{path}", "train")
    feat = hashing()
    a = feat.transform(data.data)
    b = feat.transform(list(data.data))
    assert a.shape == (50, 2**20) and (a != b).nnz == 0 and a.nnz > 0


@pytest.mark.parametrize("line, problem", [
    ("1 no bar here", "line 2 .* has no '\\|'"),
    ("   | no label", "line 2 .* has no label"),
    ("1 0.5 'tag| weighted", "line 2 .* more than one word before its '\\|'.*importance weights"),
])
def test_malformed_lines_are_named(tmp_path, line, problem):
    path = write(tmp_path / "bad.vw", ["1 | fine", line])
    with pytest.raises(DataError, match=problem):
        vw.size(str(path), "train")


def test_too_many_labels_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(vw, "MAX_LABELS", 3)
    vw._scan_cached.cache_clear()
    path = write(tmp_path / "many.vw", [f"label{i} | text" for i in range(4)])
    with pytest.raises(DataError, match="past 3: is the first word of each line its label"):
        vw.size(str(path), "train")


def test_bad_paths_say_what_to_do(tmp_path):
    with pytest.raises(InputError, match="no file"):
        vw.size(str(tmp_path / "missing.vw"), "train")
    with pytest.raises(InputError, match="not a regular file"):
        vw.size(str(tmp_path), "train")
    gz = write(tmp_path / "d.vw.gz", ["1 | a"])
    with pytest.raises(InputError, match="decompress it first"):
        vw.size(str(gz), "train")
    with pytest.raises(InputError, match="not PATH or PATH,TEST_PATH"):
        vw.check_task("a,b,c")
    path = write(tmp_path / "d.vw", ["1 | a b", "-1 | c d"] * 5)
    with pytest.raises(InputError, match="outside the 8 train documents"):
        list(vw.stream(str(path), "train", start=0, stop=9))


def test_an_empty_file_has_no_documents(tmp_path):
    path = tmp_path / "empty.vw"
    path.write_bytes(b"")
    assert vw.size(str(path), "train") == 0 and len(vw.load(str(path), "train")) == 0


def test_a_stream_trains_from_the_file_as_from_the_documents(tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(50)]
    lines = []
    for i in range(600):
        label = "pos" if i % 2 else "neg"
        picked = rng.choice(words[:30] if label == "pos" else words[20:], 8)
        lines.append(f"{label} | {' '.join(picked)}")
    path = write(tmp_path / "t.vw", lines)
    source = CorpusSource.resolve(f"vw:{path}")
    assert source.streams and source.n_documents("train") == 480
    one = train_stream(f"vw:{path}", "arow", chunk_size=100, workers=1)
    two = train_stream(f"vw:{path}", "arow", chunk_size=100, workers=2)
    assert one.n_train == 480 and one.n_test == 120 and one.accuracy > 0.9
    assert np.array_equal(one.model[-1].coef_, two.model[-1].coef_)


def reference(lines: list[str]) -> tuple[list[str], list[str]]:
    """Labels and documents of ``label | text`` lines, by plain Python: the text is everything
    after the first ``|`` (a Windows line end dropped), blank lines are skipped."""
    labels, texts = [], []
    for line in lines:
        if not line.strip(" \t\r"):
            continue
        head, _, text = line.partition("|")
        labels.append(head.split()[0])
        texts.append(text[:-1] if text.endswith("\r") else text)
    return labels, texts


def test_the_text_is_everything_after_the_first_bar(tmp_path):
    lines = ["1 | a | b || c", "-1\t|tab before the bar", "1 |", " \t", "x |   spaced  ", "-1 |ends with cr\r",
             "1 | ü|ñ"] * (vw.CHECKPOINT // 3)
    path = write(tmp_path / "bars.vw", lines)
    labels, texts = reference(lines)
    data = vw.load(f"{path},{path}", "train")
    assert list(data.data) == texts and data.labels.tolist() == labels
    start = vw.CHECKPOINT + 3  # a range starting past a checkpoint, in the middle of the pattern
    (chunk,) = vw.stream(f"{path},{path}", "train", start=start, stop=start + 50, chunk_size=50)
    assert list(chunk.data) == texts[start:start + 50] and chunk.labels.tolist() == labels[start:start + 50]


def test_counting_a_file_imports_no_scikit_learn(tmp_path):
    # a file's scan (the first step of a stream, and of `textcw list`-style questions about its
    # size) needs numpy and numba only
    import subprocess
    import sys

    path = write(tmp_path / "s.vw", [f"{label} | {text}" for label, text in docs(40)])
    code = ("import sys; from textcw.corpus import vw; n = vw.size(sys.argv[1], 'train'); "
            "print(n, sorted(m for m in sys.modules if m.split('.')[0] == 'sklearn'))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                         timeout=300)
    assert out.stdout.split(None, 1) == ["32", "[]\n"]
