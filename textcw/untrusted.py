"""Reading what a file says without trusting it: bounded member reads, bounded JSON, and text
that is safe to print.

Model files (:mod:`textcw.persist`) and exports (:mod:`textcw.portable`) may come from anyone.
Every member is read with a byte limit, every JSON document with a depth limit (the json module
recurses without a clear error), and every string that reaches a terminal is either refused
(control characters, line breaks: the rule of ``folder:`` corpus labels) or printed escaped.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
import zipfile
import zlib
from pathlib import Path

from textcw.errors import ModelFileError

__all__ = ["MAX_JSON_DEPTH", "MAX_JSON_ITEMS", "MAX_TEXT_CHARS", "UNPRINTABLE_IN_LABELS", "check_printable",
           "check_text_sizes", "distribution_name", "first_unprintable", "install_advice", "one_line",
           "parse_json", "read_member", "safe_text", "unprintable_kind", "FITTED_NAME", "check_vocabulary", "check_idf"]

MAX_JSON_DEPTH = 100  # exports nest about 20 deep; the json module recurses without a clear error
# The most values (list items, dict entries) a JSON document may hold, counted on its bytes before
# it is parsed: a vocabulary of four million terms fits; a compressed export of 19 kB that
# unpacks to millions of zeros is refused before Python builds a list of them.
MAX_JSON_ITEMS = 4_000_000
# The longest string a file may have textcw copy into a model's manifest or print: names,
# versions, parameters, the corpus name. Longer text is no name; refused at import, so that
# ``import`` never writes a model that ``load`` then refuses.
MAX_TEXT_CHARS = 4096
# The name of a fitted attribute (scikit-learn's ``name_`` convention): the only attributes a file
# (an export, a cache entry) may set on a component textcw built.
FITTED_NAME = re.compile(r"^[a-z][a-z0-9_]*_$")
# PEP 508's name rule (https://peps.python.org/pep-0508/#names), the only names that may be put
# into "pip install ..." advice: no options (--index-url=...), no paths, no URLs, no spaces.
_DISTRIBUTION_NAME = re.compile(r"^([A-Z0-9]|[A-Z0-9][A-Z0-9._-]*[A-Z0-9])$", re.IGNORECASE)

# Characters that would split a label over lines or garble a terminal: control characters
# (including \n, \r, \t and the C1 range that Latin-1 names can decode to) and the Unicode line
# and paragraph separators, which str.splitlines also breaks on. The rule for the labels of
# ``folder:`` corpora and for every string a model file or an export asks us to print as is.
UNPRINTABLE_IN_LABELS = ("Cc", "Zl", "Zp")


def safe_text(value, limit: int | None = 300) -> str:
    """``value`` as one printable line, for showing a string that comes from a file or a path.

    Control characters (escape sequences, line breaks), other unprintable characters and lone
    surrogates (bytes of a file name that are not UTF-8) are escaped as Python does (``\\x1b``,
    ``\\n``, ``\\udce9``): printed raw they would split a one-line error, drive the terminal or
    fail to encode. Text longer than ``limit`` characters is cut with ``...``; ``limit=None``
    never cuts (file names in error messages). Use it for every label, version or name read from
    a model file or an export, and every path in an error message, before printing it.
    """
    text = value if isinstance(value, str) else str(value)
    if not text.isprintable():
        text = repr(text)[1:-1]
    return text if limit is None or len(text) <= limit else text[: max(0, limit - 3)] + "..."


def one_line(text) -> str:
    """``text`` with every run of whitespace (line breaks too) made one space.

    Messages of third-party libraries embedded in ours sometimes span lines; the command line
    prints an error on exactly one line.
    """
    return " ".join(str(text).split())


def first_unprintable(text: str) -> str | None:
    """The first character of ``text`` in :data:`UNPRINTABLE_IN_LABELS`, or ``None``."""
    return next((c for c in text if unicodedata.category(c) in UNPRINTABLE_IN_LABELS), None)


def unprintable_kind(char: str) -> str:
    """``"a line break"`` or ``"a control character"``: what ``char`` would do when printed."""
    return "a line break" if len(f"a{char}b".splitlines()) > 1 else "a control character"


def _strings(value):
    """Every str in ``value`` (a str, or lists, tuples and dicts of them, keys too), without
    recursion (a deeply nested file cannot exhaust the stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str):
            yield item


def check_printable(value, what: str, error=ModelFileError) -> None:
    """Raise ``error`` if a string in ``value`` (a str, or lists and dicts of them, keys too)
    holds a control character or a line break: the rule of ``folder:`` corpus labels
    (:func:`textcw.corpus.folder.label_of`), for strings that will be printed one per line."""
    for item in _strings(value):
        bad = first_unprintable(item)
        if bad is not None:
            raise error(f"{what} holds {unprintable_kind(bad)} (U+{ord(bad):04X}) in "
                        f"{safe_text(item, 60)!r}; such text would garble the terminal when printed, so "
                        "it is refused")


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, limit: int, what: str) -> bytes:
    """The bytes of one archive member, refusing more than ``limit`` before reading them.

    The declared size is checked first; the read itself stops at ``limit + 1`` bytes whatever
    the archive claims, so a member that decompresses to more than it declares cannot fill memory.
    """
    if info.file_size > limit:
        raise ModelFileError(f"{path}: {what} ({info.filename}) is {info.file_size:,} bytes, more than the "
                             f"limit of {limit:,}; the file is damaged, hostile, or needs a higher limit")
    try:
        with archive.open(info) as fh:
            data = fh.read(limit + 1)
    # zlib.error: a damaged deflate stream can fail before the CRC check does
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, NotImplementedError) as exc:
        # CRC errors, cut-off data, unsupported compression
        raise ModelFileError(f"{path} is damaged or was modified after saving ({exc}); refusing to "
                             "read it") from None
    if len(data) > limit:
        raise ModelFileError(f"{path}: {info.filename} holds more than its {limit:,} bytes; the file is damaged")
    return data


def check_vocabulary(name: str, value, where: str) -> None:
    """Refuse a vocabulary (attribute ``vocabulary_``) that does not map its terms to the distinct
    columns ``0..n-1``; other attributes pass."""
    if name != "vocabulary_":
        return
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise ModelFileError(f"the vocabulary of {where} must map terms to column numbers")
    columns = list(value.values())
    if not all(isinstance(c, int) and not isinstance(c, bool) for c in columns) or \
            sorted(columns) != list(range(len(columns))):
        raise ModelFileError(f"the vocabulary of {where} must map its {len(columns)} terms to the distinct "
                             f"columns 0..{len(columns) - 1}")


def check_idf(value, vocabulary, where: str, error=ModelFileError) -> None:
    """Refuse idf weights (attribute ``idf_`` of the ``tfidf`` featurizer) that are not a list of
    positive finite floats, one per term of ``vocabulary`` (its ``vocabulary_``)."""
    if not isinstance(vocabulary, dict):
        raise error(f"{where} has idf weights but no vocabulary")
    if not isinstance(value, list) or len(value) != len(vocabulary):
        raise error(f"the idf weights of {where} must be a list of {len(vocabulary)} numbers, one per "
                    "term of its vocabulary")
    if not all(type(v) is float and math.isfinite(v) and v > 0 for v in value):
        raise error(f"the idf weights of {where} must be positive finite numbers")


def distribution_name(name) -> bool:
    """Whether ``name`` is a valid distribution name (PEP 508): what may follow ``pip install``."""
    return isinstance(name, str) and len(name) <= 200 and _DISTRIBUTION_NAME.match(name) is not None


# The first-party plugins, installed from textcw's own source tree (they are not on PyPI).
FIRST_PARTY_PLUGINS = {"textcw-example": "plugins/textcw-example", "textcw-pixels": "plugins/textcw-pixels",
                       "textcw-serve": "plugins/textcw-serve"}


def install_advice(name, *, vouched: bool = False) -> str:
    """The end of a "needs plugin X" message.

    A command to copy is given only for a name textcw knows (a first-party plugin, installed
    from textcw's source tree) or one read from a file signed with the user's own key
    (``vouched``): any other name was chosen by whoever wrote the file, and ``pip install`` of it
    would run their code. Such a name is named, without a command; one that is not even a valid
    distribution name (PEP 508: an option such as ``--index-url=...``, a path, a URL) is called
    what it is."""
    if not distribution_name(name):
        return ("that is not a valid distribution name (PEP 508), so no such plugin exists: the file is "
                "damaged or hostile")
    canonical = re.sub(r"[-_.]+", "-", name).lower()
    if canonical in FIRST_PARTY_PLUGINS:
        return (f"install it from textcw's source tree (pip install ./{FIRST_PARTY_PLUGINS[canonical]}) "
                "and try again")
    if vouched:
        return f"install it (pip install {name}) and try again"
    return ("install that plugin from a source you trust and try again (the name comes from the file, "
            "so textcw does not suggest a command to install it)")


def check_text_sizes(value, what: str, limit: int = MAX_TEXT_CHARS, error=ModelFileError) -> None:
    """Raise ``error`` if a string in ``value`` (str, lists and dicts of them, keys too) is longer
    than ``limit`` characters: text a file asks textcw to keep in a manifest or print."""
    for item in _strings(value):
        if len(item) > limit:
            raise error(f"{what} holds a string of {len(item):,} characters ({safe_text(item, 40)!r}), more "
                        f"than the {limit:,} a name or parameter may have; the file is damaged or hostile")


def parse_json(raw: bytes, what: str, max_items: int = MAX_JSON_ITEMS):
    """``raw`` parsed as JSON, or :class:`ModelFileError` naming ``what``: not UTF-8, not JSON,
    holding more than ``max_items`` values (counted on the bytes, before anything is built),
    nested deeper than :data:`MAX_JSON_DEPTH` (which the json module would meet with a
    RecursionError), or a number too long to convert."""
    # Every value after the first in a list or dict follows a comma; commas inside strings only
    # make the count larger, so this bounds the values from above.
    if raw.count(b",") >= max_items:
        raise ModelFileError(f"{what} holds more than {max_items:,} values, more than any textcw file "
                             "has; the file is damaged or hostile")
    try:
        value = json.loads(raw.decode("utf-8"))
    except RecursionError:
        value = None
        depth = MAX_JSON_DEPTH + 1
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError, too many integer digits
        raise ModelFileError(f"{what} is not valid JSON ({exc}); the file is damaged") from None
    else:
        depth = _depth(value)
    if depth > MAX_JSON_DEPTH:
        raise ModelFileError(f"{what} nests its JSON more than {MAX_JSON_DEPTH} levels deep, which no "
                             "textcw file does; the file is damaged or hostile")
    return value


def _depth(value) -> int:
    if not isinstance(value, (dict, list)):
        return 0
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level <= MAX_JSON_DEPTH:  # only containers go on the stack: a list of numbers costs one pass
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item)
                         if isinstance(v, (dict, list)))
    return deepest
