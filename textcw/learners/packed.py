"""State arrays pickled by what they hold: a hashed model stores the buckets it learned.

A learner over hashed features keeps its state (means, variances, per label) for every bucket of
the hashing space, 2^20 rows by default, whether or not a document ever fell in it; the buckets
it never saw hold their initial values (0 for a mean, the initial variance ``a``). Pickled as
they are, such arrays made a 6-class hashing model a 100 MB file, against 5.5 MB for the same
data under TF-IDF, and every service checkpoint another 100 MB.

:func:`pack` stores a large array that is mostly one value as that value and the positions and
values of the other entries (flat C-order indices, int32 where they fit); :func:`unpack` rebuilds
the same array bit for bit. Arrays that are mostly varied (a TF-IDF model's means) are stored as
they are: the packed form would be larger. The packed form is a tuple of a tag, plain values and
numpy arrays, so a pickle of it names no textcw class, and joblib stores its arrays out of band.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MIN_PACKED_SIZE", "PACKED_TAG", "pack", "unpack"]

PACKED_TAG = "textcw.packed-array/1"
MIN_PACKED_SIZE = 1 << 14  # smaller arrays are stored as they are: packing them saves nothing worth it
_MAX_SHARE = 0.5  # packed only when at most half the entries differ from the fill value (else larger)


def pack(array):
    """``array`` as stored in a pickle: packed when it is large and mostly one value."""
    if (not isinstance(array, np.ndarray) or array.size < MIN_PACKED_SIZE or array.dtype.kind != "f"
            or not array.flags.c_contiguous):
        return array
    flat = array.reshape(-1)
    candidates = {0.0, float(flat[0]), float(flat[-1])}
    counts = {c: int(np.count_nonzero(flat == c)) for c in candidates}
    fill = max(counts, key=counts.get)
    if flat.size - counts[fill] > _MAX_SHARE * flat.size:
        return array
    where = np.flatnonzero(flat != fill)
    index = where.astype(np.int32) if flat.size <= np.iinfo(np.int32).max else where
    return (PACKED_TAG, tuple(int(n) for n in array.shape), array.dtype.str, fill, index, flat[where])


def unpack(value):
    """The array :func:`pack` stored (anything else is returned as it is); a packed form that does
    not describe an array of its shape raises ``ValueError``."""
    if not (isinstance(value, tuple) and len(value) == 6 and value[0] == PACKED_TAG):
        return value
    _, shape, dtype, fill, index, values = value
    array = np.full(shape, fill, dtype=np.dtype(dtype))
    flat = array.reshape(-1)
    if (not isinstance(index, np.ndarray) or not isinstance(values, np.ndarray) or index.ndim != 1
            or index.shape != values.shape or index.dtype.kind != "i"
            or (index.size and (index.min() < 0 or index.max() >= flat.size))):
        raise ValueError("a packed state array does not describe an array of its shape; the model file is damaged")
    flat[index] = values
    return array
