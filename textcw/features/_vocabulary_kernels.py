"""The compiled kernel that learns a vocabulary (``fit`` of the word featurizers,
:func:`textcw.features.native.learn`): tokenising as :mod:`textcw.features._native_kernels`
does, each new term numbered as scikit-learn's ``CountVectorizer._count_vocab`` numbers it.

Kept apart from the kernels that featurize with a fitted vocabulary so that each module stays
readable on its own; it calls their hash, comparison and sorting kernels.
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw.features._native_kernels import _murmur3, _same, _sort_keys, _sort_scratch


@kernel
def _learn_terms(buf, offsets, pre, token, letter, min_len, letters_only, lower, low, high, capacity,
                 indptr, indices, data):
    """Learn a vocabulary as ``CountVectorizer._count_vocab`` does: every document's terms
    numbered in the order they are first seen, each row's term numbers sorted with their counts.

    A document is tokenised as by :func:`_featurize`, or, where ``pre[r]`` is set, is already
    scikit-learn's list of terms (each followed by a ``"\\n"``, which no word term holds). The
    order terms are first seen in is scikit-learn's: within a document all its unigrams, then
    all its bigrams, and so on (``_word_ngrams``), since that order is the fitted
    ``vocabulary_`` dict's. Returns ``(nnz, n_terms, terms)``: ``terms`` holds each term's bytes
    followed by ``"\\n"``, in number order (the packed form of :mod:`textcw.features.vocabulary`).
    ``capacity`` (a power of two) is the first size of the hash table; it doubles as it fills.
    """
    n_docs = len(offsets) - 1
    longest = 0
    per_doc = 1  # the most tokens (or given terms) of a document
    for r in range(n_docs):
        length = offsets[r + 1] - offsets[r]
        longest = max(longest, length)
        # a token takes min_len bytes and a separator (or the end); a given term its "\n"
        per_doc = max(per_doc, (length if pre[r] else length // (min_len + 1)) + 1)
    tok_s = np.empty(per_doc, dtype=np.int64)
    tok_e = np.empty(per_doc, dtype=np.int64)
    row = np.empty(max(16, per_doc * (high - low + 1)), dtype=np.int64)  # the row's distinct terms
    cnt = np.empty(len(row), dtype=np.float64)  # and their counts
    spare, counts = _sort_scratch(row)
    scratch = np.empty(longest + high + 1, dtype=np.uint8)  # an n-gram is at most its document
    src = np.empty(len(buf), dtype=np.uint8)  # lowercased once (given terms are already)
    for r in range(n_docs):
        for i in range(offsets[r], offsets[r + 1]):
            c = buf[i]
            src[i] = c + 32 if (lower and not pre[r] and c >= 65 and c <= 90) else c
    # a slot holds a term's hash (high 32 bits) and number: a probe reads the term only on a
    # matching hash
    slots = np.full(capacity, -1, dtype=np.int64)
    t_hash = np.empty(capacity // 2, dtype=np.int64)
    mark = np.empty(capacity // 2, dtype=np.int64)  # a term's place in the current row, or -1
    t_start = np.empty(capacity // 2, dtype=np.int64)
    t_end = np.empty(capacity // 2, dtype=np.int64)
    terms = np.empty(max(1024, len(buf) // 4), dtype=np.uint8)
    n_terms = 0
    used = 0
    nnz = np.int64(0)  # not the literal 0: a literal argument compiles a second version of the callee
    for r in range(n_docs):
        i, stop, ntok = offsets[r], offsets[r + 1], 0
        nlo, nhi = (1, 1) if pre[r] else (low, high)
        while i < stop:  # the document's tokens (or given terms) as spans of src
            if pre[r]:
                j = i
                while j < stop and src[j] != 10:
                    j += 1
                tok_s[ntok], tok_e[ntok], ntok, i = i, j, ntok + 1, j + 1
                continue
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
                tok_s[ntok], tok_e[ntok], ntok = i, j, ntok + 1
            i = j
        count = np.int64(0)
        for n in range(nlo, nhi + 1):
            for k in range(ntok - n + 1):
                p = np.int64(0)  # the n-gram: tokens k..k+n-1 joined by one space, in scratch
                for m in range(k, k + n):
                    if m > k:
                        scratch[p] = 32
                        p += 1
                    for q in range(tok_s[m], tok_e[m]):
                        scratch[p] = src[q]
                        p += 1
                h = _murmur3(scratch, 0, p) & 0xFFFFFFFF
                mask = len(slots) - 1
                s = h & mask
                found = -1
                while slots[s] != -1:
                    if (slots[s] >> 32) & 0xFFFFFFFF == h:
                        t = slots[s] & 0xFFFFFFFF
                        if _same(terms, t_start[t], t_end[t], scratch, 0, p):
                            found = t
                            break
                    s = (s + 1) & mask
                if found < 0:  # a new term: stored, numbered, the table grown past half full
                    if n_terms == len(t_hash):
                        t_hash = _grown(t_hash, 2 * n_terms)
                        t_start = _grown(t_start, 2 * n_terms)
                        t_end = _grown(t_end, 2 * n_terms)
                        mark = _grown(mark, 2 * n_terms)
                    if used + p + 1 > len(terms):
                        wider = np.empty(max(2 * len(terms), used + p + 1), dtype=np.uint8)
                        wider[:used] = terms[:used]
                        terms = wider
                    terms[used:used + p] = scratch[:p]
                    terms[used + p] = 10
                    t_hash[n_terms], t_start[n_terms], t_end[n_terms] = h, used, used + p
                    mark[n_terms] = -1
                    used += p + 1
                    slots[s] = (h << 32) | n_terms
                    found = n_terms
                    n_terms += 1
                    if 2 * n_terms > len(slots):
                        slots = _rehashed(t_hash, n_terms, 2 * len(slots))
                if mark[found] < 0:  # counted in place: only the row's distinct terms are sorted
                    mark[found] = count
                    row[count] = found
                    cnt[count] = 1.0
                    count += 1
                else:
                    cnt[mark[found]] += 1.0
        _sort_keys(row, count, spare, counts)
        for a in range(count):
            indices[nnz + a] = row[a]
            data[nnz + a] = cnt[mark[row[a]]]
        for a in range(count):
            mark[row[a]] = -1
        nnz += count
        indptr[r + 1] = nnz
    return nnz, n_terms, terms[:used].copy()


@kernel
def _grown(a, size):
    """``a`` copied into a new array of ``size`` (at least its length)."""
    out = np.empty(size, dtype=a.dtype)
    out[:len(a)] = a
    return out


@kernel
def _rehashed(t_hash, n_terms, size):
    """A table of ``size`` slots (a power of two) holding terms ``0..n_terms-1`` by their hashes
    (each slot: the hash in the high 32 bits, the term's number in the low)."""
    slots = np.full(size, -1, dtype=np.int64)
    mask = size - 1
    for t in range(n_terms):
        s = t_hash[t] & mask
        while slots[s] != -1:
            s = (s + 1) & mask
        slots[s] = (t_hash[t] << 32) | t
    return slots
