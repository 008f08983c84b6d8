"""Multi-label tasks: which task names give each document a set of labels.

The data set such a task gives, :class:`~textcw.corpus.multilabel_data.MultiLabelDataset`
(``target``: an indicator matrix over ``target_names``), and :func:`make_multilabel_dataset` are
importable from here as well. Why two modules: the tables say from their specification whether a
task is multi-label (:func:`multilabel_task` parses it), and the tables build multi-label data
sets; the data set lives below the tables (:mod:`textcw.corpus.multilabel_data`), the question
about a task's name above them, so that neither imports the other."""

from __future__ import annotations

from textcw.corpus.base import split_task_name
from textcw.corpus.multilabel_data import MultiLabelDataset, make_multilabel_dataset
from textcw.corpus.tabular.spec import FORMATS, parse_spec

__all__ = ["MULTILABEL_TASKS", "MultiLabelDataset", "is_multilabel", "make_multilabel_dataset", "multilabel_task"]

# The multi-label tasks of the built-in corpora that are not tables
MULTILABEL_TASKS = {"reuters": ("modapte",)}


def is_multilabel(data) -> bool:
    """Whether ``data`` (a data set) gives each document a set of labels."""
    return bool(getattr(data, "multilabel", False))


def multilabel_task(corpus: str) -> bool:
    """Whether the task ``corpus`` (``name[:task]``) gives each document a set of labels, from its
    name alone (nothing is read): ``reuters:modapte``, or a table with ``label_sep=`` or
    ``multilabel=yes`` (:mod:`textcw.corpus.tabular.multilabel`)."""
    name, task = split_task_name(corpus)
    if name in FORMATS:
        return parse_spec(name, task).multilabel
    return task in MULTILABEL_TASKS.get(name, ())
