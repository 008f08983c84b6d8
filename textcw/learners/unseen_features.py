"""Held-out documents scored as unseen documents are: without the features their scoring model
never saw.

Cross-fitting (:class:`textcw.learners.calibrated.Calibrated`) scores each half of the training
documents by a model fitted on the other half, but the rows come from a featurizer fitted on
all of them. A held-out row therefore carries words its scoring model never learned from
(hapaxes and rare bigrams above all, which TF-IDF weighs the most), and on a unit-length row
those words take a share of the length while adding nothing to the score. A test document
never does that: the featurizer drops the words the training documents did not have, and the
rest of the row is scaled to unit length. So the recorded scores come out smaller than the
final model's test scores, the temperature fitted to them too large, and the probabilities
over-confident, the more so the shorter the documents (a single unseen bigram is a large part
of a five-word description).

:func:`as_unseen` gives the held-out rows the shape a test row has: the columns the fitting
rows never used are removed and, when every training row has unit Euclidean length (a
featurizer with ``norm="l2"``, textcw's ``tfidf`` among them), each row is scaled back to unit
length, which is the featurizer's own normalisation of the words that are left. The idf
weights stay those of all the training documents: an approximation of refitting the featurizer
on the fitting rows, without a second pass over the text.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

# How far from 1 a row's Euclidean length may be for the rows to count as unit length (float64
# rounding of a normalised row of up to millions of entries stays far below it).
UNIT_TOLERANCE = 1e-9


def unit_length_rows(X: sp.csr_matrix) -> bool:
    """Whether every row of ``X`` that is not all zeros has Euclidean length 1 (within ``UNIT_TOLERANCE``)."""
    squares = np.bincount(np.repeat(np.arange(X.shape[0]), np.diff(X.indptr)), weights=X.data * X.data,
                          minlength=X.shape[0])
    return bool(np.all(np.abs(np.sqrt(squares[squares > 0]) - 1.0) <= UNIT_TOLERANCE))


def as_unseen(X_scored: sp.csr_matrix, X_fitted: sp.csr_matrix, *, unit_length: bool) -> sp.csr_matrix:
    """``X_scored`` without the columns no row of ``X_fitted`` uses; with ``unit_length``, each
    row that keeps a non-zero feature is scaled back to Euclidean length 1 (a row left empty stays empty,
    as a test document made only of unknown words is). Both are canonical CSR matrices of the
    same width; ``X_scored`` is not changed."""
    seen = np.zeros(X_fitted.shape[1], dtype=bool)
    seen[X_fitted.indices] = True
    keep = seen[X_scored.indices]
    rows = np.repeat(np.arange(X_scored.shape[0]), np.diff(X_scored.indptr))[keep]
    data = X_scored.data[keep]
    indptr = np.zeros(X_scored.shape[0] + 1, dtype=X_scored.indptr.dtype)
    np.cumsum(np.bincount(rows, minlength=X_scored.shape[0]), out=indptr[1:])
    if unit_length:
        lengths = np.sqrt(np.bincount(rows, weights=data * data, minlength=X_scored.shape[0]))[rows]
        data = np.divide(data, lengths, out=np.zeros_like(data), where=lengths > 0)
    return sp.csr_matrix((data, X_scored.indices[keep], indptr), shape=X_scored.shape)
