"""Compiled tokenising and hashing: documents to a CSR matrix without a Python object per token.

scikit-learn's vectorizers run a regular expression over each document, build a Python string
per token (and per n-gram), hash or look each one up, and append it to Python lists: about
7 MB of text per second per core. The kernels here do the same work on the documents' bytes in
one compiled pass per chunk and write the CSR arrays in place, so featurizing runs at the speed
of the hash, not of the interpreter.

What they compute is *exactly* scikit-learn's output, never an approximation (tested, matrix
for matrix, against ``HashingVectorizer`` and ``CountVectorizer`` on real corpora and on random
strings):

- Tokens: the word analyzer (``analyzer="word"``) with any of the safe token patterns of
  :mod:`textcw.features.params` (``\\b\\w\\w+\\b`` by default: runs of two or more word
  characters), lowercased if ``lowercase``, word n-grams joined by one space as scikit-learn
  joins them, ``ngram_range`` up to :data:`~textcw.features.params.MAX_NGRAM`.
- Hash: MurmurHash3 x86 32-bit with seed 0 of each token's UTF-8 bytes, the column
  ``abs(h) % n_features`` and, with ``alternate_sign``, the sign of ``h`` (scikit-learn's
  ``FeatureHasher``, Weinberger et al., ICML 2009), so models and hashed features stay
  compatible with scikit-learn's and across processes, machines and byte orders.
- Vocabulary look-up: an open-addressing table of the fitted vocabulary's terms keyed by that
  hash and checked byte for byte, so a term is found exactly when ``vocabulary_[term]`` is
  (:class:`~textcw.features.vocabulary.VocabularyTable`, built from the arrays a model file
  stores, never from a Python string per term).
- Vocabulary learning (``fit``, :func:`learn`): each term numbered when first seen, in
  scikit-learn's order (a document's unigrams, then its bigrams, ...), counted per document
  into the matrix ``CountVectorizer._count_vocab`` makes; scikit-learn's own code then sorts
  the terms and prunes them (``min_df``, ``max_df``, ``max_features``). 20 Newsgroups' training
  split: the same 130,107 terms in the same dict order, and the same pickle.

The compiled path reads ASCII documents. Python's ``\\w``, ``\\s`` and ``str.lower`` are Unicode
(``"Straße".lower()``, Greek final sigma, digits of other scripts): rather than re-implement
them, a document holding any non-ASCII character is featurized by scikit-learn's own code, per
document, and its row put in place, so the matrix is the same for every document. English
text is nearly all ASCII; a corpus in another script runs at scikit-learn's speed. Other
settings the kernels do not cover (stop words, character analyzers, accents stripped of ASCII
text are a no-op and allowed) leave the whole chunk to scikit-learn: :func:`supports` says which.

The kernels themselves are in :mod:`textcw.features._native_kernels`; this module is their
Python side.
"""

from __future__ import annotations

import codecs

import numpy as np

from textcw.features._native_kernels import (  # noqa: F401  (_murmur3: imported from here by others)
    _ascii_rows,
    _featurize,
    _gather,
    _hash_unigrams,
    _murmur3,
)
from textcw._jit import kernels_loaded
from textcw.features.params import SAFE_TOKEN_PATTERNS

__all__ = ["TextBlock", "ascii_block", "count_matrix", "hash_block", "learn", "lookup_block", "small_before_kernels",
           "supports"]

# Token classes of SAFE_TOKEN_PATTERNS, in that order: \b\w\w+\b, \b\w+\b, letters only, \S+.
_PATTERN_KIND = {pattern: kind for kind, pattern in enumerate(SAFE_TOKEN_PATTERNS)}
_MIN_LENGTH = (2, 1, 2, 1)
# Encodings whose decoding of bytes 0-127 is ASCII: the compiled path reads such bytes directly.
_ASCII_SUPERSETS = {"utf-8", "ascii", "latin-1", "iso8859-1", "cp1252"}

_WORD = np.zeros(256, dtype=np.uint8)  # Python's \w on ASCII: letters, digits, underscore
_LETTER = np.zeros(256, dtype=np.uint8)
for _c in range(128):
    _WORD[_c] = chr(_c).isalnum() or chr(_c) == "_"
    _LETTER[_c] = chr(_c).isalpha()
_SPACE = np.zeros(256, dtype=np.uint8)  # Python's \s on str: includes \x1c-\x1f
for _c in range(128):
    _SPACE[_c] = chr(_c).isspace()
_SPACE_NOT = (1 - _SPACE).astype(np.uint8)  # \S: any byte but whitespace
_IDENTITY = np.arange(256, dtype=np.uint8)
_LOWER = _IDENTITY.copy()  # str.lower on ASCII
_LOWER[65:91] += 32


class TextBlock:
    """Documents as one byte buffer and their offsets: document ``i`` is ``buf[offsets[i]:offsets[i + 1]]``.

    What a line-oriented corpus reads (:mod:`textcw.corpus.vw`): the featurizers of this package
    hash it without making a Python string per document; anything else sees a read-only
    sequence of ``str`` (decoded as UTF-8, undecodable bytes replaced).
    """

    __slots__ = ("buf", "offsets", "ascii")

    def __init__(self, buf: np.ndarray, offsets: np.ndarray, ascii: bool | None = None):
        self.buf = np.ascontiguousarray(buf, dtype=np.uint8)
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.ascii = bool(ascii) if ascii is not None else not bool(np.any(self.buf >= 128))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError("document index out of range")
        i %= n
        return self.buf[self.offsets[i]:self.offsets[i + 1]].tobytes().decode("utf-8", "replace")

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def take(self, rows) -> TextBlock:
        """The documents ``rows`` (in that order), as a new block."""
        rows = np.asarray(rows, dtype=np.int64)
        lengths = self.offsets[rows + 1] - self.offsets[rows]
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        buf = _gather(self.buf, self.offsets, rows, offsets)
        return TextBlock(buf, offsets, self.ascii or None)

    def __reduce__(self):
        return TextBlock, (self.buf, self.offsets, self.ascii)


#: Up to this many characters, documents are featurized by scikit-learn's code while no kernel
#: has been used in the process (the same matrix: module docstring): a one-line
#: prediction then never imports numba, which costs about 0.3 s of one core, about what
#: scikit-learn's tokenizer takes for a megabyte of text.
SMALL_TEXT_CHARS = 1 << 16


def small_before_kernels(docs) -> bool:
    """Whether ``docs`` (checked text) are at most :data:`SMALL_TEXT_CHARS` characters in all
    and no kernel is loaded yet; stops counting once past the bound."""
    if kernels_loaded() or len(docs) > SMALL_TEXT_CHARS:
        return False
    total = 0
    for doc in docs:
        total += len(doc)
        if total > SMALL_TEXT_CHARS:
            return False
    return True


def supports(vectorizer) -> bool:
    """Whether the kernels compute ``vectorizer.transform`` (the others use scikit-learn's).

    The settings are read as attributes, which is what ``get_params`` returns for a
    scikit-learn estimator; ``get_params`` itself inspects the constructor's signature on every
    call (0.1 ms, a third of featurizing one short document in a service).
    """
    p = {name: getattr(vectorizer, name, None) for name in
         ("analyzer", "token_pattern", "tokenizer", "preprocessor", "stop_words", "input", "strip_accents",
          "ngram_range")}
    return (p.get("analyzer") == "word" and p.get("token_pattern") in _PATTERN_KIND
            and p.get("tokenizer") is None and p.get("preprocessor") is None
            and p.get("stop_words") is None and p.get("input") == "content"
            and p.get("strip_accents") in (None, "ascii", "unicode")
            and isinstance(p.get("ngram_range"), tuple))


def _ascii_compatible(encoding: str) -> bool:
    try:
        return codecs.lookup(encoding).name in _ASCII_SUPERSETS
    except LookupError:
        return False


def ascii_block(docs, encoding: str = "utf-8") -> tuple[TextBlock, np.ndarray]:
    """The ASCII documents of ``docs`` as a :class:`TextBlock` and the positions of the others.

    The other documents (non-ASCII text, or bytes in an encoding that is not a superset of
    ASCII) are empty in the block; the caller featurizes them in Python.
    """
    if isinstance(docs, TextBlock):
        if docs.ascii:
            return docs, np.zeros(0, dtype=np.int64)
        flags = _ascii_rows(docs.buf, docs.offsets)
        others = np.flatnonzero(flags == 0)
        keep = docs.offsets.copy()
        lengths = np.diff(docs.offsets)
        lengths[others] = 0
        keep[0] = 0
        np.cumsum(lengths, out=keep[1:])
        buf = _gather(docs.buf, docs.offsets, np.arange(len(docs), dtype=np.int64), keep)
        return TextBlock(buf, keep, True), others
    docs = docs if isinstance(docs, list) else list(docs)
    n = len(docs)
    bytes_ok = _ascii_compatible(encoding)
    if all(type(d) is str for d in docs):
        joined = "".join(docs)
        if joined.isascii():  # the common case: one join, one encode, no per-document work
            offsets = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, docs), dtype=np.int64, count=n), out=offsets[1:])
            return TextBlock(np.frombuffer(joined.encode("ascii"), dtype=np.uint8), offsets, True), \
                np.zeros(0, dtype=np.int64)
    parts, others = [], []
    for i, d in enumerate(docs):
        if isinstance(d, str):
            ok = d.isascii()
            part = d.encode("ascii") if ok else b""
        else:
            d = bytes(d)
            ok = bytes_ok and d.isascii()
            part = d if ok else b""
        if not ok:
            others.append(i)
        parts.append(part)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, parts), dtype=np.int64, count=n), out=offsets[1:])
    return TextBlock(np.frombuffer(b"".join(parts), dtype=np.uint8), offsets, True), \
        np.asarray(others, dtype=np.int64)


def hash_block(block: TextBlock, vectorizer) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of ``HashingVectorizer.transform`` before ``binary``/``norm``.

    The rows are scikit-learn's ``FeatureHasher`` output: indices sorted, duplicates summed
    (entries that cancel to zero with ``alternate_sign`` are kept, as there); ``data`` is float64.
    """
    return _run(block, vectorizer, int(vectorizer.n_features), True, _dummy_table())


def _dummy_table():
    # the table argument of a hashing run, never probed: (slots, terms, starts, ends, columns)
    return (np.full(1, -1, dtype=np.int64), np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def lookup_block(block: TextBlock, vectorizer, table) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of ``CountVectorizer.transform`` before ``binary``: counts of
    the vocabulary's terms, indices sorted; tokens outside the vocabulary are skipped.

    ``table`` is the fitted vocabulary's :class:`~textcw.features.vocabulary.VocabularyTable`."""
    return _run(block, vectorizer, 1, False, table.as_tuple())


def _run(block: TextBlock, vectorizer, n_features: int, hashing: bool, table) -> tuple:
    # the settings as attributes, as supports() reads them (get_params inspects the signature
    # on every call: about 45 us of each featurize call); alternate_sign is False where the
    # vectorizer has none (CountVectorizer) or fixes it (hashed-tfidf)
    kind = _PATTERN_KIND[vectorizer.token_pattern]
    low, high = (int(n) for n in vectorizer.ngram_range)
    lowercase, alternate_sign = bool(vectorizer.lowercase), bool(getattr(vectorizer, "alternate_sign", False))
    n_docs = len(block)
    # A token takes at least min_len bytes and one separator (or the end), and each token ends
    # at most high - low + 1 n-grams: the entries of the matrix cannot exceed this bound.
    bound = (len(block.buf) // (_MIN_LENGTH[kind] + 1) + n_docs) * (high - low + 1)
    indptr = np.zeros(n_docs + 1, dtype=np.int32 if bound < 2**31 else np.int64)
    indices = np.empty(bound, dtype=np.int32)
    data = np.empty(bound, dtype=np.float64)
    token = _SPACE_NOT if kind == 3 else _WORD
    if hashing and high == 1:  # unigrams: hashed as they are read, in one pass
        nnz = _hash_unigrams(block.buf, block.offsets, token, _LETTER, _LOWER if lowercase else _IDENTITY,
                             _MIN_LENGTH[kind], kind == 2, n_features, alternate_sign, indptr, indices, data)
    else:
        nnz = _featurize(block.buf, block.offsets, token, _LETTER, _MIN_LENGTH[kind], kind == 2,
                         lowercase, low, high, n_features, alternate_sign, hashing, table, indptr, indices, data)
    return indptr, indices[:nnz], data[:nnz]


def learn(vectorizer, docs) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray]:
    """``(vocabulary, indptr, indices, counts)``: what ``CountVectorizer._count_vocab(docs,
    False)`` counts, through the kernels (:func:`textcw.features._vocabulary_kernels._learn_terms`).

    ``vocabulary`` maps each term to its number, in the order the terms are first seen, as
    scikit-learn's does; each row's term numbers are sorted, with their counts. A document the
    kernels do not read (non-ASCII text: module docstring) is analysed by scikit-learn's own
    analyzer, in its place, and its terms numbered there, so the numbering is the same for every
    document. The vocabulary is empty when no document holds a word.
    """
    from textcw.features._vocabulary_kernels import _learn_terms

    # made whether or not a document needs it: building it records scikit-learn's stop-word
    # check on the vectorizer (_stop_words_id), which a fitted featurizer (and its pickle) holds
    analyze = vectorizer.build_analyzer()
    block, others = ascii_block(docs, getattr(vectorizer, "encoding", "utf-8"))
    buf, offsets = block.buf, np.array(block.offsets, dtype=np.int64)
    pre = np.zeros(len(block), dtype=np.uint8)
    if len(others):  # the terms of each such document, each followed by "\n" (in no word term)
        given = [np.frombuffer("".join(f"{term}\n" for term in analyze(docs[int(i)])).encode("utf-8", "surrogatepass"),
                               dtype=np.uint8) for i in others]
        pieces, previous = [], 0
        for i, terms in zip(others.tolist(), given):
            pieces += [buf[offsets[previous]:offsets[i]], terms]  # document i is empty in the block
            previous = i + 1
        pieces.append(buf[offsets[previous]:])
        lengths = np.diff(offsets)
        lengths[others] = [len(terms) for terms in given]
        np.cumsum(lengths, out=offsets[1:])
        buf = np.concatenate(pieces)
        pre[others] = 1
    buf = buf.view()
    buf.flags.writeable = False  # one compiled version for buffers from str and from files
    kind = _PATTERN_KIND[vectorizer.token_pattern]
    low, high = (int(n) for n in vectorizer.ngram_range)
    given_bytes = int(np.diff(offsets)[others].sum()) if len(others) else 0
    bound = (len(buf) // (_MIN_LENGTH[kind] + 1) + len(block)) * (high - low + 1) + given_bytes
    indptr = np.zeros(len(block) + 1, dtype=np.int64)
    indices = np.empty(bound, dtype=np.int32)
    counts = np.empty(bound, dtype=np.float64)
    nnz, n_terms, terms = _learn_terms(buf, offsets, pre, _SPACE_NOT if kind == 3 else _WORD, _LETTER,
                                       _MIN_LENGTH[kind], kind == 2, bool(vectorizer.lowercase), low, high,
                                       1 << 14, indptr, indices, counts)
    words = terms.tobytes().decode("utf-8", "surrogatepass").split("\n")
    words.pop()  # the empty string after the last term's "\n"
    vocabulary = dict(zip(words, range(n_terms)))
    if len(vocabulary) != n_terms:
        raise RuntimeError("the compiled vocabulary repeats a term")  # a kernel bug, not bad input
    return vocabulary, indptr, indices[:nnz], counts[:nnz]


def count_matrix(indptr, indices, counts, n_terms: int, dtype):
    """The matrix ``CountVectorizer._count_vocab`` returns for these rows: int counts as ``dtype``,
    32-bit indices unless there are more than 2**31 - 1 entries, sorted indices, and the sparse
    class of the installed scikit-learn (``csr_matrix`` before 1.8, a ``csr_array`` aligned
    to the configured interface since)."""
    import scipy.sparse as sp

    index_dtype = np.int64 if int(indptr[-1]) > np.iinfo(np.int32).max else np.int32
    arrays = (counts.astype(np.intc), indices.astype(index_dtype), indptr.astype(index_dtype))
    try:  # scikit-learn 1.8 builds a csr_array (then aligned by _like_sklearn); before, a csr_matrix
        from sklearn.utils._sparse import _align_api_if_sparse  # noqa: F401
        make = sp.csr_array
    except ImportError:
        make = sp.csr_matrix
    X = make(arrays, shape=(len(indptr) - 1, n_terms), dtype=dtype)
    X.sort_indices()
    return _like_sklearn(X)


# ------------------------------------------------------------------------- featurizer glue
def _like_sklearn(X):
    """``X`` in the sparse interface scikit-learn's configuration asks for (spmatrix by default)."""
    try:
        from sklearn.utils._sparse import _align_api_if_sparse
    except ImportError:  # scikit-learn < 1.8 returns spmatrix
        return X
    return _align_api_if_sparse(X)


def transform(vectorizer, docs, rows, python_transform):
    """``vectorizer.transform(docs)`` through the kernels: the shared part of the featurizers.

    ``rows(block)`` gives ``(indptr, indices, data)`` of the block's documents (raw counts or
    signed sums), ``python_transform(docs)`` is scikit-learn's transform, used for the documents
    the kernels do not read. ``binary``, ``norm`` and ``dtype`` are applied as scikit-learn
    applies them, row by row, so the rows from both paths agree.
    """
    import scipy.sparse as sp

    (indptr, indices, data), others, shape = _kernel_part(vectorizer, docs, rows)
    X = sp.csr_matrix((data.astype(vectorizer.dtype, copy=False), indices, indptr), shape=shape)
    if vectorizer.binary:
        X.data.fill(1)
    if getattr(vectorizer, "norm", None) is not None:
        from sklearn.preprocessing import normalize

        X = normalize(X, norm=vectorizer.norm, copy=False)
    if len(others):
        rest = _python_part(docs, others, python_transform)
        X = sp.csr_matrix(_put_rows(X.indptr, X.indices, X.data, rest, others), shape=X.shape)
    return _like_sklearn(X)


def _kernel_part(vectorizer, docs, rows):
    """``rows(block)`` of the documents the kernels read (the others' rows left empty), the
    positions of the others, and the shape of the whole batch's matrix."""
    block, others = ascii_block(docs, getattr(vectorizer, "encoding", "utf-8"))
    n_columns = int(vectorizer.n_features) if hasattr(vectorizer, "n_features") else len(vectorizer.vocabulary_)
    return rows(block), others, (len(block), n_columns)


def _python_part(docs, others, python_transform):
    """scikit-learn's rows of the documents at positions ``others`` (a CSR matrix)."""
    import scipy.sparse as sp

    return sp.csr_matrix(python_transform([docs[int(i)] for i in others]))


def _put_rows(indptr, indices, data, rest, others: np.ndarray) -> tuple:
    """``(indptr, indices, data)`` of a CSR matrix whose (empty) rows ``others`` are replaced by
    the rows of the CSR matrix ``rest``, in that order.

    Made into a matrix, it is ``sp.vstack([X, rest])[order]``, entry for entry and of the same
    dtypes (tested), written in place: the stack and the fancy index each checked and copied
    every array (about 0.15 ms of a 32-document batch with one non-ASCII document, 1 in 8
    newsgroup batches)."""
    lengths = np.diff(indptr)
    lengths[others] = np.diff(rest.indptr)
    new_indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_indptr[1:])
    nnz = int(new_indptr[-1])
    new_indices = np.empty(nnz, dtype=np.result_type(indices, rest.indices))
    new_data = np.empty(nnz, dtype=np.result_type(data, rest.data))
    for (part_indptr, part_indices, part_data), rows in (((indptr, indices, data), None),
                                                         ((rest.indptr, rest.indices, rest.data), others)):
        starts = new_indptr[:-1] if rows is None else new_indptr[rows]
        # each stored value's place: its offset in its row plus where the row now starts
        place = np.arange(len(part_data), dtype=np.int64) + np.repeat(starts - part_indptr[:-1], np.diff(part_indptr))
        new_indices[place] = part_indices[:len(part_data)]
        new_data[place] = part_data
    # the index dtype the scipy constructor would choose: 32 bits while they fit
    if nnz <= np.iinfo(np.int32).max and new_indices.dtype == np.int32:
        new_indptr = new_indptr.astype(np.int32)
    return new_data, new_indices, new_indptr


class KernelRows:
    """A batch's feature rows as the compiled kernels take them, from :func:`kernel_rows` only.

    ``indptr``, ``indices`` and ``data`` meet the kernel contract of :mod:`textcw._csr` by
    construction (float64 non-zero values, column indices sorted and unique in each row and
    inside ``[0, n_columns)``, index arrays of one dtype, C-contiguous): the kernels and
    scikit-learn's ``FeatureHasher`` write them so. A caller that scores them with a kernel may
    skip :func:`~textcw._csr.as_kernel_csr`'s pass over them; :meth:`matrix` is the featurizer's
    ``transform`` of the same documents (the same arrays), for everything else.
    """

    __slots__ = ("indptr", "indices", "data", "shape")

    def __init__(self, indptr, indices, data, shape):
        self.indptr, self.indices, self.data, self.shape = indptr, indices, data, shape

    def matrix(self):
        import scipy.sparse as sp

        return _like_sklearn(sp.csr_matrix((self.data, self.indices, self.indptr), shape=self.shape))


def kernel_rows(vectorizer, docs, rows, python_transform) -> KernelRows | None:
    """The rows :func:`transform` makes, as :class:`KernelRows`, or ``None`` where they might not
    meet the kernel contract as they are (a norm, a dtype other than float64, or counts that can
    cancel to an explicit zero: ``alternate_sign`` without ``binary``); the caller then uses
    ``transform``. ``docs`` must be a checked list of documents."""
    if getattr(vectorizer, "norm", None) is not None or np.dtype(vectorizer.dtype) != np.float64 \
            or (getattr(vectorizer, "alternate_sign", False) and not vectorizer.binary):
        return None
    (indptr, indices, data), others, shape = _kernel_part(vectorizer, docs, rows)
    if indptr.dtype != indices.dtype:  # int64 row offsets past 2**31 entries: the matrix's own way
        return None
    if len(others):
        rest = _python_part(docs, others, python_transform)
        data, indices, indptr = _put_rows(indptr, indices, data, rest, others)
        if indptr.dtype != indices.dtype or data.dtype != np.float64:
            return None
    if vectorizer.binary:
        data.fill(1)
    return KernelRows(indptr, indices, data, shape)
