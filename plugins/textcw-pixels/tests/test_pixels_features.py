"""pixels and pixel-pairs: exact values, sparsity, memory-conscious output, errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from textcw.errors import InputError, ParameterError

from textcw_pixels.features import PixelPairs, Pixels


def test_pixels_are_rescaled_to_unit_range_with_zero_background():
    images = np.array([[-1.0, 0.0, 1.0, -1.0], [1.0, -1.0, -0.5, 0.5]])
    X = Pixels().fit_transform(images)
    assert sp.isspmatrix_csr(X) and X.nnz == 5  # the -1 background is not stored
    assert X.toarray().tolist() == [[0, 0.5, 1, 0], [1, 0, 0.25, 0.75]]
    raw = Pixels(rescale=False).fit_transform(images)
    assert raw.toarray().tolist() == images.tolist()


def test_pairs_of_a_tiny_image_exactly():
    # 3 pixels -> 3 + 3 pairs: (0,1), (0,2), (1,2)
    X = PixelPairs().fit_transform(np.array([[1.0, 0.0, -1.0], [0.0, 0.0, 1.0]]))
    assert X.shape == (2, 6)
    assert X.toarray().tolist() == [[1, 0.5, 0, 0.5, 0, 0], [0.5, 0.5, 1, 0.25, 0.5, 0.5]]
    assert X[0].nnz == 3  # pixel 2 is background: it and its pairs are not stored
    names = PixelPairs().fit(np.zeros((1, 3))).get_feature_names_out().tolist()
    assert names == ["p0", "p1", "p2", "p0*p1", "p0*p2", "p1*p2"]


def test_usps_sized_images_give_32896_sparse_features_equal_to_the_dense_definition():
    rng = np.random.default_rng(0)
    images = np.where(rng.random((45, 256)) < 0.6, -1.0, rng.uniform(-1, 1, (45, 256)))
    images[3] = -1.0  # a blank image
    feat = PixelPairs(block_size=8).fit(images)
    X = feat.transform(images)
    assert X.shape == (45, 32896) and feat.n_features_out_ == 32896
    assert X.has_canonical_format and X.indices.dtype == np.int32 and X.data.dtype == np.float64
    unit = (images + 1) / 2
    i, j = np.triu_indices(256, 1)
    dense = np.hstack([unit, unit[:, i] * unit[:, j]])
    assert np.allclose(X.toarray(), dense, rtol=0, atol=1e-15)
    inked = np.count_nonzero(unit, axis=1)
    assert X.getnnz(axis=1).tolist() == (inked + inked * (inked - 1) // 2).tolist()
    assert X[3].nnz == 0 and X.nnz < 0.25 * X.shape[0] * X.shape[1]
    float32 = PixelPairs(dtype="float32").fit(images).transform(images)
    assert float32.dtype == np.float32 and np.allclose(float32.toarray(), dense, atol=1e-6)


def test_block_size_does_not_change_the_result():
    images = np.random.default_rng(1).uniform(-1, 1, (10, 20))
    a = PixelPairs(block_size=1).fit_transform(images)
    b = PixelPairs(block_size=64).fit_transform(images)
    assert (a != b).nnz == 0 and PixelPairs().fit(images).transform(images[:0]).shape == (0, 210)


@pytest.mark.parametrize("feat,fit,X,message", [
    (Pixels(), np.zeros((2, 4)), np.zeros((2, 5)), "images have 5 pixels but the featurizer was fitted on 4"),
    (PixelPairs(), np.zeros((2, 4)), np.full((1, 4), 3.0), r"must lie in \[-1, 1\]"),
    (Pixels(), np.zeros((2, 4)), ["some text"], "not text"),
    (Pixels(), np.zeros((2, 4)), np.zeros(4), "2-d array of images"),
    (Pixels(), np.zeros((2, 4)), np.array([[0.0, np.nan, 0, 0]]), "NaN or infinite"),
])
def test_bad_images_are_clear_errors(feat, fit, X, message):
    feat.fit(fit)
    with pytest.raises(InputError, match=message):
        feat.transform(X)


def test_values_outside_the_unit_range_are_fine_without_rescaling():
    X = PixelPairs(rescale=False).fit_transform(np.array([[0.0, 255.0, 2.0]]))
    assert X.toarray().tolist() == [[0, 255, 2, 0, 0, 510]]


@pytest.mark.parametrize("params,message", [
    ({"block_size": 0}, "block_size must be a positive integer"),
    ({"dtype": "float16"}, "dtype must be one of float64, float32"),
    ({"rescale": "yes"}, "rescale must be true or false"),
])
def test_bad_parameters(params, message):
    with pytest.raises(ParameterError, match=message):
        PixelPairs(**params).fit(np.zeros((1, 4)))
