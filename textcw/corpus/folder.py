"""Bring your own text: ``--corpus folder:PATH``.

``PATH`` holds one sub-folder per class, named after the class, with one text file per
document inside (files in deeper folders count for their class folder; hidden files and files
directly under ``PATH`` are ignored). This is the layout of scikit-learn's ``load_files`` and of
the 20 Newsgroups archive. If ``PATH`` has exactly the sub-folders ``train`` and ``test``, each
laid out as above, they are the split; otherwise the documents are split 80/20 by class with a
seed.

Only regular files are documents: pipes, sockets and devices are skipped (reading one could
block or never end), and so are symbolic links to folders inside a class folder (they could
loop). A symbolic link to a missing file is an error, as is a file or folder that cannot be
read. A class folder's name is its label, read like the documents (UTF-8, else Latin-1); a name
with a line break or another control character is refused, since labels are printed one per
line.

Files are decoded as UTF-8 (a byte-order mark is dropped). A file that is not valid UTF-8 is
decoded as Latin-1 instead, which maps every byte to a character, so legacy 8-bit text keeps its
words and nothing is lost or rejected; the names of such files are listed in
``Dataset.info["latin1_files"]``.
"""

from __future__ import annotations

import functools
import os
import stat
from pathlib import Path

import numpy as np

from textcw.corpus.base import check_split
from textcw.corpus.sampling import make_dataset, seeded_split
from textcw.errors import DataError, InputError
from textcw.untrusted import first_unprintable, safe_text, unprintable_kind

__all__ = [
    "TASKS", "TASK_PATTERNS", "check_task", "class_files", "decode", "label_of", "load", "read_classes"
]

TASKS: dict = {}
TASK_PATTERNS = {"PATH": "a folder with one sub-folder of text files per class"}


def check_task(task: str) -> bool:
    """Any non-empty path is a task; the loader checks the folder."""
    if not task.strip():
        raise InputError("folder needs a path: --corpus folder:PATH")
    return True


def decode(raw: bytes) -> tuple[str, bool]:
    """``(text, fell_back)``: UTF-8 if valid, else Latin-1 (see the module docstring)."""
    try:
        return raw.decode("utf-8-sig"), False
    except UnicodeDecodeError:
        return raw.decode("latin-1"), True


def _visible(name: str) -> bool:
    return not name.startswith(".")


def label_of(name: str, folder: Path) -> str:
    """The label of the class folder ``name`` inside ``folder``.

    A name whose bytes are not UTF-8 reaches Python with lone surrogates, which cannot be
    printed or saved as text; it is decoded as Latin-1 instead, the rule for the documents
    (but a leading byte-order mark is kept: dropping it could leave an empty label).
    """
    raw = os.fsencode(name)
    try:
        label = raw.decode("utf-8")
    except UnicodeDecodeError:
        label = raw.decode("latin-1")
    bad = first_unprintable(label)  # the rule of textcw.untrusted.UNPRINTABLE_IN_LABELS
    if bad is not None:
        raise DataError(
            f"class folder {safe_text(folder / name, limit=None)} has {unprintable_kind(bad)} "
            f"(U+{ord(bad):04X}) in its name; labels are printed one per line: rename the folder "
            "without control characters or line breaks"
        )
    return label


def _unreadable(what: str, path: Path, exc: OSError) -> DataError:
    """The error for a file or folder the system would not let us read (no raw OSError)."""
    advice = "fix its permissions or remove it" if isinstance(exc, PermissionError) else \
        "fix it or remove it"
    return DataError(f"cannot read {what}{safe_text(path, limit=None)}: {exc.strerror or exc}; {advice}")


def _scan(folder: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError as exc:  # e.g. a folder without read permission
        raise _unreadable("folder ", folder, exc) from None


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()  # follows a symbolic link, so a linked class folder counts
    except OSError:
        return False


def class_files(folder: Path) -> list[Path]:
    """The visible regular files under ``folder``, sorted, at any depth.

    Folders are walked without following symbolic links to folders (a link to a parent would
    loop). Pipes, sockets and devices are skipped: reading one blocks or never ends. A symbolic
    link to nothing is an error rather than a silently missing document.
    """
    files = []
    pending = [folder]
    while pending:
        current = pending.pop()
        for entry in _scan(current):
            if not _visible(entry.name):
                continue
            path = Path(entry.path)
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(path)
                    continue
                mode = os.stat(path).st_mode  # follows a link to its target
            except FileNotFoundError as exc:
                if not entry.is_symlink():  # removed while we read the folder
                    raise _unreadable("", path, exc) from None
                raise DataError(
                    f"{safe_text(path, limit=None)} is a symbolic link to a file that does not exist; fix "
                    "the link or remove it"
                ) from None
            except OSError as exc:  # no permission, a loop of links, ...
                raise _unreadable("", path, exc) from None
            if stat.S_ISREG(mode):
                files.append(path)
    return sorted(files)


def read_classes(root: Path) -> tuple[list[str], list[str], list[int], list[str]]:
    """``(class names, texts, class index of each text, files decoded as Latin-1)``."""
    if not root.is_dir():
        raise DataError(f"folder {safe_text(root, limit=None)} not found (or not a folder); --corpus "
                        "folder:PATH needs a folder with one sub-folder of text files per class")
    folders = {}
    for entry in _scan(root):
        if _visible(entry.name) and _is_dir(entry):
            label = label_of(entry.name, root)
            if label in folders:
                # two names with different bytes that read as the same text (UTF-8 and Latin-1)
                raise DataError(
                    f"class folders {safe_text(root / folders[label], limit=None)} and "
                    f"{safe_text(root / entry.name, limit=None)} both read as the label {label!r}; rename one"
                )
            folders[label] = entry.name
    classes = sorted(folders)
    if len(classes) < 2:
        raise DataError(
            f"folder {safe_text(root, limit=None)} has {len(classes)} class sub-folder(s); a task needs at "
            "least two: put each class's text files in a sub-folder named after the class"
        )
    texts, target, fallback = [], [], []
    for k, label in enumerate(classes):
        files = class_files(root / folders[label])
        if not files:
            raise DataError(
                f"class folder {safe_text(root / folders[label], limit=None)} has no files; put the class's "
                "documents there as text files, or remove the folder"
            )
        for path in files:
            try:
                text, fell_back = decode(path.read_bytes())
            except OSError as exc:
                raise _unreadable("", path, exc) from None
            texts.append(text)
            target.append(k)
            if fell_back:
                fallback.append(str(path))
    return classes, texts, target, fallback


@functools.lru_cache(maxsize=2)
def _read_cached(root: str, stamp: tuple) -> dict:
    path = Path(root)
    subdirs = {e.name for e in _scan(path) if _visible(e.name) and _is_dir(e)} if path.is_dir() else set()
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
    """Changes when files or folders are added, removed or rewritten (the cache key).

    Folders count too, so that a new empty class folder is seen (and reported). An entry that
    cannot be examined (gone since the listing, a link to nothing, no permission) is recorded
    as such: the reader reports it.
    """
    if not root.is_dir():
        return ()
    entries = []
    for path in sorted(root.rglob("*")):
        try:
            info = path.stat()
            entries.append((str(path), info.st_mode, info.st_size, info.st_mtime_ns))
        except OSError:
            entries.append((str(path), None))
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
