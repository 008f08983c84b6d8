"""A tabular task as written, ``csv:data.csv?text=body&label=topic``, parsed into a
:class:`TableSpec`: the files, the columns and the reading options (the syntax and the options
are in :mod:`textcw.corpus.tabular`). Only the spelling is checked here; files are read later.

A comma separates the training file from the test file and ``?`` starts the options, so a file
name holding either is written with percent-escapes, as in a URL: ``%2C`` for a comma, ``%3F``
for ``?`` and ``%25`` for ``%`` itself (``csv:a%2Cb.csv`` reads ``a,b.csv``;
``csv:100%25.csv`` reads ``100%.csv``). Only these three are escapes: any other ``%`` is the
character itself, so ``csv:100%.csv`` still reads ``100%.csv``. Without the escape a comma in a
name would split it into two files, and ``?x=`` in a name would be read as options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from textcw.errors import InputError

__all__ = ["ENCODINGS", "FORMATS", "TASK_PATTERNS", "TableSpec", "escape_path", "every_row_task", "parse_spec",
           "unescape_path"]

FORMATS = ("csv", "tsv", "jsonl", "parquet")
TASK_PATTERNS = {
    "PATH[,TEST_PATH][?OPTIONS]": "your table; options text=COLUMN[,COLUMN], label=COLUMN, test=0.2, "
                                  "seed=0, bad_rows=skip, ... (docs/guide/your-own-data.md)",
}
ENCODINGS = ("utf-8", "latin-1")
_YES, _NO = ("yes", "true", "1"), ("no", "false", "0")
_ESCAPE = re.compile(r"%(2[cC]|3[fF]|25)")
_UNESCAPED = {"2c": ",", "3f": "?", "25": "%"}


def unescape_path(text: str) -> str:
    """A file name as written in a task -> the name (``%2C`` -> ``,``, ``%3F`` -> ``?``, ``%25`` -> ``%``)."""
    return _ESCAPE.sub(lambda m: _UNESCAPED[m.group(1).lower()], text)


def escape_path(path: str) -> str:
    """A file name as it must be written in a task (the inverse of :func:`unescape_path`)."""
    return path.replace("%", "%25").replace(",", "%2C").replace("?", "%3F")


@dataclass(frozen=True)
class TableSpec:
    """A parsed task: the files, the columns and the reading options (:mod:`textcw.corpus.tabular`)."""

    fmt: str
    train: str
    test: str | None = None
    text: tuple[str, ...] = ("text",)
    label: str = "label"
    header: bool = True
    delimiter: str = ","
    test_share: float = 0.2
    seed: int = 0
    skip_bad: bool = False
    encoding: str = "utf-8"
    label_sep: str | None = None  # several labels per cell, split here (textcw.corpus.tabular.multilabel)
    label_lists: bool = False  # JSON lines: the label is a list (multilabel=yes)

    @property
    def multilabel(self) -> bool:
        """Whether a row has a set of labels (``label_sep=`` or ``multilabel=yes``)."""
        return self.label_sep is not None or self.label_lists

    @property
    def files(self) -> tuple[str, ...]:
        return (self.train,) if self.test is None else (self.train, self.test)

    def example(self, **changes) -> str:
        """How a user writes this task with ``changes`` to its options (for error messages)."""
        options = "&".join(f"{k}={v}" for k, v in changes.items())
        return f"{self.fmt}:{','.join(map(escape_path, self.files))}?{options}"


def _choice(fmt: str, key: str, value: str, yes_no: bool = True) -> bool:
    if value.lower() in _YES:
        return True
    if value.lower() in _NO:
        return False
    raise InputError(f"{fmt}: {key}={value!r} is invalid; give {key}=yes or {key}=no")


def _paths_and_query(task: str) -> tuple[str, str]:
    """``"a.csv,b.csv?text=body"`` -> ``("a.csv,b.csv", "text=body")``: the last ``?`` starts the
    options when ``=`` follows it (else it is part of a file name)."""
    if "?" in task and "=" in task.rpartition("?")[2]:
        paths, _, query = task.rpartition("?")
        return paths, query
    return task, ""


def every_row_task(fmt: str, task: str) -> str | None:
    """``task`` with ``test=0`` added when it names no test split (one file and no ``test=``), so
    that every row is a training row, as ``train --init-model`` reads new rows; ``None`` when the
    task names a test split (a test file, or a ``test=`` share). ``task`` must parse."""
    spec = parse_spec(fmt, task)
    _, query = _paths_and_query(task)
    if spec.test is not None or "test" in (item.partition("=")[0] for item in query.split("&")):
        return None
    # With options, one more; without, a "?" after the whole task: a "?" already in it (a file
    # name's, not followed by "=") stays in the name, since only the last "?" starts options.
    return f"{task}&test=0" if query else f"{task}?test=0"


def parse_spec(fmt: str, task: str | None) -> TableSpec:
    """``"data.csv?text=body&label=topic"`` -> a :class:`TableSpec` (a clear error otherwise)."""
    if fmt not in FORMATS:
        raise InputError(f"unknown table format {fmt!r}; the formats are {', '.join(FORMATS)}")
    usage = f"--corpus {fmt}:PATH[,TEST_PATH][?text=COLUMN&label=COLUMN]"
    if task is None or not task.strip():
        raise InputError(f"{fmt} needs a file: {usage}")
    paths, query = _paths_and_query(task)
    parts = paths.split(",")
    if len(parts) > 2 or not all(p.strip() for p in parts):
        raise InputError(f"{fmt}:{task}: give one file, or a training and a test file separated by one "
                         f"comma ({usage}); write a comma in a file name as %2C")
    parts = [unescape_path(p) for p in parts]
    spec = TableSpec(fmt, parts[0], parts[1] if len(parts) == 2 else None,
                     delimiter="\t" if fmt == "tsv" else ",")
    seen = set()
    for item in filter(None, query.split("&")):
        key, sep, value = item.partition("=")
        if not sep:
            raise InputError(f"{fmt}:{task}: option {item!r} is not KEY=VALUE (e.g. ?text=body&label=topic)")
        if key in seen:
            raise InputError(f"{fmt}:{task}: option {key} is given twice; give each option once")
        seen.add(key)
        spec = _option(spec, fmt, task, key, value)
    if spec.label_sep is not None and spec.fmt in ("csv", "tsv") and spec.label_sep == spec.delimiter:
        raise InputError(f"{fmt}:{task}: label_sep={spec.label_sep!r} is the file's delimiter, which ends the "
                         "label field; separate the labels with another character (e.g. label_sep=|)")
    if spec.test is not None and "test" in seen:
        raise InputError(f"{fmt}:{task}: test= is the share held out of one file; with a test file "
                         "it does not apply: drop it")
    if "-" in spec.files and spec.test is not None:
        raise InputError(f"{fmt}:{task}: standard input (-) is one file; give it alone (the test rows "
                         "are then held out of it)")
    return spec


def _reading_option(spec: TableSpec, fmt: str, task: str, key: str, value: str) -> TableSpec | None:
    """``spec`` with an option of how the file is read set (``header=``, ``delimiter=``,
    ``encoding=``, where ``fmt`` has it), or None when ``key`` is not one of them."""
    if key == "header" and fmt in ("csv", "tsv"):
        return replace(spec, header=_choice(fmt, key, value))
    if key == "delimiter" and fmt == "csv":
        delimiter = "\t" if value.lower() == "tab" else value
        if len(delimiter) != 1 or delimiter in "\r\n\"":
            raise InputError(f"{fmt}:{task}: delimiter={value!r} is invalid; give one character "
                             "(e.g. delimiter=; or delimiter=|) or delimiter=tab")
        return replace(spec, delimiter=delimiter)
    if key == "encoding" and fmt != "parquet":
        name = value.lower().replace("_", "-")
        name = {"utf8": "utf-8", "latin1": "latin-1", "iso-8859-1": "latin-1"}.get(name, name)
        if name not in ENCODINGS:
            raise InputError(f"{fmt}:{task}: encoding={value!r} is not supported; give encoding=utf-8 "
                             "or encoding=latin-1")
        return replace(spec, encoding=name)
    return None


def _option(spec: TableSpec, fmt: str, task: str, key: str, value: str) -> TableSpec:
    """``spec`` with the option ``key=value`` of ``fmt:task`` set; :class:`InputError` for an
    unknown option or a value it refuses."""
    tabular = fmt in ("csv", "tsv")
    read = _reading_option(spec, fmt, task, key, value)
    if read is not None:
        return read
    if key == "text":
        columns = tuple(c.strip() for c in value.split(","))
        if not all(columns):
            raise InputError(f"{fmt}:{task}: text={value!r} names an empty column; give text=COLUMN or "
                             "text=COLUMN,COLUMN")
        return replace(spec, text=columns)
    if key == "label":
        if not value.strip():
            raise InputError(f"{fmt}:{task}: label= needs a column name")
        return replace(spec, label=value.strip())
    if key == "test":
        try:
            share = float(value)
        except ValueError:
            share = -1.0
        # test=0 is a table without a test split: every row trains, and no accuracy is measured.
        if not 0.0 <= share < 1.0:
            raise InputError(f"{fmt}:{task}: test={value!r} is invalid; give the share of rows held out "
                             "for testing, from 0 (no test split) to below 1 (e.g. test=0.2)")
        return replace(spec, test_share=share)
    if key == "seed":
        if not value.isdigit() or len(value) > 18:
            raise InputError(f"{fmt}:{task}: seed={value!r} is invalid; give a whole number >= 0")
        return replace(spec, seed=int(value))
    if key == "bad_rows":
        if value not in ("error", "skip"):
            raise InputError(f"{fmt}:{task}: bad_rows={value!r} is invalid; give bad_rows=error (stop at "
                             "the first bad row, the default) or bad_rows=skip (skip and count them)")
        return replace(spec, skip_bad=value == "skip")
    if key == "label_sep":
        separator = "\t" if value.lower() == "tab" else value
        if len(separator) != 1 or separator in "\r\n\"":
            raise InputError(f"{fmt}:{task}: label_sep={value!r} is invalid; give the one character between "
                             "the labels of a cell (e.g. label_sep=| or label_sep=;)")
        return replace(spec, label_sep=separator)
    if key == "multilabel" and fmt == "jsonl":
        return replace(spec, label_lists=_choice(fmt, key, value))
    known = ["text", "label", "label_sep", "test", "seed", "bad_rows"] + (["multilabel"] if fmt == "jsonl" else []) + \
        (["header"] if tabular else []) + \
        (["delimiter"] if fmt == "csv" else []) + (["encoding"] if fmt != "parquet" else [])
    raise InputError(f"{fmt}:{task}: unknown option {key!r}; the options of {fmt} are {', '.join(known)}")
