"""``dtype="float32"``: a 32-bit state for the diagonal Gaussian learners.

The state (``mu``, ``s``: ``coef_``, ``sigma_`` and the intercept's mean and variance) is stored in
32-bit floats, half the memory, while the epoch loop sums margins and margin variances in doubles
(:mod:`textcw.learners._kernels.diagonal_loop`). These tests hold it to: the parameter is a real
scikit-learn parameter (``get_params``, ``constraints``, its error message), the memory is halved,
a 32-bit model predicts as the 64-bit one on a small corpus, it survives every round trip
(``state_dict``, pickling with packed arrays, model files, the portable export, ``partial_fit``),
what has no 32-bit kernels is refused in one line, and the loop sums in doubles. They run as
plain Python too (``NUMBA_DISABLE_JIT=1``, ``dev.py``'s kernel stage).
"""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import textcw
from textcw.errors import InputError, ParameterError
from textcw.learners._kernels import constants as c
from textcw.learners._kernels import gaussian_diag
from textcw.learners.arow import AROW
from textcw.learners.cw_stdev import CWStdev
from textcw.learners.cw_var import CWVar
from textcw.learners.gaussian import DTYPE
from textcw.learners.packed import PACKED_TAG
from textcw.learners.scw import SCW1, SCW2
from textcw.pipeline import assemble, make_featurizer, make_learner
from textcw.portable import export_model, import_model
from textcw.testing import make_documents, make_sparse_classification

CLASSES = (CWVar, CWStdev, AROW, SCW1, SCW2)
X2, Y2 = make_sparse_classification(200, 60, 2, random_state=0)
X3, Y3 = make_sparse_classification(240, 60, 3, random_state=1)


def pair(cls, X, y, **params):
    """The same learner fitted with a 64-bit and a 32-bit state."""
    return (cls(**params).fit(X, y), cls(dtype="float32", **params).fit(X, y))


@pytest.mark.parametrize("cls", CLASSES)
def test_dtype_is_a_parameter_with_a_constraint(cls):
    assert cls().get_params()["dtype"] == "float64"
    assert cls.constraints["dtype"] == DTYPE
    assert cls(dtype="float32").get_params()["dtype"] == "float32"
    assert cls().set_params(dtype="float32").dtype == "float32"


@pytest.mark.parametrize("value", ["float16", "double", np.float32, None])
def test_an_invalid_dtype_is_one_clear_line(value):
    with pytest.raises(ParameterError) as error:
        AROW(dtype=value).fit(X2, Y2)
    assert str(error.value) == (f"AROW: dtype={value!r} is invalid; dtype must be one of "
                                "'float64', 'float32'")


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("data", ["binary", "multiclass"])
def test_the_state_takes_half_the_memory(cls, data):
    X, y = (X2, Y2) if data == "binary" else (X3, Y3)
    wide, narrow = pair(cls, X, y, fit_intercept=True)
    for name in ("mu", "s"):
        assert wide._state[name].dtype == np.float64 and narrow._state[name].dtype == np.float32
        assert narrow._state[name].nbytes * 2 == wide._state[name].nbytes > 0
    assert narrow.coef_.dtype == narrow.sigma_.dtype == np.float32
    # scores and probabilities are computed in doubles from the 32-bit numbers
    assert narrow.decision_function(X).dtype == narrow.predict_proba(X).dtype == np.float64


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("data", ["binary", "multiclass"])
def test_a_32_bit_state_learns_what_the_64_bit_one_does(cls, data):
    """Each update rounds the new means and variances to 24 bits (a relative 6e-8); over 5 epochs
    of a few hundred documents these roundings add up to at most 5e-7 of the largest weight and
    of each variance (measured, every learner here), and they never turn a mistake into a
    correct prediction (the same online mistakes, epoch by epoch). The tolerance is 1e-5,
    twenty times that, so that another order of the same roundings cannot fail the test. Test
    predictions may differ only where the 64-bit score is within 1e-4 of the largest score of a
    tie, four hundred times the largest difference of scores measured (2.6e-7)."""
    X, y = (X2, Y2) if data == "binary" else (X3, Y3)
    wide, narrow = pair(cls, X, y, fit_intercept=True, eta=0.9) if cls is not AROW else \
        pair(cls, X, y, fit_intercept=True)
    assert narrow.mistakes_ == wide.mistakes_ and narrow.n_updates_ == wide.n_updates_
    scale = np.abs(wide.coef_).max()
    np.testing.assert_allclose(narrow.coef_, wide.coef_, rtol=0, atol=1e-5 * scale)
    np.testing.assert_allclose(narrow.sigma_, wide.sigma_, rtol=1e-5)
    probe, _ = make_sparse_classification(300, 60, 2 if data == "binary" else 3, random_state=7)
    scores = wide.decision_function(probe)
    np.testing.assert_allclose(narrow.decision_function(probe), scores, rtol=0,
                               atol=1e-5 * np.abs(scores).max())
    if data == "binary":
        clear = np.abs(scores) > 1e-4 * np.abs(scores).max()
    else:
        top2 = np.sort(scores, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 1e-4 * np.abs(scores).max()
    assert clear.mean() > 0.9  # the comparison below is not vacuous
    np.testing.assert_array_equal(narrow.predict(probe)[clear], wide.predict(probe)[clear])


def test_the_loop_sums_margins_in_doubles():
    """A document whose 32-bit sum loses the whole margin: ``1e8 + 1 == 1e8`` in float32 (its
    spacing there is 8), so summed in float32, ``1e8 + 1000 * 1 - 1e8`` is 0, a tie and a
    mistake; summed in doubles it is the margin 1000, and AROW (which updates when ``m < 1``)
    neither counts a mistake nor updates."""
    d = 1002
    X = sp.csr_matrix(np.ones((1, d)))
    mu = np.ones(d, np.float32)
    mu[0], mu[-1] = 1e8, -1e8
    s = np.full(d, 1e-9, np.float32)
    mistakes, updates = gaussian_diag.binary_epoch(
        X.indptr, X.indices, X.data, np.ones(1), np.zeros(1, np.int64), mu, s,
        c.AROW_SQUARED_HINGE, c.DIAG_KL, 0.0, 0.0, 1.0, 1e-12)
    assert (mistakes, updates) == (0, 0)
    assert np.float32(np.float32(1e8) + np.float32(1.0)) == np.float32(1e8)  # the premise


@pytest.mark.parametrize("kernel,y,shape", [
    (gaussian_diag.binary_epoch, np.where(Y2 == Y2[0], 1.0, -1.0), (60,)),
    (gaussian_diag.multiclass_top1_epoch, np.searchsorted(np.unique(Y3), Y3), (60, 3)),
])
def test_the_kernels_write_a_32_bit_state_in_place(kernel, y, shape):
    """Compiled or as plain Python: the arrays stay float32 and the epoch is the 64-bit epoch
    rounded (both forms, with the floor counted)."""
    X = X2 if len(shape) == 1 else X3
    order = np.arange(X.shape[0], dtype=np.int64)
    for covariance in (c.DIAG_KL, c.DIAG_L2):
        runs = []
        for dtype in (np.float64, np.float32):
            mu, s = np.zeros(shape, dtype), np.ones(shape, dtype)
            counts = np.zeros(c.N_COUNTS, np.int64)
            result = kernel(X.indptr, X.indices, X.data, y.astype(y.dtype), order, mu, s, c.SCW1,
                            covariance, 1.0, 1.0, 0.0, 1e-12, counts)
            assert mu.dtype == s.dtype == dtype
            runs.append((result, mu, s, counts))
        (wide, mu64, s64, n64), (narrow, mu32, s32, n32) = runs
        assert narrow == wide and np.array_equal(n32, n64)
        np.testing.assert_allclose(mu32, mu64, rtol=0, atol=1e-5 * np.abs(mu64).max())
        np.testing.assert_allclose(s32, s64, rtol=1e-5)


def test_round_trips_keep_the_32_bit_state(tmp_path):
    model = AROW(dtype="float32", fit_intercept=True).fit(X3, Y3)
    # state_dict / load_state_dict
    again = AROW(dtype="float32", fit_intercept=True).load_state_dict(model.state_dict())
    assert again._state["mu"].dtype == np.float32
    np.testing.assert_array_equal(again.decision_function(X3), model.decision_function(X3))
    # a 64-bit learner refuses the 32-bit arrays, naming the way out
    with pytest.raises(InputError, match=r"state array 'mu' must be a float64 numpy array; got "
                                         r"float32 \(the learner's dtype is 'float64': set it"):
        AROW(fit_intercept=True).load_state_dict(model.state_dict())
    # partial_fit continues in 32 bits; a changed dtype is refused, as for every state parameter
    again.partial_fit(X3, Y3)
    assert again._state["s"].dtype == np.float32
    with pytest.raises(ParameterError, match="dtype was 'float32' when the model was fitted"):
        again.set_params(dtype="float64").partial_fit(X3, Y3)


def test_a_hashed_32_bit_model_pickles_packed_and_bit_for_bit(tmp_path):
    X, y = make_sparse_classification(60, 20000, 2, random_state=3)  # mostly untouched rows
    model = CWVar(dtype="float32").fit(X, y)
    packed = model.__getstate__()["_state"]["s"]
    assert isinstance(packed, tuple) and packed[0] == PACKED_TAG and packed[2] == "<f4"
    back = pickle.loads(pickle.dumps(model))
    for name in ("mu", "s"):
        assert back._state[name].dtype == np.float32
        np.testing.assert_array_equal(back._state[name], model._state[name])


def test_model_files_and_exports_keep_the_32_bit_state(tmp_path):
    docs, labels = make_documents(20, random_state=0)
    probe, _ = make_documents(5, random_state=1)
    featurizer = make_featurizer("binary-bow")
    learner = make_learner("scw1", dtype="float32")
    learner.fit(featurizer.fit_transform(docs), labels)
    model = assemble(featurizer, learner, learner="scw1", featurizer_name="binary-bow",
                     featurizer_params=None, corpus="toy")
    saved = textcw.persist.load(textcw.persist.save(model, tmp_path / "m.joblib"))
    imported = import_model(export_model(model, tmp_path / "m.textcw"))
    for other in (saved, imported):
        assert other[-1].get_params()["dtype"] == "float32"
        assert other[-1].coef_.dtype == np.float32
        np.testing.assert_array_equal(other.decision_function(probe), model.decision_function(probe))


@pytest.mark.parametrize("params,message", [
    ({"covariance": "full"}, "CWVar: dtype='float32' is supported with covariance='diag-kl' or "
                             "'diag-l2', not covariance='full'; use dtype='float64'"),
    ({"covariance": "exact"}, "not covariance='exact'; use dtype='float64'"),
    ({"average": True}, "CWVar: dtype='float32' is not supported with average=True"),
    ({"a": 1e-30}, r"CWVar: a=1e-30 is invalid with dtype='float32': the initial variance must be between "
                   r"1e-20 and 1e\+20 .*; use dtype='float64' for that scale"),
])
def test_what_has_no_32_bit_kernels_is_refused(params, message):
    with pytest.raises(ParameterError, match=message):
        CWVar(dtype="float32", **params).fit(X2, Y2)


def test_the_k_competitor_updates_are_refused_for_32_bits_but_binary_problems_ignore_them():
    with pytest.raises(ParameterError, match="dtype='float32' is supported for binary problems and "
                                             "multiclass='top1', not multiclass='seq' with 3 classes"):
        AROW(dtype="float32", multiclass="seq").fit(X3, Y3)
    assert AROW(dtype="float32", multiclass="seq").fit(X2, Y2).coef_.dtype == np.float32


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_32_bits_is_a_second_specialisation_and_64_bits_compiles_as_before():
    """numba compiles the epoch once per state type: the 64-bit signature is the one 64-bit
    users always had (float64 ``mu`` and ``s``), and the 32-bit one is added beside it."""
    pair(AROW, X2, Y2)
    states = {sig[5:7] for sig in gaussian_diag.binary_epoch.signatures}
    kinds = {tuple(str(t.dtype) for t in state) for state in states}
    assert ("float64", "float64") in kinds and ("float32", "float32") in kinds


@pytest.mark.parametrize("method", ["kl", "uniform"])
def test_combined_32_bit_models_are_32_bit_and_combine_as_the_64_bit_ones(method):
    """textcw.combine sums the shards' states in doubles and stores the result in the learners'
    own type; the combined means agree with the 64-bit combination to float32 rounding (1e-6
    of the largest weight, ten times the largest difference measured)."""
    halves = [(X2[:100], Y2[:100]), (X2[100:], Y2[100:])]
    narrow = textcw.combine([AROW(dtype="float32").fit(X, y) for X, y in halves], method=method)
    wide = textcw.combine([AROW().fit(X, y) for X, y in halves], method=method)
    assert narrow.get_params()["dtype"] == "float32"
    assert narrow._state["mu"].dtype == narrow._state["s"].dtype == np.float32
    np.testing.assert_allclose(narrow.coef_, wide.coef_, rtol=0, atol=1e-6 * np.abs(wide.coef_).max())
