"""A batch's decision scores and margin variances in one compiled pass over its CSR rows.

A prediction of the service needs, for every document of a batch, the decision scores
``m_k = mu_k . x`` (the label, the ``decision`` values) and, for a Gaussian learner whose
probabilities are calibrated on the standardized margin (``textcw train``'s default for them) or
whose own probabilities are asked for, the margin variances ``v_k = x' Sigma_k x`` (Crammer,
Dredze and Pereira, "Exact convex confidence-weighted learning", NIPS 2008, eq. (1): the margin
``M ~ N(y (mu . x), x' Sigma x)``; for a diagonal ``Sigma`` it is ``sum_j s_j x_j^2``). The library
computes them with two sparse products (``X @ coef_.T`` and ``X.multiply(X) @ sigma``), each with
its own checks, temporaries and pass over the non-zeros; :func:`scores_and_variances` reads each
non-zero once and adds to all ``K`` labels' score and variance together (the state arrays are
``(rows, K)``, so a non-zero's ``K`` weights are one contiguous stretch of memory). It releases
the GIL: the service's two prediction slots score at once on two cores.

The sums are the library's, in the same order (the row's non-zeros in index order, then the
intercept row), so the results agree with ``decision_function`` and ``margin_variance`` to
rounding (tested to 1e-12 against them for CW-stdev, AROW and SCW-I, binary and multi-class).
:func:`batch_kernel_state` says when the kernel applies: a learner of the library's own scoring
(``OnlineLinearClassifier.decision_function`` on the state array ``learner.weights``, or the
Gaussian learners' ``GaussianViews.decision_function``, the same sums, reading a paired binary
mean in place) and, for the variances, the library's diagonal ``margin_variance``. (Left out,
the Gaussian learners were scored by two sparse products again: 0.57 ms of a 32-document batch
of a 20-class model against 0.14 ms for the kernel; the test that the kernel runs guards it.)
Anything else (full covariances, a plugin's learner with its own scoring, a model without
``state_dict``) is scored by the learner's own methods, unchanged.
"""

from __future__ import annotations

import numpy as np

from textcw.features.native import KernelRows
from textcw.kernels import as_kernel_csr, kernel, prefetch
from textcw.learners.base import OnlineLinearClassifier
from textcw.learners.gaussian import GaussianLinearClassifier
from textcw.learners.gaussian_views import GaussianViews


#: Non-zeros ahead whose state rows are fetched into cache while the current one is added: a
#: batch's features are scattered over the state arrays (2^18 rows of K labels), so each
#: non-zero's rows come from main memory; fetching them ahead overlaps those waits (measured on
#: 20 Newsgroups batches of 32 at 2^18 x 20: 0.44 ms against 0.76-1.04 ms without, 4-8 best).
AHEAD = 8
_LINE_DOUBLES = 8  # float64 values per 64-byte cache line: one hint per line of a row


@kernel
def _scores_and_variances(indptr, indices, data, mu, s, bias_row, scores, variances):  # pragma: no cover - compiled
    """``scores[i, k] = sum_j x_ij mu[j, k] (+ mu[bias_row, k])`` and, when ``s`` has rows,
    ``variances[i, k] = sum_j x_ij^2 s[j, k] (+ s[bias_row, k])``; ``bias_row < 0``: no intercept.
    The column indices are known to lie in ``[0, rows)`` (:func:`textcw._csr.as_kernel_csr`)."""
    n_labels = mu.shape[1]
    nnz = indices.shape[0]
    with_variance = s.shape[0] > 0
    for i in range(indptr.shape[0] - 1):
        for p in range(indptr[i], indptr[i + 1]):
            if p + AHEAD < nnz:  # a hint only: it never changes a result
                ahead = indices[p + AHEAD]
                for k in range(0, n_labels, _LINE_DOUBLES):
                    prefetch(mu, ahead, k)
                    if with_variance:
                        prefetch(s, ahead, k)
            j = indices[p]
            x = data[p]
            for k in range(n_labels):
                scores[i, k] += x * mu[j, k]
            if with_variance:
                xx = x * x
                for k in range(n_labels):
                    variances[i, k] += xx * s[j, k]
        if bias_row >= 0:
            for k in range(n_labels):
                scores[i, k] += mu[bias_row, k]
            if with_variance:
                for k in range(n_labels):
                    variances[i, k] += s[bias_row, k]


# The library's own scoring: the linear learners' ``decision_function`` and ``coef_``, and the
# Gaussian learners' (textcw.learners.gaussian_views), which compute the same sums on the same
# state (a paired binary mean read where the rows need it) and hand out the same coefficients.
_OWN_SCORING = (OnlineLinearClassifier.decision_function, GaussianViews.decision_function)
_OWN_COEF = (OnlineLinearClassifier.coef_, GaussianViews.coef_)


def as_matrix(X):
    """A feature matrix: the ``hashing`` featurizer's :class:`~textcw.features.native.KernelRows`,
    which only the compiled scoring pass reads as they are, made into the matrix ``transform``
    gives; any other ``X`` as it is."""
    return X.matrix() if isinstance(X, KernelRows) else X


def batch_kernel_state(learner, *, variances: bool):
    """``(mu, s)`` as ``(rows, K)`` arrays (``s`` ``None`` without ``variances``) when the kernel
    computes what this learner's own ``decision_function`` (and diagonal ``margin_variance``)
    computes; ``None`` when the learner scores its own way (then it is asked)."""
    cls = type(learner)
    own = OnlineLinearClassifier
    if not (isinstance(learner, own) and cls.decision_function in _OWN_SCORING
            and cls.coef_ in _OWN_COEF and cls.intercept_ is own.intercept_):
        return None
    if variances and not (isinstance(learner, GaussianLinearClassifier) and learner.form.diagonal
                          and cls.margin_variance is GaussianLinearClassifier.margin_variance):
        return None
    state = learner.fitted_state()  # the library's checks of the state (and a stale average brought up to date)
    mu = state[learner.weights]
    s = state["s"] if variances else None
    if mu.ndim == 1:  # binary: one column
        mu, s = mu[:, None], (None if s is None else s[:, None])
    # a paired binary state (textcw.learners.interleaved) is a column of a (d, 2) array: read in
    # place, with its stride (numba compiles the kernel once more for such arrays), not copied
    if mu.dtype != np.float64 or (s is not None and (s.shape != mu.shape or s.dtype != np.float64)):
        return None
    return mu, s


def scores_and_variances(learner, X, *, variances: bool):
    """``(scores, variances)`` of the rows of ``X``, shaped as ``decision_function`` and
    ``margin_variance`` shape them ((n,) binary, (n, K) multi-class; variances ``None`` unless
    asked), or ``None`` when :func:`batch_kernel_state` says the learner scores its own way.

    ``X`` is a matrix, checked against the kernel contract by :func:`~textcw._csr.as_kernel_csr`,
    or the ``hashing`` featurizer's own :class:`~textcw.features.native.KernelRows` (made by
    :func:`textcw_serve.model_ops.featurize_for_scoring`, never from a request's numbers), which
    meet it by construction and are read as they are when they are as wide as the model: a
    pass over the non-zeros and scipy's construction of a matrix less per batch."""
    found = batch_kernel_state(learner, variances=variances)
    if found is None:
        return None
    mu, s = found
    n_features = int(learner.n_features_in_)
    if not (isinstance(X, KernelRows) and X.shape[1] == n_features):
        # the kernel indexes the state with X's columns unchecked: any other matrix is checked
        # (and a width other than the model's refused) as the library checks it
        X = as_kernel_csr(as_matrix(X), n_features)
    n = X.shape[0]
    scores = np.zeros((n, mu.shape[1]))
    var = np.zeros((n, mu.shape[1])) if s is not None else np.zeros((0, 0))
    bias_row = n_features if learner.fit_intercept else -1
    _scores_and_variances(X.indptr, X.indices, X.data, mu, s if s is not None else np.zeros((0, mu.shape[1])),
                          bias_row, scores, var)
    if mu.shape[1] == 1:
        return scores[:, 0], (var[:, 0] if s is not None else None)
    return scores, (var if s is not None else None)
