"""What a corpus loader returns, and how a ``corpus:task`` name is resolved."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from textcw.errors import InputError, UnknownNameError

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
        counts = np.bincount(np.asarray(self.target, dtype=np.int64), minlength=len(self.target_names))
        lines = [f"{self.name or 'dataset'}, {self.split} split: {len(self)} documents, "
                 f"{len(self.target_names)} labels"]
        if self.info.get("description"):
            lines.append(str(self.info["description"]))
        lines += [f"  {name}: {n} documents" for name, n in zip(self.target_names, counts)]
        lines += [f"{key}: {value}" for key, value in self.info.items()
                  if key != "description" and len(repr(value)) <= 200]
        return "\n".join(lines)


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

