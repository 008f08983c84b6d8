"""A label column of several labels per row: the ``label_sep=`` and ``multilabel=`` options.

``csv:tags.csv?label_sep=|`` (any format) reads a label cell ``acq|earn`` as the labels ``acq``
and ``earn``; in JSON lines, ``jsonl:tags.jsonl?multilabel=yes`` reads a JSON list
(``"label": ["acq", "earn"]``; a list is also taken with ``label_sep=``). Every label of a cell
is checked as a single label is (:func:`textcw.corpus.labels.check_label`); a cell with
no label (``""``, ``"|"``, ``[]``) is a bad row, stopped at or skipped with ``bad_rows=skip``
like any other. Parquet list columns are refused before anything is decoded (their elements
are not bounded by the row count, :mod:`textcw.corpus.tabular.parquet`): write the labels of a
Parquet row as one text cell with a separator.

Inside a read, a row's labels travel as one text, the sorted labels joined by :data:`JOIN`
(the ASCII unit separator, which no label can hold: labels are printable), so the first pass
counts and the chunks carry them as they carry one label; :func:`label_sets` splits them again
for the :class:`~textcw.corpus.multilabel_data.MultiLabelDataset` a multi-label table loads as.
"""

from __future__ import annotations

from textcw.corpus.labels import LabelCheck
from textcw.untrusted import safe_text

__all__ = ["JOIN", "MultiLabelCheck", "label_names", "label_sets"]

JOIN = "\x1f"


class MultiLabelCheck:
    """The label check of a multi-label read: ``(joined labels, problem)`` of one cell."""

    def __init__(self, single: LabelCheck, separator: str | None, lists: bool):
        self.single, self.separator, self.lists = single, separator, lists

    def __call__(self, value, where) -> tuple[str | None, str | None]:
        if isinstance(value, (list, tuple)):
            if not self.lists:
                return None, ("the label is a list; a list of labels is read from JSON lines with "
                              "multilabel=yes or label_sep=")
            cells = list(value)
        elif self.separator is not None and isinstance(value, str):
            cells = value.split(self.separator)
        elif self.separator is None:
            shown = safe_text(repr(value), limit=40)
            return None, (f"the label {shown} is not a list; with multilabel=yes every label cell is a JSON list "
                          "of labels (e.g. [\"acq\", \"earn\"])")
        else:
            cells = [value]
        names = set()
        for cell in cells:
            if isinstance(cell, str) and not cell.strip():
                continue  # "a||b" or a trailing separator: no label between two separators
            name, problem = self.single(cell.strip() if isinstance(cell, str) else cell, where)
            if problem == "no label":
                continue
            if problem is not None:
                return None, problem
            names.add(name)
        if not names:
            return None, (f"an empty label set ({safe_text(repr(value), limit=40)}); a row needs at least one "
                          "label")
        return JOIN.join(sorted(names)), None


def label_names(joined_labels) -> list[str]:
    """Every label of the joined label sets of a read, sorted."""
    return sorted({name for joined in joined_labels for name in joined.split(JOIN)})


def label_sets(joined_labels) -> list[list[str]]:
    """Each row's labels from its joined label set."""
    return [joined.split(JOIN) for joined in joined_labels]
