"""The compiled kernels of :mod:`textcw.features.native`: tokenising, MurmurHash3 and the
vocabulary table's probes, over bytes and offsets, writing CSR arrays in place.

Kept apart from the Python glue so that each module stays readable on its own; what the kernels
compute (exactly scikit-learn's tokens, hashes and look-ups) is described in
:mod:`textcw.features.native`, which is also where other modules import them from.

The vocabulary table (:class:`textcw.features.vocabulary.VocabularyTable`) is
``(slots, terms, term_starts, term_ends, columns)``: term ``t`` is the bytes
``terms[term_starts[t]:term_ends[t]]``, so the table probes the very arrays a model file stores
(terms separated by one byte, :mod:`textcw.features.vocabulary`) without copying the terms out.
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel

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
def _fill_table(slots, terms, term_starts, term_ends):
    """Each term's index in the first free slot from its MurmurHash3 (linear probing), as
    :func:`_find` looks for it; ``slots`` is a power of two long, at least twice the terms."""
    mask = len(slots) - 1
    for t in range(len(term_starts)):
        h = _murmur3(terms, term_starts[t], term_ends[t]) & 0xFFFFFFFF
        s = h & mask
        while slots[s] != -1:
            s = (s + 1) & mask
        slots[s] = t


@kernel
def _find(slots, terms, term_starts, term_ends, columns, buf, start, end):
    """The column of the term ``buf[start:end]``, or -1."""
    mask = len(slots) - 1
    s = (_murmur3(buf, start, end) & 0xFFFFFFFF) & mask
    while slots[s] != -1:
        t = slots[s]
        if _same(terms, term_starts[t], term_ends[t], buf, start, end):
            return columns[t]
        s = (s + 1) & mask
    return -1


@kernel
def _modulo(value, n):
    """``value % n`` for ``value >= 0``: a mask when ``n`` is a power of two (the usual hashing
    width, 2**20), which the compiler cannot know; an integer division per token costs more than
    the rest of its column."""
    if n & (n - 1) == 0:
        return value & (n - 1)
    return value % n


@kernel
def _key(piece, s0, s1, n_features, alternate_sign, hashing, slots, terms, term_starts, term_ends, columns):
    """The row key of the feature ``piece[s0:s1]``: its column times 2, plus 1 if its sign is
    negative; -1 for a term outside the vocabulary."""
    if hashing:
        h = _murmur3(piece, s0, s1)
        if h == -2147483648:  # abs() would overflow: scikit-learn's special case
            col = (2147483647 - (n_features - 1)) % n_features
        else:
            col = _modulo(abs(h), n_features)
        return 2 * col + (1 if (alternate_sign and h < 0) else 0)
    col = _find(slots, terms, term_starts, term_ends, columns, piece, s0, s1)
    return 2 * col if col >= 0 else -1


@kernel
def _heapsort(a, n):
    """Sort ``a[:n]`` in place (heapsort: O(n log n), no extra memory).

    Why not ``np.sort``: compiling numba's quicksort costs about 5 s of CPU on a machine's first
    run (most of the tokenizer's compile time), for rows longer than 64 keys only; this loop
    compiles in a fraction of that and sorts a document's keys (hundreds) about as fast.
    """
    for start in range(n // 2 - 1, -1, -1):
        _sift_down(a, start, n)
    for end in range(n - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift_down(a, np.int64(0), end)


@kernel
def _sift_down(a, root, n):
    """Move ``a[root]`` down the max-heap ``a[:n]`` to its place."""
    while True:
        child = 2 * root + 1
        if child >= n:
            return
        if child + 1 < n and a[child + 1] > a[child]:
            child += 1
        if a[root] >= a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


@kernel
def _insertion_sort(a, n):
    """Sort ``a[:n]`` in place: linear in ``n`` for an array that is nearly sorted."""
    for i in range(1, n):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key


# Buckets of the first pass of a row's sort, the shortest row that pass pays for, and the moves
# per key its insertion sort may make at most (else the row is heap-sorted instead).
SORT_BUCKETS = 128
BUCKETED_ROW = 16
SORT_STEPS = 64


@kernel
def _sort_keys(row, count, spare, counts):
    """Sort the keys ``row[:count]`` (each >= 0), with ``spare`` (as long as ``row``) and
    ``counts`` (``SORT_BUCKETS + 1`` entries) as scratch.

    A short row: insertion sort. Longer: first a counting sort on the keys' top bits into
    ``SORT_BUCKETS`` buckets, which leaves a row of hashed keys nearly sorted, then insertion
    sort, now about one step per key. An insertion sort of a random row moves a quarter of its
    length squared (a 40-token document: 400 moves, and as many mispredicted branches as keys),
    half of all the time ``hashing`` spent on short documents; a sorted row is the same
    whichever way it was sorted. The insertion sort moves a key only past larger keys of its own
    bucket, at most ``sum(size ** 2) / 2`` moves in all; where that bound passes
    :data:`SORT_STEPS` a key (keys bunched in a narrow range, or many copies of a few words in
    a long document), a heapsort (:func:`_heapsort`) instead: no row costs more than
    ``O(n log n + n SORT_STEPS)``."""
    if count < BUCKETED_ROW:
        _insertion_sort(row, count)
        return
    top = row[0]
    for a in range(1, count):
        top = max(top, row[a])
    shift = 0
    while (top >> shift) >= SORT_BUCKETS:
        shift += 1
    counts[:] = 0
    for a in range(count):
        counts[(row[a] >> shift) + 1] += 1
    squares = 0
    for b in range(1, SORT_BUCKETS + 1):
        squares += counts[b] * counts[b]
    if squares > 2 * SORT_STEPS * count:  # the insertion sort could take more than SORT_STEPS a key
        _heapsort(row, count)
        return
    for b in range(SORT_BUCKETS):
        counts[b + 1] += counts[b]
    for a in range(count):
        bucket = row[a] >> shift
        spare[counts[bucket]] = row[a]
        counts[bucket] += 1
    row[:count] = spare[:count]
    _insertion_sort(row, count)


@kernel
def _sort_scratch(row):
    """``(spare, counts)``, the scratch :func:`_sort_keys` needs for rows of up to ``len(row)``
    keys: made once per call of a kernel, not per row."""
    return np.empty_like(row), np.empty(SORT_BUCKETS + 1, dtype=np.int64)


@kernel
def _finish_row(row, count, indices, data, nnz, spare, counts):
    """Write a row's keys sorted by column (:func:`_sort_keys`), duplicates summed, at ``nnz``;
    the new ``nnz``. A sum of zero is kept, as scipy's ``sum_duplicates`` keeps it.
    """
    _sort_keys(row, count, spare, counts)
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
    spare, counts = _sort_scratch(row)
    nnz = np.int64(0)  # not the literal 0: a literal argument compiles a second version of the callee
    for r in range(n_docs):
        i = offsets[r]
        stop = offsets[r + 1]
        count = np.int64(0)
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
                col = _modulo(abs(signed), n_features)
            row[count] = 2 * col + (1 if (alternate_sign and signed < 0) else 0)
            count += 1
        nnz = _finish_row(row, count, indices, data, nnz, spare, counts)
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
    slots, terms, term_starts, term_ends, columns = table
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
    spare, counts = _sort_scratch(row)
    nnz = np.int64(0)  # not the literal 0: a literal argument compiles a second version of the callee
    for r in range(n_docs):
        i = offsets[r]
        stop = offsets[r + 1]
        count = np.int64(0)  # features of this row so far (row: columns times 2, plus 1 if negative)
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
                                   slots, terms, term_starts, term_ends, columns)
                    else:
                        p = np.int64(0)
                        for m in range(seen - n, seen):
                            if m > seen - n:
                                scratch[p] = 32
                                p += 1
                            for q in range(starts[m % high], ends[m % high]):
                                scratch[p] = src[q]
                                p += 1
                        key = _key(scratch, np.int64(0), p, n_features, alternate_sign, hashing,
                                   slots, terms, term_starts, term_ends, columns)
                    if key >= 0:
                        row[count] = key
                        count += 1
            i = j
        nnz = _finish_row(row, count, indices, data, nnz, spare, counts)
        indptr[r + 1] = nnz
    return nnz
