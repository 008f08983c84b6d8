"""What ``textcw list corpora`` shows: every task of a registered corpus with its size.

Sizes are found by loading each task's splits from the local files (never downloading), so
they are exactly what training would see; a corpus whose files are absent says why instead.
The corpus cache is read but not written meanwhile (:func:`textcw.corpus.cache.read_only`):
listing must not store every corpus's parsed documents.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from textcw.corpus.cache import read_only
from textcw.errors import TextcwError
from textcw.registry import CorpusEntry

__all__ = ["INPUT_KINDS", "TaskRow", "input_kind", "is_vector_featurizer", "task_rows"]

# What a corpus's documents are, as `textcw list corpora` says.
INPUT_KINDS = ("text", "vectors")
VECTOR_FEATURIZERS = ("precomputed",)


def is_vector_featurizer(name: str) -> bool:
    """Whether the featurizer ``name`` passes feature vectors through instead of reading text."""
    return name in VECTOR_FEATURIZERS


def input_kind(entry: CorpusEntry) -> str:
    """``"vectors"`` for a corpus of precomputed feature vectors (its default featurizer passes
    them through), else ``"text"``."""
    return "vectors" if is_vector_featurizer(entry.featurizer) else "text"


@dataclass
class TaskRow:
    """One task: ``name`` as users type it, its split sizes and number of classes.

    Sizes are ``None`` when unknown: a task pattern (``usps:AvB``), sizes not asked for, or files
    that are not there (``problem`` says why).
    """

    name: str
    summary: str
    train: int | None = None
    test: int | None = None
    classes: int | None = None
    problem: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def task_rows(entry: CorpusEntry, *, sizes: bool = True) -> list[TaskRow]:
    """The listed tasks of ``entry`` (with sizes if ``sizes``), then its task patterns.

    Sizes are read only from corpora that declare ``takes_download``: the others could download.
    """
    with read_only():
        return _rows(entry, sizes)


def _rows(entry: CorpusEntry, sizes: bool) -> list[TaskRow]:
    rows = []
    for task, summary in entry.tasks.items():
        row = TaskRow(f"{entry.name}:{task}", summary)
        if sizes and not entry.takes_download:
            row.problem = ("its registration declares no download=False option (takes_download), "
                           "so its loader is not called")
        elif sizes:
            try:
                train = entry.factory(task=task, split="train", download=False)
                test = entry.factory(task=task, split="test", download=False)
                row.train, row.test, row.classes = len(train), len(test), len(train.target_names)
            except TextcwError as exc:
                row.problem = str(exc)
        rows.append(row)
    for pattern, summary in entry.task_patterns.items():
        rows.append(TaskRow(f"{entry.name}:{pattern}", summary))
    return rows
