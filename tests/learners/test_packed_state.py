"""Large state arrays that are mostly one value (a hashed model's untouched buckets) are pickled
as that value and the other entries, and rebuilt bit for bit."""

import os

import numpy as np
import pytest
from numpy.testing import assert_array_equal

import textcw
from textcw.learners.packed import MIN_PACKED_SIZE, PACKED_TAG, pack, unpack
from textcw.pipeline import make_pipeline
from textcw.testing import make_documents


@pytest.fixture(scope="module")
def six_classes():
    docs, labels = make_documents(150, random_state=0)
    return docs, [f"{label}-{i % 3}" for i, label in enumerate(labels)]


@pytest.mark.parametrize("learner", ["cw-stdev", "arow", "scw1", "pa1"])
def test_a_hashed_model_file_follows_the_features_it_saw(learner, six_classes, tmp_path):
    docs, labels = six_classes
    hashed = make_pipeline("hashing", learner).fit(docs, labels)
    path = textcw.save(hashed, tmp_path / "hashed.textcw-model")
    tfidf = textcw.save(make_pipeline("tfidf", learner).fit(docs, labels), tmp_path / "tfidf.textcw-model")
    # 2^20 buckets x 6 labels of float64 state: 50-100 MB as it is
    assert os.path.getsize(path) <= 10 * os.path.getsize(tfidf) + (1 << 20)
    loaded = textcw.load(path)
    assert_array_equal(loaded.decision_function(docs), hashed.decision_function(docs))
    assert_array_equal(loaded.predict_proba(docs), hashed.predict_proba(docs))
    mine, theirs = hashed.steps[-1][1], loaded.steps[-1][1]
    inner = lambda est: getattr(est, "estimator_", est)  # noqa: E731 - the calibrated learner's own
    for name, array in inner(mine)._state.items():
        kept = inner(theirs)._state[name]
        assert kept.dtype == array.dtype and kept.flags.c_contiguous
        assert_array_equal(kept, array)


def test_only_large_arrays_that_are_mostly_one_value_are_packed():
    rng = np.random.default_rng(0)
    small = np.zeros(MIN_PACKED_SIZE - 1)
    varied = rng.normal(size=(MIN_PACKED_SIZE, 2))
    assert pack(small) is small and pack(varied) is varied
    state = np.ones((MIN_PACKED_SIZE, 3))
    state[[5, 700], 1] = [0.25, -3.0]
    packed = pack(state)
    assert packed[0] == PACKED_TAG and packed[3] == 1.0 and packed[4].tolist() == [16, 2101]
    rebuilt = unpack(packed)
    assert_array_equal(rebuilt, state) and rebuilt.dtype == state.dtype


def test_a_damaged_packed_array_is_refused():
    packed = pack(np.zeros(MIN_PACKED_SIZE) + np.eye(1, MIN_PACKED_SIZE, 3).ravel())
    damaged = packed[:4] + (np.array([MIN_PACKED_SIZE], np.int32), packed[5])
    with pytest.raises(ValueError, match="does not describe an array of its shape"):
        unpack(damaged)
