"""A binary diagonal state kept side by side (textcw.learners.interleaved): same values, same files.

The fixture ``data/before_paired_state.joblib`` was written by textcw before the change, from the
data of :func:`data`: the ``coef_``, ``sigma_``, ``intercept_`` and ``mistakes_`` of 40 fits
(every diagonal rule, both diagonal forms, both dtypes, with and without an intercept), three
fitted models as joblib stored them (binary with an intercept, 32-bit, multi-class) and their
values after one more ``partial_fit``.
"""

from __future__ import annotations

import copy
import io
import os
import pathlib
import pickle

import joblib
import numpy as np
import pytest
import scipy.sparse as sp

import textcw
from textcw.learners._kernels import gaussian_diag
from textcw.learners._kernels.constants import AROW_SQUARED_HINGE, DIAG_KL, DIAG_L2
from textcw.learners.interleaved import is_paired, pair, paired_state, rows_dot, rows_dots, used_columns
from textcw.learners.temperature import weight_norm

FIXTURE = pathlib.Path(__file__).parent / "data" / "before_paired_state.joblib"
# The fixture's values come from the compiled kernels; run as plain Python (NUMBA_DISABLE_JIT=1)
# some steps round differently (CW-stdev's powers and square roots, and the cancellations after
# them), so there they are compared to a relative 1e-9 (1e-5 for a 32-bit state), and bit for
# bit when compiled.
COMPILED = os.environ.get("NUMBA_DISABLE_JIT") != "1"


def data():
    X = sp.random(120, 40, density=0.15, random_state=3, format="csr")
    w = np.random.default_rng(4).normal(size=40)
    y = (X @ w > np.median(X @ w)).astype(int)
    return X, y, np.arange(120) % 3


def weight_norm_of(coef, intercept):
    class Plain:  # the same numbers in plain C-ordered arrays
        coef_ = coef
        intercept_ = intercept
    return weight_norm(Plain())


@pytest.fixture(scope="module")
def before():
    return joblib.load(FIXTURE)


def test_a_fresh_binary_diagonal_state_is_paired_and_a_multiclass_one_is_not():
    X, y, ym = data()
    for covariance in ("diag-kl", "diag-l2"):
        for dtype in ("float64", "float32"):
            model = textcw.make_learner("arow", covariance=covariance, dtype=dtype, fit_intercept=True).fit(X, y)
            mu, s = model._state["mu"], model._state["s"]
            assert is_paired(mu, s) and mu.dtype == np.dtype(dtype)
            assert model.coef_.shape == model.sigma_.shape == (1, 40) and mu.shape == (41,)
            np.testing.assert_array_equal(model.coef_[0], mu[:40])
            # handed out C-ordered, as before: BLAS sums over them in the same order
            assert model.coef_.flags.c_contiguous and model.sigma_.flags.c_contiguous
            assert weight_norm(model) == weight_norm_of(model.coef_.copy(), model.intercept_)
            assert model.intercept_.shape == (1,) and model.intercept_[0] == mu[40]
    multiclass = textcw.make_learner("arow").fit(X, ym)
    assert multiclass._state["mu"].shape == (40, 3) and multiclass._state["mu"].flags.c_contiguous
    exact = textcw.make_learner("cw-var", covariance="exact").fit(X, y)
    assert exact._state["mu"].flags.c_contiguous and not is_paired(exact._state["mu"], exact._state["s"])


@pytest.mark.filterwarnings("ignore::textcw.errors.VarianceFloorWarning")  # CW-stdev at eta=0.99 on 40 features
def test_fits_equal_the_values_before_the_change_bit_for_bit(before):
    X, y, _ = data()
    assert len(before["values"]) == 40
    for (name, covariance, dtype, intercept), values in before["values"].items():
        model = textcw.make_learner(name, covariance=covariance, dtype=dtype, fit_intercept=intercept,
                                    n_epochs=3, random_state=0)
        model.fit(X, y)
        assert is_paired(model._state["mu"], model._state["s"])
        coef, sigma, bias, mistakes = values
        assert model.coef_.dtype == coef.dtype == np.dtype(dtype)
        for got, want in ((model.coef_, coef), (model.sigma_, sigma), (model.intercept_, bias)):
            assert got.shape == want.shape, (name, covariance, dtype, intercept)
            if COMPILED:
                assert got.tobytes() == np.ascontiguousarray(want).tobytes(), (name, covariance, dtype, intercept)
            else:
                np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == "float32" else 1e-9,
                                           atol=1e-7 if dtype == "float32" else 1e-12)
        assert model.mistakes_ == mistakes


def test_the_kernel_gives_the_same_bits_on_paired_and_separate_arrays():
    X, y, _ = data()
    y = np.where(y > 0, 1.0, -1.0)
    order = np.random.default_rng(0).permutation(X.shape[0])
    for covariance in (DIAG_KL, DIAG_L2):
        for dtype in (np.float64, np.float32):
            mu, s = paired_state(40, 1.0, dtype)
            mu2, s2 = np.zeros(40, dtype), np.ones(40, dtype)
            args = (AROW_SQUARED_HINGE, covariance, 0.0, 0.0, 0.5, 1e-12)
            for _ in range(3):
                got = gaussian_diag.binary_epoch(X.indptr, X.indices, X.data, y, order, mu, s, *args)
                want = gaussian_diag.binary_epoch(X.indptr, X.indices, X.data, y, order, mu2, s2, *args)
                assert tuple(got) == tuple(want) and want[1] > 0  # it updated
            assert mu.tobytes() == mu2.tobytes() and s.tobytes() == s2.tobytes()
            assert not np.array_equal(s2, np.ones(40, dtype))


def test_models_saved_before_the_change_load_and_continue_bit_for_bit(before):
    X, y, ym = data()
    for key, model in before["models"].items():
        assert not is_paired(model._state["mu"], model._state["s"])  # stored as two plain arrays
        model = copy.deepcopy(model)
        model.partial_fit(X, ym if key == "multiclass" else y)
        assert is_paired(model._state["mu"], model._state["s"]) == (key != "multiclass")
        for got, want in zip((model.coef_, model.sigma_, model.intercept_), before["continued"][key]):
            assert got.tobytes() == np.ascontiguousarray(want).tobytes(), key


def test_a_saved_paired_model_stores_two_plain_arrays_and_loads_back_paired():
    X, y, _ = data()
    model = textcw.make_learner("arow", fit_intercept=True).fit(X, y)
    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    stored = model.__getstate__()["_state"]
    assert all(stored[name].flags.c_contiguous and stored[name].base is None for name in ("mu", "s"))
    loaded = joblib.load(io.BytesIO(buffer.getvalue()))
    assert loaded.coef_.tobytes() == model.coef_.tobytes()
    assert loaded.sigma_.tobytes() == model.sigma_.tobytes()
    again = pickle.loads(pickle.dumps(model))
    for fitted in (loaded, again, model):
        fitted.partial_fit(X, y)
        assert is_paired(fitted._state["mu"], fitted._state["s"])
    assert loaded.coef_.tobytes() == model.coef_.tobytes() == again.coef_.tobytes()
    # a state set from plain data is paired before the next epoch writes it, values unchanged
    state = {**model.state_dict(), "arrays": {k: np.array(v) for k, v in model.state_dict()["arrays"].items()}}
    fresh = textcw.make_learner("arow", fit_intercept=True).load_state_dict(state)
    assert not is_paired(fresh._state["mu"], fresh._state["s"])
    fresh.partial_fit(X, y)
    model.partial_fit(X, y)
    assert is_paired(fresh._state["mu"], fresh._state["s"])
    assert fresh.coef_.tobytes() == model.coef_.tobytes() and fresh.sigma_.tobytes() == model.sigma_.tobytes()


def test_a_read_only_paired_state_is_copied_before_an_epoch_writes_it():
    X, y, _ = data()
    model = textcw.make_learner("arow").fit(X, y)
    mu, s = model._state["mu"], model._state["s"]
    mu.flags.writeable = False  # as a model memory-mapped from a file
    s.flags.writeable = False
    before = model.coef_.copy()
    model.partial_fit(X, y)
    assert model._state["mu"] is not mu and is_paired(model._state["mu"], model._state["s"])
    assert mu.tobytes() == before[0].tobytes()  # the read-only arrays were not written
    assert not np.array_equal(model.coef_, before)


def test_pair_keeps_paired_arrays_and_refuses_mismatched_ones():
    mu, s = paired_state(5, 2.0)
    assert pair(mu, s)[0] is mu
    assert s.tolist() == [2.0] * 5 and mu.tolist() == [0.0] * 5
    a, b = pair(np.arange(3.0), np.arange(3.0) + 10)
    assert is_paired(a, b) and a.tolist() == [0, 1, 2] and b.tolist() == [10, 11, 12]
    assert not is_paired(np.zeros(3), np.ones(3))
    assert not is_paired(b, a)  # s before mu is not the layout
    with pytest.raises(ValueError, match="vectors of one shape and dtype"):
        pair(np.zeros(3), np.zeros(4))


def test_rows_dot_equals_scipys_product_bit_for_bit_without_copying_the_vector():
    rng = np.random.default_rng(5)
    X = sp.random(60, 500, density=0.05, random_state=6, format="csr")
    X.data = rng.normal(size=X.nnz) * 10.0 ** rng.integers(-8, 8, size=X.nnz)
    X = sp.vstack([X, sp.csr_matrix((3, 500))], format="csr")  # empty rows too
    both = rng.normal(size=(500, 2)) * 10.0 ** rng.integers(-8, 8, size=(500, 2))
    for w in (both[:, 0], both[:, 1]):
        assert not w.flags.c_contiguous
        got = rows_dot(X, w)
        assert got.shape == (63,) and got.tobytes() == np.asarray(X @ w.copy()).tobytes()
        assert np.all(got[60:] == 0.0)
    assert rows_dot(sp.csr_matrix((2, 500)), both[:, 0]).tolist() == [0.0, 0.0]


def test_rows_dots_is_rows_dot_per_vector_bit_for_bit():
    """Several vectors at once (a multi-label model's labels): the same bits as one at a time,
    for strided (paired), contiguous and 32-bit vectors, on rows of every width, empty included."""
    rng = np.random.default_rng(7)
    for trial in range(12):
        n, d = int(rng.integers(1, 80)), int(rng.integers(2, 3000))
        X = sp.random(n, d, density=float(rng.uniform(0.0, 0.2)), random_state=trial, format="csr")
        X.data = rng.normal(size=X.nnz) * 10.0 ** rng.integers(-8, 8, size=X.nnz)
        pairs = rng.normal(size=(5, d, 2)) * 10.0 ** rng.integers(-8, 8, size=(5, d, 2))
        vectors = [pairs[0][:, 0], pairs[1][:, 1], np.ascontiguousarray(pairs[2][:, 0]),
                   pairs[3].astype(np.float32)[:, 1], np.ascontiguousarray(pairs[4][:, 0], dtype=np.float32)]
        got = rows_dots(X, vectors)
        want = np.column_stack([rows_dot(X, w) for w in vectors])
        assert got.shape == (n, 5) and got.tobytes() == want.tobytes(), trial
    assert rows_dots(sp.csr_matrix((2, 9)), [pairs[0][:9, 0]]).tolist() == [[0.0], [0.0]]
    assert rows_dots(X, []).shape == (X.shape[0], 0)


def test_used_columns_is_numpy_unique_with_its_inverse():
    """Both ways of finding the columns the rows use (a mark per column for full rows, a sort of
    the entries for a few rows in a wide space) give np.unique's columns and inverse."""
    ways = set()
    for n, d, density in ((50, 200, 0.3), (2, 1 << 16, 0.0001), (3, 40, 0.0), (40, 1000, 0.004)):
        X = sp.random(n, d, density=density, random_state=n, format="csr")
        wide = X.shape[1] > 8 * X.nnz
        ways.add(wide)
        columns, local = used_columns(X)
        want_columns, want_local = np.unique(X.indices, return_inverse=True)
        assert columns.tolist() == want_columns.tolist() and local.tolist() == want_local.tolist(), (n, d, wide)
        assert np.array_equal(columns[local], X.indices)
    assert ways == {True, False}


def test_a_paired_model_predicts_bit_for_bit_as_the_same_model_with_two_plain_arrays():
    X, y, _ = data()
    for name, params in (("arow", {"fit_intercept": True}), ("cw-stdev", {"covariance": "diag-l2"}),
                         ("arow", {"dtype": "float32"})):
        model = textcw.make_learner(name, **params).fit(X, y)
        plain = textcw.make_learner(name, **params).load_state_dict(
            {**model.state_dict(), "arrays": {k: np.array(v) for k, v in model.state_dict()["arrays"].items()}})
        assert is_paired(model._state["mu"], model._state["s"]) and plain._state["mu"].flags.c_contiguous
        for method in ("decision_function", "predict_proba", "margin_variance", "predict"):
            got, want = getattr(model, method)(X), getattr(plain, method)(X)
            assert got.shape == want.shape and got.tobytes() == want.tobytes(), (name, params, method)
