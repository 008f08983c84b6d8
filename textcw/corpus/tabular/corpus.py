"""The corpus of a table format (:class:`TableCorpus`, registered as ``csv``, ``tsv``, ``jsonl``
and ``parquet``): the size of a split, its rows streamed in chunks from the first pass's index,
or loaded whole.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from textcw.corpus.base import Dataset, check_split
from textcw.corpus.multilabel_data import make_multilabel_dataset
from textcw.corpus.tabular import limits
from textcw.corpus.tabular.files import _name
from textcw.corpus.tabular.index import _index, _Index
from textcw.corpus.tabular.multilabel import label_names, label_sets
from textcw.corpus.tabular.readers import _Rows
from textcw.corpus.tabular.spec import FORMATS, TableSpec, parse_spec
from textcw.corpus.tabular.split import SPLIT_BLOCK, _test_rows
from textcw.errors import DataError, InputError

__all__ = ["CSV", "JSONL", "PARQUET", "TSV", "TableCorpus"]


class TableCorpus:
    """The loader, stream and size of one format, registered as the corpus ``fmt``.

    Instances are small and picklable, so shard and stream workers receive them by value and
    read their own range of rows (:mod:`textcw.scale.source`).
    """

    def __init__(self, fmt: str):
        if fmt not in FORMATS:
            raise InputError(f"unknown table format {fmt!r}; the formats are {', '.join(FORMATS)}")
        self.fmt = fmt

    def __repr__(self) -> str:
        return f"TableCorpus({self.fmt!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, TableCorpus) and other.fmt == self.fmt

    def __hash__(self) -> int:
        return hash(("TableCorpus", self.fmt))

    def check_task(self, task: str) -> bool:
        """The registry's check of a task name: the spelling and options (files are read later);
        ``True`` when they parse, an :class:`~textcw.errors.InputError` saying what is wrong
        otherwise (the ``task_check`` contract: only ``True`` accepts)."""
        parse_spec(self.fmt, task)
        return True

    def _spec(self, task: str | None, split: str) -> tuple[TableSpec, _Index]:
        check_split(split)
        spec = parse_spec(self.fmt, task)
        index = _index(spec)
        if not index.labels:
            raise DataError(f"{self.fmt}:{task} has no rows with a label; a table needs rows of text and "
                            "label")
        if index.sizes[split] == 0 and not _no_test_split(spec, split):
            how = "its test file has none" if spec.test is not None else \
                f"none of its {sum(index.sizes.values())} rows fell in it (test={spec.test_share}); add rows, " \
                "raise test= or give a test file"
            raise DataError(f"{self.fmt}:{task} has no rows in its {split} split: {how}")
        return spec, index

    def size(self, task: str | None = None, split: str = "train", **options) -> int:
        """Rows of ``split`` (the streaming protocol of :mod:`textcw.scale.source`)."""
        spec, index = self._spec(self._streamable(task), split)
        return index.sizes[split]

    def _streamable(self, task: str | None) -> str | None:
        if task is not None and "-" in parse_spec(self.fmt, task).files:
            raise InputError(f"{self.fmt}:- reads standard input whole, once, so it cannot be streamed or "
                             "sharded; save it to a file and give its path")
        return task

    def stream(self, task: str | None = None, split: str = "train", *, start: int = 0, stop: int | None = None,
               chunk_size: int = limits.CHUNK, **options) -> Iterator[Dataset]:
        """Rows ``[start, stop)`` of ``split`` as consecutive :class:`Dataset` chunks."""
        self._streamable(task)
        yield from self._chunks(task, split, start, stop, chunk_size)

    def _chunks(self, task, split, start, stop, chunk_size) -> Iterator[Dataset]:
        spec, index = self._spec(task, split)
        total = index.sizes[split]
        stop = total if stop is None else stop
        if not (0 <= start <= stop <= total):
            raise InputError(f"{self.fmt}:{task} {split} has {total} rows; cannot read rows [{start}, {stop})")
        if not isinstance(chunk_size, int) or chunk_size < 1:
            raise InputError(f"chunk_size must be a whole number >= 1; got {chunk_size!r}")
        if start == stop:
            return
        path = spec.train if spec.test is None or split == "train" else spec.test
        single = spec.test is None
        names = index.labels
        code = {name: k for k, name in enumerate(names)}
        info = {"path": path, "skipped_rows": index.skipped[split]}
        name = f"{self.fmt}:{task}"
        k = (start // limits.STRIDE) * limits.STRIDE
        position = index.checkpoints[split][start // limits.STRIDE]
        texts: list[str] = []
        target: list[int] = []
        block, held = -1, None
        rows = _Rows(spec, path, need_label=True)
        for row in rows.read(position):
            if row.problem is not None:
                continue
            if single:
                if row.row // SPLIT_BLOCK != block:
                    block = row.row // SPLIT_BLOCK
                    held = _test_rows(spec.seed, block, spec.test_share)
                if (split == "test") != bool(held[row.row % SPLIT_BLOCK]):
                    continue
            if k >= start:
                texts.append(row.text)
                target.append(code[row.label])
                if len(texts) == chunk_size:
                    yield _dataset(spec, texts, target, names, name, split, info)
                    texts, target = [], []
            k += 1
            if k >= stop:
                break
        if k < stop:
            raise DataError(f"{_name(path)} changed while it was read ({k} of {stop} rows); read it again")
        if texts:
            yield _dataset(spec, texts, target, names, name, split, info)

    def load(self, task: str | None = None, split: str = "train", *, download: bool = True,
             **options) -> Dataset:
        """The whole ``split`` in memory (``download`` is accepted and ignored: local files)."""
        spec, index = self._spec(task, split)
        n = index.sizes[split]
        if n > limits.MAX_MATERIALISED:
            raise InputError(f"{self.fmt}:{task} has {n:,} {split} rows, more than the {limits.MAX_MATERIALISED:,} "
                             "read into memory at once; train with --stream (or --shards) to read it in chunks")
        if n == 0:  # the test split of test=0: none, and asked for by name (train says so)
            data = _dataset(spec, [], [], index.labels, f"{self.fmt}:{task}", split,
                            {"path": spec.train, "skipped_rows": 0})
        else:
            (data,) = self._chunks(task, split, 0, n, n)
        data.info.update({"rows": n, "test_share": None if spec.test else spec.test_share, "seed": spec.seed})
        return data


def _dataset(spec: TableSpec, texts, target, names, name, split, info) -> Dataset:
    """A chunk of rows: a :class:`Dataset`, or with several labels a row a
    :class:`~textcw.corpus.multilabel_data.MultiLabelDataset` over every label of the table (``names``
    are then the table's joined label sets, :mod:`textcw.corpus.tabular.multilabel`)."""
    if not spec.multilabel:
        return Dataset(texts, np.asarray(target, dtype=np.int64), list(names), name, split, dict(info))
    sets = label_sets([names[k] for k in target])
    return make_multilabel_dataset(texts, sets, label_names(names), name=name, split=split, order_seed=None,
                                   info=info)


def _no_test_split(spec: TableSpec, split: str) -> bool:
    """Whether ``split`` is the test split of a table read with ``test=0``: empty by request, so
    it reads as empty (``train`` then learns every row and measures no accuracy) instead of
    failing as a split that is empty by accident does."""
    return split == "test" and spec.test is None and spec.test_share == 0.0


CSV, TSV, JSONL, PARQUET = (TableCorpus(fmt) for fmt in FORMATS)
