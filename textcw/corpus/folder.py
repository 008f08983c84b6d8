"""Bring your own text: ``--corpus folder:PATH``.

``PATH`` holds one sub-folder per class, named after the class, with one text file per
document inside (files in deeper folders count for their class folder; hidden files and files
directly under ``PATH`` are ignored). This is the layout of scikit-learn's ``load_files`` and of
the 20 Newsgroups archive. If ``PATH`` has exactly the sub-folders ``train`` and ``test``, each
laid out as above, they are the split; otherwise the documents are split 80/20 by class with a
seed.

Files are decoded as UTF-8 (a byte-order mark is dropped). A file that is not valid UTF-8 is
decoded as Latin-1 instead, which maps every byte to a character, so legacy 8-bit text keeps its
words and nothing is lost or rejected; the names of such files are listed in
``Dataset.info["latin1_files"]``.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from textcw.corpus.base import check_split
from textcw.corpus.sampling import make_dataset, seeded_split
from textcw.errors import DataError, InputError

TASKS: dict = {}
TASK_PATTERNS = {"PATH": "a folder with one sub-folder of text files per class"}


def check_task(task: str) -> None:
    """Any non-empty path is a task; the loader checks the folder."""
    if not task.strip():
        raise InputError("folder needs a path: --corpus folder:PATH")


def decode(raw: bytes) -> tuple[str, bool]:
    """``(text, fell_back)``: UTF-8 if valid, else Latin-1 (see the module docstring)."""
    try:
        return raw.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return raw.decode("latin-1"), True


def _visible(name: str) -> bool:
    return not name.startswith(".")


def read_classes(root: Path) -> tuple[list[str], list[str], list[int], list[str]]:
    """``(class names, texts, class index of each text, files decoded as Latin-1)``."""
    if not root.is_dir():
        raise DataError(f"folder {root} not found (or not a folder); --corpus folder:PATH needs "
                        "a folder with one sub-folder of text files per class")
    classes = sorted(p.name for p in root.iterdir() if p.is_dir() and _visible(p.name))
    if len(classes) < 2:
        raise DataError(
            f"folder {root} has {len(classes)} class sub-folder(s); a task needs at least two: "
            "put each class's text files in a sub-folder named after the class"
        )
    texts, target, fallback = [], [], []
    for k, name in enumerate(classes):
        files = sorted(
            p for p in (root / name).rglob("*")
            if p.is_file() and all(_visible(q) for q in p.relative_to(root).parts)
        )
        if not files:
            raise DataError(
                f"class folder {root / name} has no files; put the class's documents there as "
                "text files, or remove the folder"
            )
        for path in files:
            try:
                text, fell_back = decode(path.read_bytes())
            except OSError as exc:
                raise DataError(f"cannot read {path}: {exc}") from None
            texts.append(text)
            target.append(k)
            if fell_back:
                fallback.append(str(path))
    return classes, texts, target, fallback


@functools.lru_cache(maxsize=2)
def _read_cached(root: str, stamp: tuple) -> dict:
    path = Path(root)
    subdirs = {p.name for p in path.iterdir() if p.is_dir() and _visible(p.name)} if path.is_dir() else set()
    if subdirs == {"train", "test"}:
        parts = {split: read_classes(path / split) for split in ("train", "test")}
        if parts["train"][0] != parts["test"][0]:
            raise DataError(
                f"{path}/train and {path}/test have different class folders "
                f"({', '.join(parts['train'][0])} vs {', '.join(parts['test'][0])})"
            )
        return parts
    return {"all": read_classes(path)}


def _stamp(root: Path) -> tuple:
    """Changes when files are added, removed or rewritten (the cache key)."""
    if not root.is_dir():
        return ()
    entries = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            stat = path.stat()
            entries.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(entries)


def load(task: str | None = None, split: str = "train", *, seed: int = 0, order_seed: int = 0,
         test_size: float = 0.2, download: bool = True):
    """Load ``folder:PATH`` (``download`` is accepted and ignored: local files)."""
    if task is None:
        raise InputError("folder needs a path: --corpus folder:PATH")
    check_split(split)
    root = Path(task).expanduser()
    parts = _read_cached(str(root.resolve()), _stamp(root))
    if "all" in parts:
        classes, texts, target, fallback = parts["all"]
        target = np.asarray(target, dtype=np.int64)
        chosen = seeded_split(target, split, seed, test_size, classes)
    else:
        classes, texts, target, fallback = parts[split]
        target = np.asarray(target, dtype=np.int64)
        chosen = np.arange(len(target))
    return make_dataset([texts[i] for i in chosen], target[chosen], classes,
                        name=f"folder:{task}", split=split, order_seed=order_seed,
                        info={"root": str(root), "latin1_files": list(fallback)})
