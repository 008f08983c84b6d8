"""A fitted vocabulary as arrays: how vocabulary featurizers are pickled, and the table their
compiled ``transform`` probes.

Why arrays: a model's featurizer holds one Python string per word (``vocabulary_``, 130,107 of
them for 20 Newsgroups). Pickled as a dict, every word is one pickle opcode that joblib's
unpickler, which is pure Python, runs one at a time: loading the main job's model took about a
second, nearly all of it in this dict (and in the tfidf weights, a list of as many floats). A
NumPy array is one object to the unpickler; joblib writes its bytes raw, beside the pickle
opcodes, and reads them back as one block. So :class:`~textcw.features.text.WordCounts` pickles
its vocabulary as

``(PACKED, terms, separator, columns)`` (:func:`pack`):
    ``terms``, uint8: the UTF-8 bytes of every term in the dict's order, each followed by the
    byte ``separator``, an ASCII byte that occurs in no term (``"\\n"``: word tokens never hold
    one); ``columns``, the terms' columns in the same order (int32, int64 past 2**31).

Loading rebuilds the dict in three C-speed steps (one decode, one ``str.split``, one
``dict(zip(...))``), the same dict in the same order (columns as Python ints, also where
scikit-learn's pruning had left numpy integers): ``vocabulary_`` stays the plain ``dict`` that
scikit-learn, the exports (:mod:`textcw.portable`) and the feature cache read. The
separator's positions are where the terms end, so the compiled look-up table
(:class:`VocabularyTable`) probes these very arrays: nothing per word is done in Python, at load
or at the first ``transform``. A vocabulary that cannot be packed exactly (keys that are not
``str``, columns that are not integers, terms using every ASCII character) is pickled as the
dict it is, and files saved before the arrays load as they always did.
"""

from __future__ import annotations

import weakref

import numpy as np

from textcw.features._native_kernels import _fill_table

__all__ = ["PACKED", "VocabularyTable", "derived", "is_packed", "pack", "remember"]

PACKED = "textcw.vocabulary-arrays/1"  # the first item of a packed vocabulary (and its version)


class VocabularyTable:
    """A fitted vocabulary as the arrays of :func:`pack` and an open-addressing hash table the
    kernels probe.

    ``slots[h & mask]`` holds a term's index, probed linearly from its MurmurHash3; each hit is
    checked byte for byte against ``terms[term_starts[t]:term_ends[t]]``, so a term is found
    exactly when ``vocabulary_[term]`` is. The slots are filled on the first look-up: a model
    loaded only to be inspected never pays for them.
    """

    def __init__(self, terms: np.ndarray, separator: int, columns: np.ndarray):
        terms, columns = np.asarray(terms), np.asarray(columns)
        if terms.dtype != np.uint8 or terms.ndim != 1 or columns.ndim != 1 or columns.dtype.kind not in "iu" \
                or not (isinstance(separator, int) and 0 <= separator < 128):
            raise ValueError("the vocabulary arrays have the wrong shape or type")
        # read-only, whether it comes from a str (frombuffer) or a file (a memory map too): one
        # compiled version of the kernels serves both, and nothing edits the terms behind the
        # table's back
        terms = np.ascontiguousarray(terms).view(np.ndarray)
        terms.flags.writeable = False
        ends = np.flatnonzero(terms == separator)
        if len(ends) != len(columns) or (len(terms) and ends[-1] != len(terms) - 1):
            raise ValueError(f"the vocabulary arrays do not agree: {len(columns)} columns for "
                             f"{len(ends)} terms")
        self.terms = terms
        self.separator = separator
        self.term_ends = ends.astype(np.int64, copy=False)
        self.term_starts = np.zeros(len(ends), dtype=np.int64)
        self.term_starts[1:] = self.term_ends[:-1] + 1
        self.columns = columns.astype(np.int64, copy=False)
        self.n_terms = len(columns)
        self._slots = None

    @classmethod
    def from_dict(cls, vocabulary: dict) -> VocabularyTable:
        """The table of ``vocabulary`` (``{term: column}``); :class:`ValueError` or
        :class:`TypeError` if it cannot be held exactly as arrays (module docstring)."""
        terms = list(vocabulary)
        columns = np.array(list(vocabulary.values())) if terms else np.zeros(0, dtype=np.int64)
        if columns.ndim != 1 or columns.dtype.kind not in "iu":
            raise TypeError("the vocabulary's columns are not all integers")
        separator = 10  # "\n"
        text = "\n".join(terms)  # a TypeError for a key that is not a str
        if text.count("\n") != max(len(terms) - 1, 0):  # a term holds "\n" (a character analyzer)
            used = np.bincount(np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8),
                               minlength=256)[:128]
            free = np.flatnonzero(used == 0)
            if not len(free):
                raise ValueError("every ASCII character occurs in the vocabulary's terms")
            separator = int(free[0])
            text = chr(separator).join(terms)
        encoded = (text + chr(separator)).encode("utf-8", "surrogatepass") if terms else b""
        return cls(np.frombuffer(encoded, dtype=np.uint8), separator, columns)

    @classmethod
    def from_packed(cls, packed) -> VocabularyTable:
        """The table of a pickled vocabulary (:func:`pack`); :class:`ValueError` if it is not one."""
        if not is_packed(packed):
            raise ValueError("not a packed vocabulary")
        _, terms, separator, columns = packed
        if not (isinstance(terms, np.ndarray) and isinstance(columns, np.ndarray)):
            raise ValueError("a packed vocabulary holds two arrays")
        return cls(terms, separator, columns)

    def to_dict(self) -> dict:
        """``{term: column}``, keys and their order as :meth:`from_dict` was given them."""
        text = self.terms.tobytes().decode("utf-8", "surrogatepass")
        terms = text.split(chr(self.separator))
        terms.pop()  # the empty string after the last separator ([""] alone when there are no terms)
        vocabulary = dict(zip(terms, self.columns.tolist()))
        if len(vocabulary) != self.n_terms:
            raise ValueError("the packed vocabulary repeats a term")
        return vocabulary

    def packed(self) -> tuple:
        """What a pickle holds (module docstring): arrays, a tag and a byte, nothing per word."""
        narrow = self.n_terms == 0 or (int(self.columns.min()) >= -2**31 and int(self.columns.max()) < 2**31)
        return (PACKED, self.terms, self.separator, self.columns.astype(np.int32) if narrow else self.columns)

    def as_tuple(self) -> tuple:
        """``(slots, terms, term_starts, term_ends, columns)``, what the kernels take."""
        if self._slots is None:
            slots = np.full(1 << max(4, (2 * self.n_terms + 1).bit_length()), -1, dtype=np.int64)
            _fill_table(slots, self.terms, self.term_starts, self.term_ends)
            self._slots = slots
        return (self._slots, self.terms, self.term_starts, self.term_ends, self.columns)


def is_packed(value) -> bool:
    """Whether ``value`` is a vocabulary pickled as arrays (:func:`pack`)."""
    return type(value) is tuple and len(value) == 4 and isinstance(value[0], str) and value[0] == PACKED


def pack(vocabulary):
    """``vocabulary`` as a pickle should hold it: packed (module docstring), or as it is when
    it cannot be packed exactly."""
    if type(vocabulary) is not dict:
        return vocabulary
    try:
        return VocabularyTable.from_dict(vocabulary).packed()
    except (TypeError, ValueError):
        return vocabulary


# ---------------------------------------------------------------- state derived from a fitted attribute
_DERIVED: dict[int, dict] = {}


def derived(owner, name: str, source, make):
    """``make(source)``, cached for ``owner`` under ``name`` while ``source`` (a fitted attribute
    of ``owner``: its ``vocabulary_``, its ``idf_``) is still the same object.

    Kept outside ``owner.__dict__``, deliberately: what ``vars()`` shows of a featurizer is what
    the exports write, what the feature cache stores and what ``combine`` compares between
    models, and a loaded model must show what the saved one did. A fitted attribute is replaced,
    not edited, when a featurizer is fitted again (scikit-learn's convention, on which the
    compiled table of :class:`~textcw.features.text.WordCounts` always relied), so the identity
    of ``source`` says whether the cached value is current.
    """
    entries = _entries(owner)
    hit = entries.get(name)
    if hit is None or hit[0] is not source:
        hit = entries[name] = (source, make(source))
    return hit[1]


def remember(owner, name: str, source, value) -> None:
    """Cache ``value`` as what :func:`derived` gives for ``source`` (made while unpickling)."""
    _entries(owner)[name] = (source, value)


def _entries(owner) -> dict:
    key = id(owner)
    entries = _DERIVED.get(key)
    if entries is None:
        entries = _DERIVED.setdefault(key, {})
        # dropped when the owner is (before its id can be reused)
        weakref.finalize(owner, _DERIVED.pop, key, None)
    return entries
