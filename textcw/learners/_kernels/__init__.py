"""Numba kernels: one epoch of updates over CSR rows, state arrays updated in place.

Conventions (every kernel follows them):

- arguments are ``(indptr, indices, data, y, order, <state arrays...>, <variant ints>, <floats>)``;
  the index arrays are int32 or int64 (numba compiles one version per type, so a canonical
  scipy matrix is read without a copy);
- ``order`` lists the rows to visit, so shuffling stays in Python and is seeded there;
- binary ``y`` holds +1.0/-1.0 and the weights are a vector ``w[d]``; multi-class ``y`` holds label
  indices and the weights are ``W[d, K]`` (feature-major, so one document's K scores read
  contiguous memory);
- full-covariance kernels keep the upper Cholesky factor of each precision matrix: ``R[d, d]``
  (binary) or ``R[K, d, d]`` (one per label);
- variants are the integer constants in :mod:`.constants`, never Python callables; the two
  epoch loops (:mod:`.diagonal_loop`, :mod:`.feature_loop`) take a variant's update as compiled
  functions, passed by :class:`textcw._jit.KernelRef` so that their compilation is cached;
- a kernel returns ``(mistakes, updates)``: a mistake is counted before the update, ties count.
"""
