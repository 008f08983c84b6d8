"""Label probabilities from independent Gaussian label scores.

With a block-diagonal covariance, label ``k``'s score is ``z_k ~ N(m_k, v_k)`` independently
(EMNLP 2009, section 6). Then ``P(k wins) = E_{z ~ N(m_k, v_k)} prod_{j != k} Phi((z - m_j)/sd_j)``,
a one-dimensional integral computed here by Gauss-Hermite quadrature in log space.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr

_NODES, _WEIGHTS = np.polynomial.hermite.hermgauss(96)
_LOG_WEIGHTS = np.log(_WEIGHTS / np.sqrt(np.pi))
_TINY_SD = 1e-150  # stands in for a zero variance: the score is then (almost) certain


def label_probabilities_quadrature(means: np.ndarray, variances: np.ndarray, chunk: int = 2048):
    """``P(label k has the highest score)`` for each row; rows sum to 1.

    Parameters
    ----------
    means, variances : ndarray of shape (n, K)
        Mean and variance of each label's score.
    """
    means = np.asarray(means, dtype=float)
    sds = np.maximum(np.sqrt(np.asarray(variances, dtype=float)), _TINY_SD)
    n, K = means.shape
    out = np.empty((n, K))
    for start in range(0, n, chunk):
        m = means[start:start + chunk]
        sd = sds[start:start + chunk]
        logp = np.empty_like(m)
        for k in range(K):
            z = m[:, k, None] + np.sqrt(2.0) * sd[:, k, None] * _NODES[None, :]  # (b, G)
            logcdf = log_ndtr((z[:, :, None] - m[:, None, :]) / sd[:, None, :])  # (b, G, K)
            logcdf[:, :, k] = 0.0
            integrand = logcdf.sum(axis=2) + _LOG_WEIGHTS[None, :]
            top = integrand.max(axis=1, keepdims=True)
            logp[:, k] = top[:, 0] + np.log(np.exp(integrand - top).sum(axis=1))
        logp -= logp.max(axis=1, keepdims=True)
        p = np.exp(logp)
        out[start:start + chunk] = p / p.sum(axis=1, keepdims=True)
    return out
