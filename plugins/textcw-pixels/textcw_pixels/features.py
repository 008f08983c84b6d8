"""Pixel featurizers: ``pixels`` and ``pixel-pairs`` (JMLR 2012 section 7.6).

The JMLR USPS experiments used "the standard value of each pixel in the image, as well as the
product of all the pixel pairs in the image". For a 16 x 16 image that is 256 + 256 * 255 / 2 =
32,896 features, and a dense float64 matrix of them would take 263 kB per image (1.9 GB for the
USPS training set).

Both featurizers first rescale each grey value from the ESL range [-1, 1] to [0, 1]:
``p' = (p + 1) / 2``. It is a linear reparametrisation of each pixel (a linear classifier over
``p'`` can express any function it could over ``p``, given a bias), but it makes the background,
which is exactly -1, exactly 0. The pair products then vanish unless both pixels carry ink, so
the features are sparse: about 100 of 256 pixels are inked in a USPS digit, giving about 6,000
non-zeros per image instead of 32,896 (an 82% smaller CSR matrix). The products of rescaled
pixels are not those of the raw ones (``p'_i p'_j = (p_i p_j + p_i + p_j + 1) / 4``): they span
the same space as the raw products together with the pixels and a bias, and CW reaches the
paper's USPS accuracy with them (see corpora/usps/CARD.md). ``rescale=False`` keeps the raw
values (dense output).

``pixel-pairs`` sizes its CSR matrix from the number of inked pixels of each image and fills it
a block of rows at a time, so besides the result its working memory is a few dense
``block_size x 32,896`` buffers (8.4 MB each at the default 32 rows).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted
from textcw.errors import InputError, ParameterError

_DTYPES = {"float64": np.float64, "float32": np.float32}


class Pixels(TransformerMixin, BaseEstimator):
    """Grey values of an image's pixels as a CSR matrix.

    Parameters
    ----------
    rescale : bool
        Map values from [-1, 1] to [0, 1], so that the background is 0 (and not stored).
    dtype : {"float64", "float32"}
        Output values.

    Attributes
    ----------
    n_features_in_ : int
        Pixels per image, fixed by ``fit``.
    """

    def __init__(self, rescale: bool = True, dtype: str = "float64"):
        self.rescale = rescale
        self.dtype = dtype

    def validate_params(self) -> None:
        if not isinstance(self.rescale, bool):
            raise ParameterError(f"rescale must be true or false; got {self.rescale!r}")
        if self.dtype not in _DTYPES:
            raise ParameterError(f"dtype must be one of {', '.join(_DTYPES)}; got {self.dtype!r}")

    def fit(self, X, y=None):
        self.validate_params()
        self.n_features_in_ = self._check(X, reset=True).shape[1]
        return self

    def transform(self, X) -> sp.csr_matrix:
        check_is_fitted(self, "n_features_in_")
        return sp.csr_matrix(self._scaled(X))

    def _check(self, X, *, reset: bool) -> np.ndarray:
        if sp.issparse(X):
            X = X.toarray()
        try:
            arr = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError("pixel featurizers expect numeric images (a 2-d array, one row of "
                             "grey values per image), not text") from None
        if arr.ndim != 2 or arr.shape[1] == 0:
            raise InputError(f"pixel featurizers expect a 2-d array of images; got shape {arr.shape}")
        if not reset and arr.shape[1] != self.n_features_in_:
            raise InputError(f"images have {arr.shape[1]} pixels but the featurizer was fitted on "
                             f"{self.n_features_in_}")
        if not np.all(np.isfinite(arr)):
            raise InputError("images contain NaN or infinite pixel values")
        if self.rescale and arr.size and (arr.min() < -1.0 or arr.max() > 1.0):
            raise InputError(
                f"pixel values must lie in [-1, 1] (the USPS scale) to be rescaled; got values in "
                f"[{arr.min():g}, {arr.max():g}]: scale them, or pass rescale=false"
            )
        return arr

    def _scaled(self, X) -> np.ndarray:
        arr = self._check(X, reset=False)
        if self.rescale:
            arr = (arr + 1.0) / 2.0
        return arr.astype(_DTYPES[self.dtype], copy=False)


class PixelPairs(Pixels):
    """Each pixel plus the product of every pair of pixels, as a CSR matrix.

    Columns ``0 .. d-1`` are the pixels; column ``d + k`` is the ``k``-th pair ``(i, j)``,
    ``i < j``, in row-major order (``numpy.triu_indices(d, 1)``).

    Parameters
    ----------
    rescale : bool
        Map values from [-1, 1] to [0, 1] first (sparse products; see the module docstring).
    dtype : {"float64", "float32"}
        Output values.
    block_size : int
        Images featurized at a time (bounds the working memory).
    """

    def __init__(self, rescale: bool = True, dtype: str = "float64", block_size: int = 32):
        super().__init__(rescale=rescale, dtype=dtype)
        self.block_size = block_size

    def validate_params(self) -> None:
        super().validate_params()
        if not isinstance(self.block_size, int) or isinstance(self.block_size, bool) or self.block_size < 1:
            raise ParameterError(f"block_size must be a positive integer; got {self.block_size!r}")

    @property
    def n_features_out_(self) -> int:
        d = self.n_features_in_
        return d + d * (d - 1) // 2

    def transform(self, X) -> sp.csr_matrix:
        check_is_fitted(self, "n_features_in_")
        arr = self._scaled(X)
        n, d = arr.shape
        first, second = np.triu_indices(d, 1)
        # A row with k non-zero pixels has k + k(k-1)/2 non-zeros: size the result once and
        # fill it block by block, never holding more than one dense block of products.
        k = np.count_nonzero(arr, axis=1).astype(np.int64)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(k + k * (k - 1) // 2, out=indptr[1:])
        total = int(indptr[-1])
        index_dtype = np.int32 if max(total, self.n_features_out_) < 2**31 else np.int64
        data = np.empty(total, dtype=arr.dtype)
        indices = np.empty(total, dtype=index_dtype)
        for start in range(0, n, self.block_size):
            block = arr[start:start + self.block_size]
            values = np.hstack([block, block[:, first] * block[:, second]])
            inked = block != 0
            mask = np.hstack([inked, inked[:, first] & inked[:, second]])
            lo, hi = indptr[start], indptr[start + len(block)]
            # boolean indexing and nonzero() both walk row by row: CSR order, sorted columns
            data[lo:hi] = values[mask]
            indices[lo:hi] = np.nonzero(mask)[1]
        return sp.csr_matrix((data, indices, indptr), shape=(n, self.n_features_out_), copy=False)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        check_is_fitted(self, "n_features_in_")
        d = self.n_features_in_
        first, second = np.triu_indices(d, 1)
        names = [f"p{i}" for i in range(d)] + [f"p{i}*p{j}" for i, j in zip(first, second)]
        return np.asarray(names, dtype=object)
