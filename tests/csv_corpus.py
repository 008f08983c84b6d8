"""A train/test corpus of labelled documents written as two CSV tables, for tests that run
``textcw train`` (:func:`textcw.pipeline.train`) on it. A module of its own, as
``sparse_data.py`` is, so every test folder imports the same one."""

from __future__ import annotations

import csv


def csv_corpus(folder, train, test) -> str:
    """The corpus ``csv:TRAIN,TEST`` of ``train`` and ``test``, each ``(documents, labels)``,
    written as ``train.csv`` and ``test.csv`` (columns ``text`` and ``label``) in ``folder``."""
    paths = []
    for name, (docs, labels) in (("train", train), ("test", test)):
        path = folder / f"{name}.csv"
        with open(path, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows([("text", "label"), *zip(docs, labels)])
        paths.append(str(path))
    return "csv:" + ",".join(paths)
