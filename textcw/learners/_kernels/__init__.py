"""Numba kernels: one epoch of updates over CSR rows, state arrays updated in place.

Conventions (every kernel follows them):

- arguments are ``(indptr, indices, data, y, order, <state arrays...>, <variant ints>, <floats>)``;
- ``order`` lists the rows to visit, so shuffling stays in Python and is seeded there;
- binary ``y`` holds +1.0/-1.0 and the weights are a vector ``w[d]``; multi-class ``y`` holds label
  indices and the weights are ``W[d, K]`` (feature-major, so one document's K scores read
  contiguous memory);
- variants are the integer constants in :mod:`.constants`, never Python callables;
- a kernel returns ``(mistakes, updates)``: a mistake is counted before the update, ties count.
"""
