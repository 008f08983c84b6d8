"""The parameters a text featurizer may take: one check, for training and for imported models.

scikit-learn's vectorizers take parameters that are harmless when you type them and harmful
when a file you did not write chooses them, because they decide what ``transform`` does with
every document at prediction time:

- ``token_pattern`` is a regular expression run over every document. Python's ``re`` has no
  time limit, and a pattern such as ``(a+)+$`` backtracks for longer than the age of the
  universe on a document of a few dozen characters. Whether an arbitrary pattern can backtrack
  catastrophically (or polynomially: ``\\w*\\w*\\w*x`` is O(n^4) per position) cannot be decided
  by looking at it cheaply, and bounding its run time needs a timeout that ``re`` does not
  have. So the pattern must be one of :data:`SAFE_TOKEN_PATTERNS`, tokenizers that run in
  time linear in the document (one character-class repetition between word boundaries or
  whitespace); anything else is refused, whoever gives it. Other tokenizations are a
  featurizer plugin's job, where the code is installed and reviewed, not read from a file.
- ``ngram_range=(1, 10**6)`` makes each document of n words yield O(n^2) n-grams: ``ngram_range``
  must be two integers ``1 <= low <= high <= MAX_NGRAM``.
- ``input="filename"`` or ``"file"`` makes ``transform`` open each document as a path (an
  imported model would read files named by its input): only ``"content"``.
- ``analyzer``, ``tokenizer``, ``preprocessor`` and ``strip_accents`` may be callables, i.e. code:
  only their named options (``"word"``, ``"char"``, ``"char_wb"``; ``None``; ``"ascii"``,
  ``"unicode"``).
- ``dtype`` only ``float64`` or ``float32`` (what the learners take); ``encoding`` only a text
  codec.

:func:`check_text_params` is called by the featurizers' ``validate_params`` (so
:func:`textcw.pipeline.make_featurizer` runs it for ``textcw train`` and for
:func:`textcw.import_model` alike) and by the import for any scikit-learn vectorizer a plugin
registers.
"""

from __future__ import annotations

import numpy as np

from textcw._sklearn_compat import InvalidParameterError, validate_declared_params
from textcw.errors import ParameterError
from textcw.untrusted import one_line

__all__ = ["MAX_NGRAM", "SAFE_TOKEN_PATTERNS", "check_text_params"]

# scikit-learn's default (words of two or more letters or digits), words of one or more, letters
# only (no digits or underscores), and whitespace-separated tokens. Each is a single repetition
# of one character class, bounded by \b or by the class itself, so a match attempt at any
# position costs at most the length of the word there: featurizing is linear in the document.
SAFE_TOKEN_PATTERNS = (
    r"(?u)\b\w\w+\b",
    r"(?u)\b\w+\b",
    r"(?u)\b[^\W\d_][^\W\d_]+\b",
    r"\S+",
)
MAX_NGRAM = 10
_ANALYZERS = ("word", "char", "char_wb")
_INPUTS = ("content",)
_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def check_text_params(vectorizer, name: str) -> None:
    """Raise :class:`ParameterError` unless ``vectorizer``'s parameters are safe (module docstring).

    ``vectorizer`` is a scikit-learn ``CountVectorizer`` or ``HashingVectorizer`` (or subclass);
    ``name`` names the featurizer in the message. scikit-learn's own parameter checks run first.
    """
    try:
        validate_declared_params(vectorizer)
    except InvalidParameterError as exc:
        raise ParameterError(f"featurizer {name!r}: {one_line(exc)}") from None
    params = vectorizer.get_params(deep=False)

    def refuse(param: str, why: str):
        raise ParameterError(f"featurizer {name!r}: {param}={_show(params[param])} is not allowed; {why}")

    if params["input"] not in _INPUTS:
        refuse("input", "featurizers take the documents' text (input='content'), never file names "
                        "or open files")
    for param in ("analyzer", "tokenizer", "preprocessor", "strip_accents"):
        if callable(params[param]):
            refuse(param, "featurizer parameters are data, not code; give a named option, or write a "
                          "featurizer plugin for custom processing")
    if params["analyzer"] not in _ANALYZERS:
        refuse("analyzer", f"use one of {', '.join(_ANALYZERS)}")
    if params["token_pattern"] not in SAFE_TOKEN_PATTERNS:
        refuse("token_pattern", "a regular expression chosen freely can take exponential time on a "
                                "short document; use one of " + ", ".join(repr(p) for p in SAFE_TOKEN_PATTERNS))
    ngram = params["ngram_range"]
    if not (isinstance(ngram, tuple) and len(ngram) == 2
            and all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in ngram)
            and 1 <= ngram[0] <= ngram[1] <= MAX_NGRAM):
        refuse("ngram_range", f"give two integers (low, high) with 1 <= low <= high <= {MAX_NGRAM}")
    try:
        dtype = np.dtype(params["dtype"])
    except TypeError:
        dtype = None
    if dtype not in _DTYPES:
        refuse("dtype", "use float64 (the default) or float32")
    try:
        b"a".decode(params["encoding"], "ignore")  # a LookupError for unknown and for bytes-to-bytes codecs
        text_codec = True
    except LookupError:
        text_codec = False
    if not text_codec:
        refuse("encoding", "give the name of a text encoding such as 'utf-8' or 'latin-1'")


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
