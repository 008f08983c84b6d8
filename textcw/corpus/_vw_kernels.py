"""The compiled kernels of :mod:`textcw.corpus.vw`: lines, labels and text of a mapped file.

Kept apart so that registering the corpus (``textcw list``) imports no compiler. The label hash
comes from :mod:`textcw.features._native_kernels` itself, not from :mod:`textcw.features.native`,
which imports scikit-learn: a file's scan needs numpy and numba only.
"""

from __future__ import annotations

import numpy as np

from textcw._jit import kernel
from textcw.features._native_kernels import _murmur3

@kernel
def _label_key(buf, a, b):
    """A 62-bit key of the label ``buf[a:b]``: MurmurHash3 and FNV-1a side by side."""
    fnv = np.uint64(2166136261)
    for i in range(a, b):
        fnv = ((fnv ^ np.uint64(buf[i])) * np.uint64(16777619)) & np.uint64(0xFFFFFFFF)
    return (np.int64(fnv & np.uint64(0x3FFFFFFF)) << 32) | (_murmur3(buf, a, b) & 0xFFFFFFFF)


@kernel
def _find_label(slots, keys, key):
    mask = len(slots) - 1
    s = key & mask
    while slots[s] != -1:
        if keys[slots[s]] == key:
            return slots[s]
        s = (s + 1) & mask
    return -1


@kernel
def _line(buf, i, n):
    """``(end of line, bar, label start, label end, words before the bar)`` of the line at ``i``."""
    # Up to the first '|' or line end, then only the line end: one comparison per byte of the
    # text, which is nearly all of a line (the scan and every chunk's read run this loop).
    j = i
    while j < n and buf[j] != 10 and buf[j] != 124:
        j += 1
    bar = -1
    if j < n and buf[j] == 124:
        bar = j
        j += 1
        while j < n and buf[j] != 10:
            j += 1
    a = -1
    b = -1
    words = 0
    if bar >= 0:
        k = i
        while k < bar:
            while k < bar and (buf[k] == 32 or buf[k] == 9 or buf[k] == 13):
                k += 1
            if k < bar:
                start = k
                while k < bar and not (buf[k] == 32 or buf[k] == 9 or buf[k] == 13):
                    k += 1
                if words == 0:
                    a = start
                    b = k
                words += 1
    return j, bar, a, b, words


@kernel
def _line_end(buf, i, n):
    """The end of the line at ``i`` (its newline, or ``n``)."""
    j = i
    while j < n and buf[j] != 10:
        j += 1
    return j


@kernel
def _blank(buf, i, j):
    for k in range(i, j):
        c = buf[k]
        if not (c == 32 or c == 9 or c == 13):
            return False
    return True


@kernel
def _scan(buf, every, max_labels, slots, first, lengths, keys):
    """One pass: documents, checkpoints, distinct labels; or the first bad line (error code,
    line number, byte offset)."""
    n = len(buf)
    checkpoints = np.empty(n // 2 // every + 2, dtype=np.int64)  # a document takes >= 2 bytes ("a|")
    docs = 0
    n_labels = 0
    line = 0
    i = 0
    while i < n:
        line += 1
        j, bar, a, b, words = _line(buf, i, n)
        if not _blank(buf, i, j):
            if bar < 0:
                return docs, checkpoints[:0].copy(), n_labels, 1, line, i
            if words == 0:
                return docs, checkpoints[:0].copy(), n_labels, 2, line, i
            if words > 1:
                return docs, checkpoints[:0].copy(), n_labels, 3, line, i
            if docs % every == 0:
                checkpoints[docs // every] = i
            key = _label_key(buf, a, b)
            if _find_label(slots, keys[:n_labels], key) < 0:
                if n_labels == max_labels:
                    return docs, checkpoints[:0].copy(), n_labels, 4, line, i
                keys[n_labels] = key
                first[n_labels] = a
                lengths[n_labels] = b - a
                s = key & (len(slots) - 1)
                while slots[s] != -1:
                    s = (s + 1) & (len(slots) - 1)
                slots[s] = n_labels
                n_labels += 1
            docs += 1
        i = j + 1
    return docs, checkpoints[:docs // every + 1].copy(), n_labels, 0, line, 0


@kernel
def _read(buf, begin, limit, skip, count, slots, keys, label_class):
    """``count`` documents after skipping ``skip`` from byte ``begin``: their text (after the
    ``|``, copied into one buffer), its offsets, and their classes; and the position of a
    document whose label is unknown (else -1). The documents end before byte ``limit`` (the
    next checkpoint), which bounds the copy."""
    n = len(buf)
    i = begin
    seen = 0
    while i < n and seen < skip:  # the lines before the chunk: only where they end
        j = _line_end(buf, i, n)
        if not _blank(buf, i, j):
            seen += 1
        i = j + 1
    text = np.empty(max(0, min(limit, n) - i), dtype=np.uint8)
    offsets = np.zeros(count + 1, dtype=np.int64)
    target = np.empty(count, dtype=np.int64)
    d = 0
    p = 0
    while i < n and d < count:
        j, bar, a, b, words = _line(buf, i, n)
        if not _blank(buf, i, j):
            label = _find_label(slots, keys, _label_key(buf, a, b))
            if label < 0:
                return text[:0], offsets, target, d
            target[d] = label_class[label]
            stop = j
            if stop > bar + 1 and buf[stop - 1] == 13:  # a Windows line end
                stop -= 1
            if stop > bar + 1:  # one slice copy per document rather than a store per byte
                text[p:p + stop - bar - 1] = buf[bar + 1:stop]
                p += stop - bar - 1
            d += 1
            offsets[d] = p
        i = j + 1
    return text[:p], offsets, target, -1
