"""What a label cell of a table (or a label of :meth:`textcw.corpus.base.Dataset.from_columns`) may
be, and the name it becomes.

Why one module decides it: a label read from a CSV field, a JSON value, a Parquet cell or a
DataFrame becomes a class *name* (text), and every model's classes end up in fixed-width numpy
unicode arrays (the export, the evaluation's label arrays). Turned into text carelessly,
different values become one class (``1`` and ``"1"``), one value becomes a class nobody meant
(``pd.NA`` -> ``"<NA>"``, ``b"ham"`` -> ``"b'ham'"``, a row ``[1]`` -> ``"[1]"``), and one
label of two million characters multiplies memory by thousands when the array of every
document's label is built. So a label cell is refused, with a reason naming the row, when
scikit-learn's ``fit`` would refuse it (missing, nested, a real number that is no class, a
column of mixed types), when it is longer than :data:`~textcw._limits.MAX_LABEL_CHARS` (the
bound that ``textcw import`` and the service's ``/learn`` also hold, so that what trains also
exports and imports), or when it cannot be printed on one line. Binary labels are UTF-8 text.

A cell's *kind* (text, number, boolean) must be the same for the whole column: ``1`` and
``"1"`` would otherwise be one class; :class:`LabelCheck` follows the kind over a read.
"""

from __future__ import annotations

import math

import numpy as np

from textcw import _limits
from textcw._limits import MAX_LABEL_CHARS
from textcw.errors import DataError
from textcw.untrusted import first_unprintable, safe_text, unprintable_kind

__all__ = ["MAX_LABEL_CHARS", "LabelCheck", "check_label", "label_kind", "no_duplicate_keys"]

_MISSING_TYPES = ("NAType", "NaTType")  # pandas' missing values, without importing pandas
_KINDS = {"text": "text", "number": "a number", "boolean": "a boolean"}


def label_kind(value) -> str | None:
    """``"text"``, ``"number"`` or ``"boolean"`` for a cell that may be a label, else ``None``."""
    if isinstance(value, (str, bytes, bytearray)):
        return "text"
    if isinstance(value, (bool, np.bool_)):
        return "boolean"
    if isinstance(value, (int, float, np.integer, np.floating)):
        return "number"
    return None


def check_label(value, true: str = "true", false: str = "false") -> tuple[str | None, str | None]:
    """``(label, problem)`` of one label cell: the class name it becomes, or what is wrong with it
    (the module docstring). Booleans are named ``true`` and ``false`` (``true=``/``false=`` give
    other names: a DataFrame's ``True``)."""
    if value is None or type(value).__name__ in _MISSING_TYPES or \
            isinstance(value, (float, np.floating)) and math.isnan(value):
        return None, "no label"
    kind = label_kind(value)
    if kind is None:
        shown = safe_text(repr(value), limit=40)
        if isinstance(value, (list, tuple, dict, set, frozenset, np.ndarray)):
            return None, (f"the label {shown} is a {type(value).__name__}, not one label; a row has one label, a "
                          "string or a whole number")
        return None, (f"the label {shown} is a {type(value).__name__}; a label is text, a whole number or a "
                      "boolean: convert the column to text first")
    if kind == "boolean":
        return (true if value else false), None
    if kind == "number":
        if isinstance(value, (float, np.floating)):
            if not math.isfinite(value):
                return None, f"the label {value} is not a name"
            if not float(value).is_integer():
                return None, (f"the label {value!r} is a real number, a regression target; a classifier needs "
                              "class labels: text or whole numbers")
            value = int(value)  # 1.0 and 1 are one class, as in scikit-learn
        label = str(int(value))
        if len(label) > MAX_LABEL_CHARS:
            return None, f"the label is a number of {len(label):,} digits, more than a label's {MAX_LABEL_CHARS:,}"
        return label, None
    if not isinstance(value, str):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, f"the label is binary, and byte 0x{bytes(value)[exc.start]:02x} is not UTF-8 text"
    if len(value) > MAX_LABEL_CHARS:
        return None, (f"the label has {len(value):,} characters, more than the {MAX_LABEL_CHARS:,} a label may "
                      "have (is this the label column?)")
    if not value.strip():
        return None, "no label"
    bad = first_unprintable(value)
    if bad is not None:
        return None, f"the label has {unprintable_kind(bad)} (U+{ord(bad):04X}); labels are printed one per line"
    return str(value), None


class LabelCheck:
    """:func:`check_label` over the rows of a read, remembering the answers for text (a table
    repeats a few labels many times; past ``MAX_LABELS`` distinct values the read stops anyway)
    and the kind of the first label, so that a label of another kind stops the read: which of
    ``1`` and ``"1"`` is meant cannot be guessed, and skipping the rows of one kind would drop
    half a column silently. One check may follow the training and the test file alike."""

    def __init__(self, remember: int | None = None, true: str = "true", false: str = "false"):
        self.remember = _limits.MAX_LABELS if remember is None else remember
        self.names = (true, false)
        self.seen: dict[str, tuple[str | None, str | None]] = {}
        self.kind: str | None = None
        self.first: str = ""  # where the first label was, and what it was

    def __call__(self, value, where) -> tuple[str | None, str | None]:
        """``(label, problem)`` of the cell ``value`` found at ``where()`` (a callable: it is
        asked only for an error), or :class:`~textcw.errors.DataError` for a change of kind."""
        answer = self.seen.get(value) if type(value) is str else None
        if answer is None:
            answer = check_label(value, *self.names)
            if type(value) is str and len(self.seen) <= self.remember:
                self.seen[value] = answer
        if answer[1] is None:
            kind = "text" if type(value) is str else label_kind(value)
            if kind != self.kind:
                if self.kind is None:
                    self.kind, self.first = kind, f"{where()}: {safe_text(repr(value), limit=40)}"
                else:
                    raise DataError(
                        f"{where()}: the label {safe_text(repr(value), limit=40)} is {_KINDS[kind]}, but the "
                        f"labels before it are {_KINDS[self.kind]} ({self.first}); a column of labels has one "
                        "type (1 and \"1\" would be one class): write every label the same way")
        return answer


class DuplicateKey(ValueError):
    """A JSON object names a key twice (see :func:`no_duplicate_keys`)."""


def no_duplicate_keys(pairs: list) -> dict:
    """``object_pairs_hook`` of :func:`json.loads` refusing a key named twice in one object: the
    json module keeps the last value without a word, so which ``label`` was meant is unknown (the
    rule of the service's request bodies too)."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return result
