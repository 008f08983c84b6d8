"""What a corpus loader returns, and how a ``corpus:task`` name is resolved."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from textcw.corpus.labels import LabelCheck, check_label
from textcw.errors import DataError, InputError, UnknownNameError

__all__ = ["SPLITS", "Dataset", "check_split", "check_task", "split_task_name"]

SPLITS = ("train", "test")


@dataclass
class Dataset:
    """Documents and their labels for one task and split.

    Attributes
    ----------
    data : list
        Documents (``str`` or ``bytes`` for text corpora; rows of a matrix for vector corpora).
    target : ndarray of int
        Label index of each document into ``target_names``.
    target_names : list of str
        The label names.
    name : str
        ``corpus:task`` as users type it.
    split : str
    """

    data: list
    target: np.ndarray
    target_names: list[str]
    name: str = ""
    split: str = "train"
    info: dict = field(default_factory=dict)

    @classmethod
    def from_columns(cls, texts, labels, *, name: str = "", split: str = "train",
                     target_names=None) -> Dataset:
        """A dataset of documents ``texts`` labelled ``labels`` (two sequences of one length).

        Labels are kept as their text (``1`` becomes ``"1"``, as when read from a file), so a
        model predicts the same names whichever way it was trained; ``target_names`` (every
        label, sorted by default) may list labels no document has yet. A missing text is an
        error, as is an empty or unprintable label.
        """
        if len(getattr(labels, "shape", ())) > 1:  # a 2-d array or a DataFrame: list() gives rows or column names
            raise InputError(f"labels of shape {tuple(labels.shape)}: give one label per text (a 1-d sequence, "
                             "e.g. y.ravel() or frame['label'])")
        texts, labels = list(texts), list(labels)
        if len(texts) != len(labels):
            raise InputError(f"{len(texts)} texts and {len(labels)} labels; give one label per text")
        for k, text in enumerate(texts):
            if not isinstance(text, str):
                raise InputError(f"text {k} is a {type(text).__name__}, not a str; fill or drop missing texts first")
        # each label as a table's label cell is (textcw.corpus.labels): missing, nested,
        # real-valued, too long, unprintable or of mixed types is refused, naming the row
        names, check = [], LabelCheck(true="True", false="False")
        try:
            for k, label in enumerate(labels):
                name, problem = check(label, lambda: f"label {k}")
                if problem == "no label":
                    raise InputError(f"label {k} is missing; drop unlabelled rows first")
                if problem is not None:
                    raise InputError(f"label {k}: {problem}")
                names.append(name)
        except DataError as exc:
            raise InputError(str(exc)) from None
        known = sorted(set(names)) if target_names is None else \
            [check_label(n, "True", "False")[0] or str(n) for n in target_names]
        code = {n: i for i, n in enumerate(known)}
        missing = sorted(set(names) - set(code))
        if missing:
            raise InputError(f"labels {missing[:5]} are not in target_names")
        check_split(split)
        return cls(data=texts, target=np.asarray([code[n] for n in names], dtype=np.int64), target_names=known,
                   name=name, split=split)

    @classmethod
    def from_frame(cls, frame, text="text", label: str = "label", *, name: str = "", split: str = "train",
                   target_names=None) -> Dataset:
        """A dataset from the columns of a table: a pandas or polars ``DataFrame``, a
        ``pyarrow.Table`` or a dict of sequences. ``text`` is a column or a list of columns,
        joined by a space; ``label`` the label column (:meth:`from_columns` for the checks)."""
        columns = [text] if isinstance(text, str) else list(text)
        if not columns:
            raise InputError("text= names no column; give a column or a list of columns")
        available = [str(c) for c in (frame.keys() if hasattr(frame, "keys") else getattr(frame, "column_names", []))]
        for column in [*columns, label]:
            if column not in available:
                shown = ", ".join(map(repr, available[:20]))
                raise InputError(f"the table has no column {column!r} (its columns: {shown}); name it with "
                                 f"text= or label=")
        values = [_column(frame, c) for c in columns]
        for c, column in zip(columns, values):
            for k, v in enumerate(column):
                if not isinstance(v, str):
                    if v is None or isinstance(v, float) and v != v:
                        raise InputError(f"row {k} has no text in column {c!r}; fill or drop missing texts first")
        texts = values[0] if len(values) == 1 else [" ".join(parts) for parts in zip(*values)]
        return cls.from_columns(texts, _column(frame, label), name=name, split=split, target_names=target_names)

    @property
    def labels(self) -> np.ndarray:
        """The label name of every document (what models are trained on and predict)."""
        return np.asarray(self.target_names, dtype=object)[self.target]

    def __len__(self) -> int:
        return len(self.target)

    def __repr__(self) -> str:
        # Short, as in a notebook: the documents themselves can be hundreds of megabytes.
        labels = ", ".join(map(str, self.target_names[:4])) + (", ..." if len(self.target_names) > 4 else "")
        return (f"Dataset({self.name!r}, split={self.split!r}, {len(self)} documents, "
                f"{len(self.target_names)} labels: {labels})")

    @property
    def DESCR(self) -> str:  # noqa: N802 - the name scikit-learn's datasets use
        """A description of the data set, like the ``DESCR`` of scikit-learn's loaders."""
        lines = [f"{self.name or 'dataset'}, {self.split} split: {self._size()}"]
        if self.info.get("description"):
            lines.append(str(self.info["description"]))
        lines += [f"  {name}: {int(n)} documents" for name, n in zip(self.target_names, self._label_counts())]
        lines += [f"{key}: {value}" for key, value in self.info.items()
                  if key != "description" and len(repr(value)) <= 200]
        return "\n".join(lines)

    def _size(self) -> str:
        """The first line's count of documents and labels (:attr:`DESCR`)."""
        return f"{len(self)} documents, {len(self.target_names)} labels"

    def _label_counts(self) -> np.ndarray:
        """Documents per label, in the order of ``target_names`` (:attr:`DESCR`)."""
        return np.bincount(np.asarray(self.target, dtype=np.int64), minlength=len(self.target_names))


def _column(frame, name) -> list:
    """The values of one column of a DataFrame, a pyarrow Table or a dict, as a list."""
    column = frame[name]
    for method in ("to_list", "to_pylist", "tolist"):
        if hasattr(column, method):
            return list(getattr(column, method)())
    return list(column)


def split_task_name(spec: str) -> tuple[str, str | None]:
    """``"newsgroups:comp"`` -> ``("newsgroups", "comp")``; ``"newsgroups"`` -> ``(…, None)``."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError("a corpus name is required, e.g. newsgroups or newsgroups:comp")
    corpus, _, task = spec.partition(":")
    return corpus, (task or None)


def check_task(corpus: str, task: str | None, tasks: dict, task_check=None) -> None:
    """Accept ``task`` if it is ``None``, a listed task, or passes ``task_check``.

    ``task_check(task)``, registered by corpora whose task names are patterns (``usps:3v8``,
    ``folder:PATH``), returns ``True`` for a name it accepts and ``False`` for one it does not
    (an :class:`UnknownNameError`), or raises a textcw error saying what is wrong with the name.
    Any other return value (``None`` from a check that forgot its ``return``) is an error: only
    ``True`` accepts.
    """
    if task is None or task in tasks:
        return
    if task_check is None:
        raise UnknownNameError(f"task of corpus {corpus!r}", task, [f"{corpus}:{t}" for t in tasks])
    verdict = task_check(task)
    if verdict is True:
        return
    if verdict is False:
        raise UnknownNameError(f"task of corpus {corpus!r}", task, [f"{corpus}:{t}" for t in tasks])
    raise InputError(
        f"corpus {corpus!r}: its task_check returned {verdict!r} for the task {task!r}; a "
        "task_check returns True (accept) or False (reject), or raises a textcw error saying why: "
        "fix the corpus's plugin"
    )


def check_split(split: str) -> None:
    if split not in SPLITS:
        raise UnknownNameError("split", split, SPLITS)

