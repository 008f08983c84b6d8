"""Multi-label data sets: documents with a set of labels each.

:class:`MultiLabelDataset` is a :class:`~textcw.corpus.base.Dataset` whose ``target`` is an
``(n_documents, n_labels)`` 0/1 indicator matrix over ``target_names`` (scikit-learn's
multi-label convention, what ``MultiLabelBinarizer`` returns) instead of one label index per
document; ``labels`` gives each document's labels as a tuple, the form
:class:`textcw.learners.multilabel.MultiLabel` trains on and predicts. The corpora that read
label sets (:mod:`textcw.corpus.tabular`, :mod:`textcw.corpus.reuters`) build them with
:func:`make_multilabel_dataset`; which tasks are multi-label is :mod:`textcw.corpus.multilabel`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from textcw.corpus.base import Dataset, check_split
from textcw.errors import InputError

__all__ = ["MultiLabelDataset", "make_multilabel_dataset"]


@dataclass(repr=False)
class MultiLabelDataset(Dataset):
    """Documents and their label sets for one task and split (``target``: the indicator matrix)."""

    multilabel = True

    @property
    def labels(self) -> list[tuple[str, ...]]:
        """Every document's labels, in the order of ``target_names``."""
        names = np.asarray(self.target_names, dtype=object)
        return [tuple(names[np.flatnonzero(row)].tolist()) for row in np.asarray(self.target)]

    def __len__(self) -> int:
        return int(np.shape(self.target)[0])

    def __repr__(self) -> str:
        labels = ", ".join(map(str, self.target_names[:4])) + (", ..." if len(self.target_names) > 4 else "")
        return (f"MultiLabelDataset({self.name!r}, split={self.split!r}, {len(self)} documents, "
                f"{len(self.target_names)} labels: {labels})")

    def _size(self) -> str:
        per_doc = float(np.asarray(self.target).sum(axis=1).mean()) if len(self) else 0.0
        return f"{super()._size()}, {per_doc:.3f} labels per document"

    def _label_counts(self) -> np.ndarray:
        """Documents per label (a document counts once for each of its labels)."""
        return np.asarray(self.target).sum(axis=0) if len(self) else np.zeros(len(self.target_names), int)


def make_multilabel_dataset(data, label_sets, target_names, *, name: str, split: str,
                            order_seed: int | None = 0, info: dict | None = None) -> MultiLabelDataset:
    """A :class:`MultiLabelDataset` of ``data`` with ``label_sets`` (one collection of names per
    document, each in ``target_names``), its documents in a seeded random order as
    :func:`textcw.corpus.sampling.make_dataset` gives them (``order_seed=None`` keeps the order)."""
    check_split(split)
    data, label_sets = list(data), [list(labels) for labels in label_sets]
    if len(data) != len(label_sets):
        raise InputError(f"{len(data)} documents and {len(label_sets)} label sets; give one label set "
                         "per document")
    code = {label: k for k, label in enumerate(target_names)}
    target = np.zeros((len(data), len(target_names)), dtype=np.uint8)
    for row, labels in enumerate(label_sets):
        for label in labels:
            if label not in code:
                raise InputError(f"document {row} has the label {label!r}, which is not among the "
                                 f"{len(code)} target_names")
            target[row, code[label]] = 1
    order = (np.arange(len(data)) if order_seed is None
             else np.random.RandomState(order_seed).permutation(len(data)))
    return MultiLabelDataset(data=[data[i] for i in order], target=target[order],
                             target_names=list(target_names), name=name, split=split, info=dict(info or {}))
