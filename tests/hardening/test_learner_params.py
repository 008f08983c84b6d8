"""Learner parameters and labels a caller can get wrong, and what they must give.

- integer parameters take integers (Python's or numpy's), never floats or booleans;
- parameters are validated on every ``fit`` and ``partial_fit`` call, so ``set_params`` between
  ``partial_fit`` calls cannot slip a bad value past the checks;
- scale parameters (``a``, ``r``, ``C``, ``eta0``) are bounded to [1e-100, 1e100], where the
  updates of unit-scale documents are numerically meaningful (see ``textcw.learners.params``):
  at both ends a learner still learns, outside them it is refused with the range;
- labels are one string, number or boolean per document;
- ``sigma_`` of a full-covariance model never forms the ``d x d`` matrix;
- learners default to ``random_state=0`` (the CLI's ``--seed`` default) and have a short repr.
"""

from __future__ import annotations

import math
import re
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

import textcw
from textcw.errors import InputError, ParameterError
from textcw.learners import linalg
from textcw.learners.params import MAX_EPOCHS, SCALE_HIGH, SCALE_LOW, Interval
from textcw.pipeline import build_learner
from textcw.plugins import default_registries

REGISTRY = default_registries().learners
ONLINE = [n for n in REGISTRY.names() if hasattr(REGISTRY.get(n).factory(), "partial_fit")]
BUILTIN_ONLINE = [n for n in ONLINE if REGISTRY.get(n).provider == "textcw"]
X = sp.random(60, 12, density=0.4, random_state=0, format="csr")
X.data = np.random.default_rng(0).normal(size=X.nnz)
Y2 = np.arange(60) % 2
Y3 = np.arange(60) % 3


def constraints(name):
    return getattr(REGISTRY.get(name).factory(), "constraints", {})


def scale_params(name):
    """The learner's parameters bounded to [SCALE_LOW, SCALE_HIGH] (possibly also "auto")."""
    def numeric(allowed):
        return [m for m in getattr(allowed, "members", (allowed,)) if isinstance(m, Interval)]
    return [key for key, allowed in constraints(name).items()
            if any(m.low == SCALE_LOW and m.high == SCALE_HIGH for m in numeric(allowed))]


# ------------------------------------------------------------------------------ integer types
NOT_INTEGERS = [1.0, 2.0, 1e3, True, False, "3", np.float64(3.0), None]


@pytest.mark.parametrize("name", ONLINE)
@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
def test_n_epochs_must_be_an_integer(name, value):
    with pytest.raises(ParameterError, match=re.escape(
            f"n_epochs={value!r} is invalid; n_epochs must be an integer in [1, {MAX_EPOCHS}]")):
        textcw.make_learner(name, n_epochs=value)


@pytest.mark.parametrize("name", ONLINE)
@pytest.mark.parametrize("value", [1e3, 1.0, True, "0", -1, 2**32, np.float32(5)], ids=repr)
def test_random_state_must_be_none_or_an_integer_seed(name, value):
    with pytest.raises(ParameterError, match=re.escape(f"random_state={value!r} is invalid; random_state "
                                                       "must be one of None or an integer in [0, 4294967295]")):
        textcw.make_learner(name, random_state=value)


@pytest.mark.parametrize("name", ONLINE)
def test_numpy_integers_are_integers(name):
    model = textcw.make_learner(name, n_epochs=np.int64(2), random_state=np.uint32(7)).fit(X, Y2)
    assert len(model.mistakes_) == 2
    reference = textcw.make_learner(name, n_epochs=2, random_state=7).fit(X, Y2)
    np.testing.assert_array_equal(model.coef_, reference.coef_)


@pytest.mark.parametrize("name", ["perceptron", "pa1", "cw-stdev", "arow"])
@pytest.mark.parametrize("k", [2.0, True, np.float64(1.0)], ids=repr)
def test_k_must_be_an_integer(name, k):
    with pytest.raises(ParameterError, match=re.escape(f"k={k!r} is invalid")):
        textcw.make_learner(name, multiclass="seq", k=k)


@given(value=st.floats(allow_nan=True, allow_infinity=True))
def test_any_float_is_refused_for_every_integer_parameter(value):
    for name in ONLINE:
        for key, allowed in constraints(name).items():
            members = getattr(allowed, "members", (allowed,))
            if any(isinstance(m, Interval) and m.integer for m in members):
                with pytest.raises(ParameterError, match=f"{key}=.* is invalid"):
                    textcw.make_learner(name, **{key: value})


def test_epochs_and_batch_iterations_are_bounded():
    with pytest.raises(ParameterError, match=re.escape("n_epochs must be an integer in [1, 1000000]")):
        textcw.make_learner("perceptron", n_epochs=MAX_EPOCHS + 1)
    textcw.make_learner("perceptron", n_epochs=MAX_EPOCHS)
    for name in ("svm", "maxent"):
        # liblinear keeps the count in a C int: 2**40 was a bare OverflowError inside fit
        with pytest.raises(ParameterError, match=re.escape("max_iter must be an integer in [1, 2147483647]")):
            textcw.make_learner(name, max_iter=2**40)
        with pytest.raises(ParameterError, match=r"max_iter=10\.0 is invalid"):
            textcw.make_learner(name, max_iter=10.0)


# ------------------------------------------------------------------------------ every call validates
@pytest.mark.parametrize("name", ONLINE)
def test_partial_fit_validates_parameters_set_since_the_last_call(name):
    model = textcw.make_learner(name).partial_fit(X, Y2, classes=[0, 1])
    before = {key: array.copy() for key, array in model._state.items()}
    for key, bad in [("n_epochs", 0), ("shuffle", "yes"), ("random_state", 1.5)] + [
            (key, 0.0) for key in scale_params(name)] + [("eta", 5)] * ("eta" in constraints(name)):
        good = model.get_params()[key]
        model.set_params(**{key: bad})
        with pytest.raises(ParameterError, match=re.escape(f"{key}={bad!r} is invalid; {key} must be")):
            model.partial_fit(X, Y2)
        with pytest.raises(ParameterError, match=re.escape(f"{key}={bad!r} is invalid")):
            model.fit(X, Y2)
        model.set_params(**{key: good})
    for key, array in before.items():
        np.testing.assert_array_equal(model._state[key], array)  # nothing ran


# ------------------------------------------------------------------------------ numerical ranges
OUTSIDE = [0.0, 5e-324, 1e-320, 1e-101, 1.01e100, 1e101, 1e308, math.inf, -1.0, math.nan]


@pytest.mark.parametrize("name", BUILTIN_ONLINE + ["svm", "maxent"])
def test_scale_parameters_outside_their_meaningful_range_are_refused_with_the_range(name):
    keys = scale_params(name)
    if name not in ("perceptron", "pa", "averaged-perceptron"):
        assert keys, name
    for key in keys:
        for value in OUTSIDE:
            with pytest.raises(ParameterError, match=re.escape(
                    f"{key}={value!r} is invalid; {key} must be a number > 0, between 1e-100 and 1e+100")):
                textcw.make_learner(name, **{key: value})


@pytest.mark.parametrize("name", BUILTIN_ONLINE)
@pytest.mark.parametrize("end", [SCALE_LOW, SCALE_HIGH])
@pytest.mark.parametrize("y", [Y2, Y3], ids=["binary", "multiclass"])
def test_at_both_ends_of_the_range_the_learner_still_learns(name, end, y):
    """The bound is where learning stops being possible, not a guess: at each end the updates of
    unit-scale documents are still finite and non-zero, so the model moves."""
    for key in scale_params(name):
        params = {key: end}
        if name == "sgd" and key == "eta0":
            params["learning_rate"] = "decay"
        model = textcw.make_learner(name, n_epochs=2, **params).fit(X, y)
        for array in model._state.values():
            assert np.all(np.isfinite(array)), (key, end)
        assert sum(model.n_updates_) > 0, (key, end)
        assert np.any(model.coef_ != 0), (key, end)
        assert np.all(np.isfinite(model.decision_function(X)))


def test_sgd_alpha_and_power_t_are_bounded():
    for key, value, message in [("alpha", 1e101, "alpha must be a number >= 0, between 0 and 1e+100"),
                                ("alpha", math.inf, "alpha must be a number >= 0, between 0 and 1e+100"),
                                ("power_t", 11.0, "power_t must be a number > 0, between 0 and 10"),
                                ("power_t", 0.0, "power_t must be a number > 0, between 0 and 10")]:
        with pytest.raises(ParameterError, match=re.escape(f"{key}={value!r} is invalid; {message}")):
            textcw.make_learner("sgd", **{key: value})
    model = textcw.make_learner("sgd", learning_rate="invscaling", power_t=10.0, eta0=0.5).fit(X, Y2)
    assert np.all(np.isfinite(model.coef_)) and np.any(model.coef_ != 0)


# ------------------------------------------------------------------------------ labels
def _tuples(n):
    y = np.empty(n, dtype=object)
    y[:] = [(i % 2, 1) for i in range(n)]
    return y


BAD_LABELS = [
    ("list of pairs", lambda n: [(i % 2, 1) for i in range(n)], "y must be 1-d (one label per document); got shape"),
    ("2-d array", lambda n: np.column_stack([np.arange(n) % 2, np.arange(n) % 3]), "y must be 1-d"),
    ("object array of tuples", _tuples, "y must hold one string, number or boolean per document; it holds a tuple"),
    ("ragged lists", lambda n: [[0, 1], [1]] * (n // 2), "y cannot be read as one label per document"),
    ("dicts", lambda n: [{"label": i % 2} for i in range(n)], "it holds a dict"),
    ("None among labels", lambda n: [None] + [1] * (n - 1), "it holds a NoneType (None)"),
]


@pytest.mark.parametrize("name", ONLINE + ["nb", "svm", "maxent"])
@pytest.mark.parametrize("case,make_y,fragment", BAD_LABELS, ids=[c[0] for c in BAD_LABELS])
def test_labels_that_are_not_one_scalar_per_document_are_refused(name, case, make_y, fragment):
    with pytest.raises(InputError, match=re.escape(fragment)):
        textcw.make_learner(name).fit(X, make_y(60))
    if name in ONLINE:
        model = textcw.make_learner(name).partial_fit(X, Y2, classes=[0, 1])
        with pytest.raises(InputError, match=re.escape(fragment)):
            model.partial_fit(X, make_y(60))


@pytest.mark.parametrize("name", ONLINE)
def test_classes_on_later_partial_fit_calls_must_be_a_label_list(name):
    model = textcw.make_learner(name).partial_fit(X, Y2, classes=[0, 1])
    with pytest.raises(InputError, match=re.escape("classes must be 1-d (one label per document); got shape (1, 2)")):
        model.partial_fit(X, Y2, classes=[[0, 1]])  # np.unique used to flatten this silently
    with pytest.raises(InputError, match="classes must hold one string, number or boolean"):
        model.partial_fit(X, Y2, classes=np.array([(0, 1), (1, 0)] + [None], dtype=object)[:2])
    model.partial_fit(X, Y2, classes=np.array([1, 0]))  # the same labels, in any order


def test_a_column_vector_of_labels_is_still_flattened_with_a_warning():
    from sklearn.exceptions import DataConversionWarning

    with pytest.warns(DataConversionWarning, match="column-vector y"):
        model = textcw.make_learner("pa").fit(X, Y2.reshape(-1, 1))
    np.testing.assert_array_equal(model.coef_, textcw.make_learner("pa").fit(X, Y2).coef_)


# ------------------------------------------------------------------------------ sigma_ memory
@pytest.mark.parametrize("name", ["cw-var", "arow", "scw2"])
@pytest.mark.parametrize("y", [Y2, Y3], ids=["binary", "multiclass"])
def test_full_covariance_sigma_is_the_diagonal_without_forming_the_matrix(name, y, monkeypatch):
    d = 400
    Xw = sp.random(60, d, density=0.05, random_state=1, format="csr")
    model = textcw.make_learner(name, covariance="full", n_epochs=1).fit(Xw, y)
    full = model.covariance_
    expected = np.diag(full)[None] if full.ndim == 2 else np.stack([np.diag(b) for b in full])
    monkeypatch.setattr(linalg, "_BLOCK_FLOATS", 8 * d)  # 8 columns of R^{-1} at a time
    model.sigma_  # once untraced: first-use allocations (lazy imports, caches) depend on test order
    tracemalloc.start()
    try:
        sigma = model.sigma_
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(sigma, expected, rtol=1e-12)
    blocks = 1 if y is Y2 else 3
    # well below one d x d matrix (1.3 MB): the blocks, the output and the per-block sums take
    # about 0.3 MB; half a matrix leaves room for what the interpreter allocates around them
    # (more under a coverage tracer), and forming any one matrix still fails
    assert peak < 8 * d * d / 2, peak
    assert sigma.shape == (blocks, d)


def test_covariance_matrix_that_does_not_fit_is_refused_but_sigma_is_not(monkeypatch):
    d = 300
    Xw = sp.random(60, d, density=0.05, random_state=1, format="csr")
    model = textcw.make_learner("cw-stdev", covariance="full", n_epochs=1).fit(Xw, Y3)
    reference = model.sigma_
    # enough for the three factors the model holds (3 x d^2 floats), not for forming them again
    monkeypatch.setattr(linalg, "full_matrix_budget", lambda: 8 * d * d * 4)
    with pytest.raises(ParameterError, match=re.escape(
            "CWStdev: forming covariance_ (3 matrix(es) of 300 x 300) needs 6.5 GB"[:60])):
        model.covariance_
    with pytest.raises(ParameterError, match="read the variances from sigma_, or x' Sigma x from margin_variance"):
        model.covariance_
    np.testing.assert_array_equal(model.sigma_, reference)


# ------------------------------------------------------------------------------ defaults and repr
@pytest.mark.parametrize("name", BUILTIN_ONLINE + ["svm"])
def test_learners_default_to_the_cli_seed(name):
    assert textcw.make_learner(name).get_params()["random_state"] == 0
    a = textcw.make_learner(name).fit(X, Y3)
    b = textcw.make_learner(name).fit(X, Y3)
    cli = build_learner(name, seed=0).fit(X, Y3)  # what `textcw train` (--seed 0) builds
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.decision_function(X), cli.decision_function(X))


@pytest.mark.parametrize("name", REGISTRY.names())
def test_the_repr_of_a_fitted_learner_is_short(name):
    Xw = sp.random(200, 5000, density=0.01, random_state=2, format="csr")
    y = np.arange(200) % 4
    unfitted = REGISTRY.get(name).factory()
    model = REGISTRY.get(name).factory().fit(Xw, y)
    assert repr(model) == repr(unfitted) == f"{type(model).__name__}()"  # defaults: no parameters
    html, bare = model._repr_html_(), unfitted._repr_html_()
    # the notebook view: the parameters and summarised previews of the fitted attributes
    assert len(html) < len(bare) + 4000
    assert "5000" not in repr(model)


@pytest.mark.parametrize("name", ["cw-var", "arow", "sop"])
def test_the_notebook_view_never_forms_the_covariance_nor_fails(name, monkeypatch):
    d = 300
    Xw = sp.random(60, d, density=0.05, random_state=1, format="csr")
    model = textcw.make_learner(name, covariance="full").fit(Xw, Y3)
    # too little memory to form covariance_: the view must not try
    monkeypatch.setattr(linalg, "full_matrix_budget", lambda: 8 * d * d * 4)
    html = model._repr_html_()
    assert "coef_" in html and "covariance_" not in html
    assert ("sigma_" in html) == (name != "sop")
    model.set_params(fit_intercept=True)  # an unusable state: the view leaves the state out
    html = model._repr_html_()
    assert "coef_" not in html and "fit_intercept" in html
    with pytest.raises(ParameterError, match="fit_intercept was False"):
        model.coef_  # outside the view the error stands


def test_the_repr_lists_only_changed_parameters():
    model = textcw.make_learner("cw-stdev", eta=0.9, covariance="full", multiclass="exact", k=2,
                                fit_intercept=True, random_state=None).fit(X, Y3)
    text = repr(model)
    assert text == ("CWStdev(covariance='full', eta=0.9, fit_intercept=True, k=2, multiclass='exact',\n"
                    "        random_state=None)")
    assert len(text) < 120
