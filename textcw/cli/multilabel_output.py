"""``textcw predict`` with a multi-label model: a set of tags per document.

Documents given as files or stdin lines get one line each, as ``--top`` prints ranks:
``[PATH<TAB>]tag[<TAB>p]<TAB>tag[<TAB>p]...`` with the tags in the order of the model's labels
(``--proba`` adds each tag's calibrated probability after it); a document given no tag prints
the path alone (or an empty line). Rows of a table (``--input``) get a ``predicted`` column: the
tags joined by the input's ``label_sep`` (``|`` by default) in CSV and TSV, a list in JSON lines;
``probability`` holds their probabilities the same way.
"""

from __future__ import annotations

import json

from textcw.errors import UsageError
from textcw.learners.multilabel import MultiLabel
from textcw.untrusted import safe_text

__all__ = ["DEFAULT_SEPARATOR", "MultiLabelRowWriter", "check_options", "is_multilabel_model", "tag_lines", "tags"]

DEFAULT_SEPARATOR = "|"


def is_multilabel_model(pipeline) -> bool:
    """Whether ``pipeline``'s learner predicts label sets (:class:`textcw.learners.multilabel.MultiLabel`)."""
    return isinstance(pipeline.steps[-1][1], MultiLabel)


def check_options(*, top, explain: bool) -> None:
    """Refuse, in one line, the options of single-label predictions."""
    if top is not None:
        raise UsageError("--top ranks the labels of a single-label model; a multi-label model predicts a set of "
                         "tags: drop --top (--proba prints each tag's probability)")
    if explain:
        raise UsageError("--explain explains single-label predictions; a multi-label model's tags each have a "
                         "model of their own: drop --explain")


def tags(pipeline, docs: list[str]) -> tuple[list[list[str]], list[list[float]]]:
    """Each document's tags and their calibrated probabilities, in the order of ``classes_``."""
    import numpy as np

    learner = pipeline.steps[-1][1]
    proba = learner.predict_proba(pipeline[:-1].transform(docs))
    chosen = proba > learner.thresholds_
    names = np.asarray(learner.classes_, dtype=object)
    return ([[str(name) for name in names[row]] for row in chosen],
            [proba[i, row].tolist() for i, row in enumerate(chosen)])


def tag_lines(pipeline, docs: list[str], files, proba: bool) -> list[str]:
    """One line per document (module docstring)."""
    labels, probabilities = tags(pipeline, docs)
    paths = [safe_text(f, limit=None) for f in files] if files else None
    lines = []
    for i, (names, ps) in enumerate(zip(labels, probabilities)):
        fields = [paths[i]] if paths else []
        for name, p in zip(names, ps):
            fields += [name, *([f"{p:.6f}"] if proba else [])]
        lines.append("\t".join(fields))
    return lines


class MultiLabelRowWriter:
    """The rows of ``--input`` with their tags (module docstring), written through ``writer``,
    ``textcw predict``'s writer of the table (its header, delimiter and stream); ``columns``
    names the tags' and the probabilities' columns."""

    def __init__(self, writer, columns: tuple[str, str]):
        self.writer, self.columns = writer, columns

    def top_names(self) -> list[str]:
        return self.writer.top_names()

    def start(self, fh) -> None:
        self.writer.start(fh)

    def finish(self) -> None:
        self.writer.finish()

    def label(self, pipeline, rows, probabilities: bool):
        labels, ps = tags(pipeline, [row.text for row in rows])
        return labels, (ps if probabilities else None)

    def write(self, fh, rows, labels, best, ranked=None) -> None:
        writer = self.writer
        if writer.tabular:
            separator = writer.spec.label_sep or DEFAULT_SEPARATOR
            writer.csv.writerows(
                [*row.raw, separator.join(names),
                 *([separator.join(f"{p:.6f}" for p in best[k])] if best is not None else [])]
                for k, (row, names) in enumerate(zip(rows, labels)))
            return
        label_column, probability_column = self.columns
        lines = []
        for k, (row, names) in enumerate(zip(rows, labels)):
            record = {**row.raw, label_column: list(names)}
            if best is not None:
                record[probability_column] = [round(float(p), 6) for p in best[k]]
            lines.append(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        fh.write("".join(lines).encode("utf-8"))
