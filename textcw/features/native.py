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
  hash and checked byte for byte, so a term is found exactly when ``vocabulary_[term]`` is.

The compiled path reads ASCII documents. Python's ``\\w``, ``\\s`` and ``str.lower`` are Unicode
(``"Straße".lower()``, Greek final sigma, digits of other scripts): rather than re-implement
them, a document holding any non-ASCII character is featurized by scikit-learn's own code, per
document, and its row put in place, so the matrix is the same for every document. English
text is nearly all ASCII; a corpus in another script runs at scikit-learn's speed. Other
settings the kernels do not cover (stop words, character analyzers, accents stripped of ASCII
text are a no-op and allowed) leave the whole chunk to scikit-learn: :func:`supports` says which.
"""

from __future__ import annotations

import codecs

import numpy as np

from textcw._jit import kernel
from textcw.features.params import SAFE_TOKEN_PATTERNS

__all__ = ["TextBlock", "VocabularyTable", "ascii_block", "hash_block", "lookup_block", "supports"]

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


def supports(vectorizer) -> bool:
    """Whether the kernels compute ``vectorizer.transform`` (the others use scikit-learn's)."""
    p = vectorizer.get_params(deep=False)
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


class VocabularyTable:
    """A fitted vocabulary as an open-addressing hash table the kernels can probe.

    ``slots[h & mask]`` holds a term's column, probed linearly from its MurmurHash3; the terms'
    UTF-8 bytes are kept (``terms``, ``term_offsets``) to check every hit byte for byte.
    """

    def __init__(self, vocabulary: dict):
        items = [(term.encode("utf-8"), int(col)) for term, col in vocabulary.items()]
        size = 1 << max(4, (2 * len(items) + 1).bit_length())
        self.terms = np.frombuffer(b"".join(t for t, _ in items), dtype=np.uint8)
        self.term_offsets = np.zeros(len(items) + 1, dtype=np.int64)
        np.cumsum(np.fromiter((len(t) for t, _ in items), dtype=np.int64, count=len(items)),
                  out=self.term_offsets[1:])
        self.columns = np.fromiter((c for _, c in items), dtype=np.int64, count=len(items))
        self.slots = np.full(size, -1, dtype=np.int64)
        _fill_table(self.slots, self.terms, self.term_offsets)
        self.n_terms = len(items)

    def as_tuple(self):
        return (self.slots, self.terms, self.term_offsets, self.columns)


def _dummy_table():
    return (np.full(1, -1, dtype=np.int64), np.zeros(0, dtype=np.uint8),
            np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64))


def lookup_block(block: TextBlock, vectorizer, table: VocabularyTable) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of ``CountVectorizer.transform`` before ``binary``: counts of
    the vocabulary's terms, indices sorted; tokens outside the vocabulary are skipped."""
    return _run(block, vectorizer, 1, False, table.as_tuple())


def _run(block: TextBlock, vectorizer, n_features: int, hashing: bool, table) -> tuple:
    p = vectorizer.get_params(deep=False)
    kind = _PATTERN_KIND[p["token_pattern"]]
    low, high = (int(n) for n in p["ngram_range"])
    n_docs = len(block)
    # A token takes at least min_len bytes and one separator (or the end), and each token ends
    # at most high - low + 1 n-grams: the entries of the matrix cannot exceed this bound.
    bound = (len(block.buf) // (_MIN_LENGTH[kind] + 1) + n_docs) * (high - low + 1)
    indptr = np.zeros(n_docs + 1, dtype=np.int32 if bound < 2**31 else np.int64)
    indices = np.empty(bound, dtype=np.int32)
    data = np.empty(bound, dtype=np.float64)
    token = _SPACE_NOT if kind == 3 else _WORD
    if hashing and high == 1:  # unigrams: hashed as they are read, in one pass
        nnz = _hash_unigrams(block.buf, block.offsets, token, _LETTER, _LOWER if p["lowercase"] else _IDENTITY,
                             _MIN_LENGTH[kind], kind == 2, n_features, bool(p.get("alternate_sign", False)),
                             indptr, indices, data)
    else:
        nnz = _featurize(block.buf, block.offsets, token, _LETTER, _MIN_LENGTH[kind], kind == 2,
                         bool(p["lowercase"]), low, high, n_features, bool(p.get("alternate_sign", False)),
                         hashing, table, indptr, indices, data)
    return indptr, indices[:nnz], data[:nnz]


# ------------------------------------------------------------------------------------ kernels
@kernel
def _murmur3(buf, start, end):
    """MurmurHash3_x86_32 (Appleby), seed 0, of ``buf[start:end]``, as a signed 32-bit integer."""
    mask = np.uint64(0xFFFFFFFF)
    c1 = np.uint64(0xCC9E2D51)
    c2 = np.uint64(0x1B873593)
    h = np.uint64(0)
    n = end - start
    nblocks = n // 4
    for b in range(nblocks):
        i = start + 4 * b
        k = (np.uint64(buf[i]) | (np.uint64(buf[i + 1]) << np.uint64(8))
             | (np.uint64(buf[i + 2]) << np.uint64(16)) | (np.uint64(buf[i + 3]) << np.uint64(24)))
        k = (k * c1) & mask
        k = ((k << np.uint64(15)) | (k >> np.uint64(17))) & mask
        k = (k * c2) & mask
        h ^= k
        h = ((h << np.uint64(13)) | (h >> np.uint64(19))) & mask
        h = (h * np.uint64(5) + np.uint64(0xE6546B64)) & mask
    tail = start + 4 * nblocks
    rest = n & 3
    k = np.uint64(0)
    if rest >= 3:
        k ^= np.uint64(buf[tail + 2]) << np.uint64(16)
    if rest >= 2:
        k ^= np.uint64(buf[tail + 1]) << np.uint64(8)
    if rest >= 1:
        k ^= np.uint64(buf[tail])
    return _murmur3_final(h, k, rest >= 1, n)


@kernel
def _murmur3_final(h, k, has_tail, n):
    """The end of MurmurHash3_x86_32: mix in the tail block ``k`` (when there is one) and the
    length ``n``, avalanche, and return the hash as a signed 32-bit integer (as scikit-learn's
    ``murmurhash3_32(..., positive=False)``)."""
    mask = np.uint64(0xFFFFFFFF)
    if has_tail:
        k = (k * np.uint64(0xCC9E2D51)) & mask
        k = ((k << np.uint64(15)) | (k >> np.uint64(17))) & mask
        k = (k * np.uint64(0x1B873593)) & mask
        h ^= k
    h ^= np.uint64(n) & mask
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x85EBCA6B)) & mask
    h ^= h >> np.uint64(13)
    h = (h * np.uint64(0xC2B2AE35)) & mask
    h ^= h >> np.uint64(16)
    signed = np.int64(h)
    if signed >= 2147483648:
        signed -= 4294967296
    return signed


@kernel
def _ascii_rows(buf, offsets):
    n = len(offsets) - 1
    flags = np.ones(n, dtype=np.uint8)
    for r in range(n):
        for i in range(offsets[r], offsets[r + 1]):
            if buf[i] >= 128:
                flags[r] = 0
                break
    return flags


@kernel
def _gather(buf, offsets, rows, new_offsets):
    out = np.empty(new_offsets[-1], dtype=np.uint8)
    for j in range(len(rows)):
        lo = offsets[rows[j]]
        length = new_offsets[j + 1] - new_offsets[j]
        for t in range(length):
            out[new_offsets[j] + t] = buf[lo + t]
    return out


@kernel
def _same(a, a0, a1, b, b0, b1):
    if a1 - a0 != b1 - b0:
        return False
    for t in range(a1 - a0):
        if a[a0 + t] != b[b0 + t]:
            return False
    return True


@kernel
def _fill_table(slots, terms, term_offsets):
    mask = len(slots) - 1
    for t in range(len(term_offsets) - 1):
        h = _murmur3(terms, term_offsets[t], term_offsets[t + 1]) & 0xFFFFFFFF
        s = h & mask
        while slots[s] != -1:
            s = (s + 1) & mask
        slots[s] = t


@kernel
def _find(slots, terms, term_offsets, columns, buf, start, end):
    """The column of the term ``buf[start:end]``, or -1."""
    mask = len(slots) - 1
    s = (_murmur3(buf, start, end) & 0xFFFFFFFF) & mask
    while slots[s] != -1:
        t = slots[s]
        if _same(terms, term_offsets[t], term_offsets[t + 1], buf, start, end):
            return columns[t]
        s = (s + 1) & mask
    return -1


@kernel
def _key(piece, s0, s1, n_features, alternate_sign, hashing, slots, terms, term_offsets, columns):
    """The row key of the feature ``piece[s0:s1]``: its column times 2, plus 1 if its sign is
    negative; -1 for a term outside the vocabulary."""
    if hashing:
        h = _murmur3(piece, s0, s1)
        if h == -2147483648:  # abs() would overflow: scikit-learn's special case
            col = (2147483647 - (n_features - 1)) % n_features
        else:
            col = abs(h) % n_features
        return 2 * col + (1 if (alternate_sign and h < 0) else 0)
    col = _find(slots, terms, term_offsets, columns, piece, s0, s1)
    return 2 * col if col >= 0 else -1


@kernel
def _finish_row(row, count, indices, data, nnz):
    """Write a row's keys sorted by column, duplicates summed, at ``nnz``; the new ``nnz``.

    Insertion sort: rows are short; numpy's sort past 64 entries. A sum of zero is kept, as
    scipy's ``sum_duplicates`` keeps it.
    """
    if count > 64:
        row[:count] = np.sort(row[:count])
    else:
        for a in range(1, count):
            key = row[a]
            b = a - 1
            while b >= 0 and row[b] > key:
                row[b + 1] = row[b]
                b -= 1
            row[b + 1] = key
    k = 0
    while k < count:
        col = row[k] >> 1
        total = 0.0
        while k < count and (row[k] >> 1) == col:
            total += -1.0 if (row[k] & 1) else 1.0
            k += 1
        indices[nnz] = col  # a sum of zero is kept, as scipy's sum_duplicates keeps it
        data[nnz] = total
        nnz += 1
    return nnz


@kernel
def _hash_unigrams(buf, offsets, token, letter, lowmap, min_len, letters_only, n_features, alternate_sign,
                   indptr, indices, data):
    """:func:`_featurize` for hashed unigrams, in one pass: each token is lowercased (through
    ``lowmap``) and MurmurHash3-ed byte by byte as it is read, with no copy of the text.

    The same hash as :func:`_murmur3` of the lowercased token (the 4-byte blocks are formed as
    the bytes arrive; tested against it)."""
    mask = np.uint64(0xFFFFFFFF)
    c1 = np.uint64(0xCC9E2D51)
    c2 = np.uint64(0x1B873593)
    n_docs = len(offsets) - 1
    longest = 0
    for r in range(n_docs):
        longest = max(longest, offsets[r + 1] - offsets[r])
    row = np.empty(max(16, longest // (min_len + 1) + 1), dtype=np.int64)
    nnz = 0
    for r in range(n_docs):
        i = offsets[r]
        stop = offsets[r + 1]
        count = 0
        while i < stop:
            if token[buf[i]] == 0:
                i += 1
                continue
            h = np.uint64(0)
            k = np.uint64(0)
            shift = np.uint64(0)
            length = 0
            letters = True
            while i < stop:
                c = buf[i]
                if token[c] == 0:
                    break
                if letters_only and letter[c] == 0:
                    letters = False
                k |= np.uint64(lowmap[c]) << shift
                shift += np.uint64(8)
                length += 1
                if shift == np.uint64(32):
                    k = (k * c1) & mask
                    k = ((k << np.uint64(15)) | (k >> np.uint64(17))) & mask
                    k = (k * c2) & mask
                    h ^= k
                    h = ((h << np.uint64(13)) | (h >> np.uint64(19))) & mask
                    h = (h * np.uint64(5) + np.uint64(0xE6546B64)) & mask
                    k = np.uint64(0)
                    shift = np.uint64(0)
                i += 1
            if length < min_len or not letters:
                continue
            signed = _murmur3_final(h, k, shift > np.uint64(0), length)
            if signed == -2147483648:  # abs() would overflow: scikit-learn's special case
                col = (2147483647 - (n_features - 1)) % n_features
            else:
                col = abs(signed) % n_features
            row[count] = 2 * col + (1 if (alternate_sign and signed < 0) else 0)
            count += 1
        nnz = _finish_row(row, count, indices, data, nnz)
        indptr[r + 1] = nnz
    return nnz


@kernel
def _featurize(buf, offsets, token, letter, min_len, letters_only, lower, low, high, n_features,
               alternate_sign, hashing, table, indptr, indices, data):
    """Every document's features into ``indptr``/``indices``/``data``; returns the entries written.

    A token is a maximal run of bytes with ``token[c]`` set (word characters, or non-space for
    ``\\S+``) of at least ``min_len`` bytes, all letters if ``letters_only``. A feature's column
    is its hash's (``hashing``) or its vocabulary column (tokens outside it are skipped). Word
    n-grams are the tokens joined by one space, copied to a scratch buffer to be hashed. Each
    row is sorted by column as it is finished (insertion sort: rows are short; numpy's sort past
    64 entries) and duplicates summed, as scikit-learn's matrices are (a sum of zero is kept).
    """
    slots, terms, term_offsets, columns = table
    n_docs = len(offsets) - 1
    starts = np.empty(high, dtype=np.int64)  # the last `high` tokens, a ring
    ends = np.empty(high, dtype=np.int64)
    # Arrays are made once per call, never reassigned in the loops: each reassignment costs
    # reference counting, which per token would cost more than the hash.
    longest = 0
    for r in range(n_docs):
        longest = max(longest, offsets[r + 1] - offsets[r])
    scratch = np.empty(longest + high + 1, dtype=np.uint8)  # an n-gram is at most its document
    text = np.empty(len(buf) if lower else 0, dtype=np.uint8)
    if lower:  # lowercased once, hashed from
        for i in range(len(buf)):
            c = buf[i]
            text[i] = c + 32 if (c >= 65 and c <= 90) else c
    src = text if lower else buf
    row = np.empty(max(16, (longest // (min_len + 1) + 1) * (high - low + 1)), dtype=np.int64)
    nnz = 0
    for r in range(n_docs):
        i = offsets[r]
        stop = offsets[r + 1]
        count = 0  # features of this row so far (row: columns times 2, plus 1 if negative)
        seen = 0  # tokens of this document so far
        while i < stop:
            if token[src[i]] == 0:
                i += 1
                continue
            j = i
            letters = True
            while j < stop and token[src[j]] != 0:
                if letters_only and letter[src[j]] == 0:
                    letters = False
                j += 1
            if j - i >= min_len and letters:
                slot = seen % high
                starts[slot] = i
                ends[slot] = j
                seen += 1
                for n in range(low, min(high, seen) + 1):
                    if n == 1:
                        key = _key(src, i, j, n_features, alternate_sign, hashing,
                                   slots, terms, term_offsets, columns)
                    else:
                        p = 0
                        for m in range(seen - n, seen):
                            if m > seen - n:
                                scratch[p] = 32
                                p += 1
                            for q in range(starts[m % high], ends[m % high]):
                                scratch[p] = src[q]
                                p += 1
                        key = _key(scratch, 0, p, n_features, alternate_sign, hashing,
                                   slots, terms, term_offsets, columns)
                    if key >= 0:
                        row[count] = key
                        count += 1
            i = j
        nnz = _finish_row(row, count, indices, data, nnz)
        indptr[r + 1] = nnz
    return nnz


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

    block, others = ascii_block(docs, getattr(vectorizer, "encoding", "utf-8"))
    indptr, indices, data = rows(block)
    n_columns = int(vectorizer.n_features) if hasattr(vectorizer, "n_features") else len(vectorizer.vocabulary_)
    X = sp.csr_matrix((data.astype(vectorizer.dtype, copy=False), indices, indptr),
                      shape=(len(block), n_columns))
    if vectorizer.binary:
        X.data.fill(1)
    if getattr(vectorizer, "norm", None) is not None:
        from sklearn.preprocessing import normalize

        X = normalize(X, norm=vectorizer.norm, copy=False)
    if len(others):
        rest = python_transform([docs[int(i)] for i in others])
        order = np.arange(len(block), dtype=np.int64)
        order[others] = len(block) + np.arange(len(others))
        X = sp.vstack([X, sp.csr_matrix(rest)], format="csr")[order]
    return _like_sklearn(X)
