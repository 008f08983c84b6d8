"""Property-based tests of the learners' Python entry points on malformed and extreme input.

Every registered learner (plugins included) and its main variants (covariance forms, multi-class
strategies, ``fit_intercept``) is fed fuzzed feature matrices and labels through ``fit``,
``partial_fit``, ``predict``, ``decision_function`` and ``predict_proba``. The properties:

- a call either succeeds or raises a :class:`textcw.errors.TextcwError` whose message names
  what was wrong; any other exception fails the test;
- which of the two happens is predicted from the input alone (the *oracle* below: the values
  the learner sees after conversion, the labels as numpy reads them);
- after every successful ``fit``/``partial_fit`` every state array is finite, variances (``s``,
  SOP's ``A``) and the diagonals of the Cholesky factors (``R``) are positive, and scores are
  finite; probabilities are finite, in [0, 1] and sum to 1;
- a rejected ``partial_fit`` leaves the model exactly as it was;
- a CSR matrix with unsorted and duplicate column indices trains exactly the model its
  canonical form (duplicates summed) trains; the caller's matrix is never modified.

Semantics made explicit here (see ``textcw._csr``): feature values above
``MAX_ABS_VALUE = 1e30`` in absolute value are refused with advice to rescale; values so small
that a document's squared norm underflows (every ``|x_j| < 1e-154``, subnormals) are accepted,
and such a document updates nothing, like an empty one. Labels follow numpy: a list mixing
strings and numbers becomes strings (as in scikit-learn), an object array mixing them is an error.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import textcw
from textcw._csr import MAX_ABS_VALUE
from textcw.errors import InputError, TextcwError
from textcw.plugins import default_registries

REGISTRY = default_registries().learners
SMALLEST_NORMAL = np.finfo(float).tiny


# ------------------------------------------------------------------------------ the learners
def _options(factory, name):
    allowed = getattr(factory(), "constraints", {}).get(name)
    return tuple(getattr(allowed, "values", ()))


def _variants(name):
    """Registry name -> parameter sets worth fuzzing (each accepted by ``make_learner``): every
    value of every option the learner declares (``covariance``, ``multiclass``, ``loss``,
    ``proba``, ...), ``fit_intercept``, and each covariance form with each multi-class update."""
    factory = REGISTRY.get(name).factory
    constraints = getattr(factory(), "constraints", {})
    candidates = [{}]
    if "fit_intercept" in factory().get_params():
        candidates.append({"fit_intercept": True})
    for key, allowed in constraints.items():
        values = getattr(allowed, "values", ())
        if values and all(isinstance(v, str) for v in values):
            candidates += [{key: v} for v in values]
    candidates += [{"covariance": c, "multiclass": m, "fit_intercept": True}
                   for c in _options(factory, "covariance") for m in _options(factory, "multiclass")]
    variants = []
    for params in candidates:
        try:
            textcw.make_learner(name, **params)
        except TextcwError:  # a refused combination (e.g. exact with exact): not a variant
            continue
        if params not in variants:
            variants.append(params)
    return variants


ONLINE = [n for n in REGISTRY.names() if hasattr(REGISTRY.get(n).factory(), "partial_fit")]
BATCH = [n for n in REGISTRY.names() if n not in ONLINE]
VARIANTS = {name: _variants(name) for name in REGISTRY.names()}


def needs_counts(name, params):
    """Multinomial naive Bayes models counts: it refuses negative feature values."""
    return name == "nb" and params.get("event_model", "multinomial") == "multinomial"


def learner(name, params, seed=0):
    return textcw.make_learner(name, random_state=seed, **params) if "random_state" in \
        REGISTRY.get(name).factory().get_params() else textcw.make_learner(name, **params)


# ------------------------------------------------------------------------------ values
TINY = [5e-324, 1e-310, SMALLEST_NORMAL, 1e-300, 1e-200, 1e-160, 1e-150, 1e-20]
LARGE = [1e3, 1e20, MAX_ABS_VALUE]
# Document scales: 1e-160 and 1e-155 make ||x||^2 subnormal, 1e-170 makes it zero.
ROW_SCALES = [1.0, 1.0, 1e-170, 1e-160, 1e-155, 1e-150, 1e-20, 1e20, MAX_ABS_VALUE / 3.0]
PLAIN = [1.0, 2.0, 0.5, 3.0, 0.25]
# Values outside the accepted range (value_errors says which words their errors must contain).
DEFECTS = [np.nan, np.inf, -np.inf, 1e31, -1e300, np.finfo(float).max]


def values(max_value=None):
    """A feature value: often zero (sparse documents), else plain, tiny, or large, either sign."""
    magnitudes = PLAIN + TINY + [v for v in LARGE if max_value is None or v <= max_value]
    signed = st.builds(lambda s, v: s * v, st.sampled_from([-1.0, 1.0]), st.sampled_from(magnitudes))
    bounded = 1e3 if max_value is None else max_value
    return st.one_of(st.just(0.0), st.just(0.0), signed,
                     st.floats(-bounded, bounded, allow_nan=False, allow_subnormal=True))


@st.composite
def dense_matrices(draw, max_rows=8, max_cols=5, defects=True, max_value=None, min_rows=1):
    """A float64 matrix: sparse rows, some all zero, values across the float range, at times one
    value out of range (``defects``)."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(1, max_cols))
    if draw(st.booleans()):
        D = draw(hnp.arrays(np.float64, (n, d), elements=values(max_value)))
    else:  # whole documents at one scale each: from underflowing squares to the largest values
        unit = draw(hnp.arrays(np.float64, (n, d), elements=st.sampled_from(
            [0.0, 0.0, 1.0, -1.0, 0.5, 2.0, -3.0])))
        scales = [v for v in ROW_SCALES if max_value is None or 3.0 * v <= max_value]
        D = unit * draw(hnp.arrays(np.float64, (n, 1), elements=st.sampled_from(scales)))
    if n and draw(st.booleans()):
        D[draw(hnp.arrays(np.bool_, n))] = 0.0  # empty documents
    if n and draw(st.booleans()):  # mixed magnitudes in one row
        row = draw(st.integers(0, n - 1))
        D[row] = draw(hnp.arrays(np.float64, d, elements=st.sampled_from(
            [0.0, 1e-300, -1e-160, 1.0, -2.0] + [v for v in LARGE if max_value is None or v <= max_value])))
    if defects and n and draw(st.sampled_from([False, False, True])):
        value = draw(st.sampled_from(DEFECTS))
        D[draw(st.integers(0, n - 1)), draw(st.integers(0, d - 1))] = value
    return D


FORMATS = ["dense", "list", "float32", "int", "bool", "csr", "csr-int32", "csc", "coo", "csr_array",
           "raw-csr"]


def raw_csr(D, draw):
    """``D`` as a CSR matrix built from raw arrays: unsorted indices, duplicate entries (parts
    that scipy's ``sum_duplicates`` adds up) and explicit zeros."""
    data, indices, indptr = [], [], [0]
    for row in D:
        entries = []
        for j in np.flatnonzero(row):
            parts = draw(st.integers(1, 3))
            if parts > 1 and np.isfinite(row[j]):
                first = draw(st.sampled_from([0.5, -1.0, 2.0]))
                entries += [(j, first), (j, row[j] - first)]
            else:
                entries.append((j, row[j]))
        if row.size and draw(st.booleans()):
            entries.append((draw(st.integers(0, row.size - 1)), 0.0))  # an explicit zero
        entries = draw(st.permutations(entries))
        data += [v for _, v in entries]
        indices += [j for j, _ in entries]
        indptr.append(len(data))
    return sp.csr_matrix((np.array(data, dtype=np.float64), np.array(indices, dtype=np.int64),
                          np.array(indptr, dtype=np.int64)), shape=D.shape)


@st.composite
def feature_inputs(draw, **kwargs):
    """``(X, seen)``: ``X`` in some format and dtype, and the float64 values textcw must see."""
    D = draw(dense_matrices(**kwargs))
    fmt = draw(st.sampled_from(FORMATS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float32 overflow: that is the test
        if fmt == "dense":
            X = D
        elif fmt == "list":
            X = D.tolist()
        elif fmt == "float32":
            X = D.astype(np.float32)
        elif fmt == "int":
            X = np.nan_to_num(np.clip(D, -1e6, 1e6)).astype(np.int64)
        elif fmt == "bool":
            X = np.nan_to_num(D) != 0
        elif fmt in ("csr", "csc", "coo"):
            X = sp.csr_matrix(D).asformat(fmt)
        elif fmt == "csr-int32":
            X = sp.csr_matrix(D)
            X.indices = X.indices.astype(np.int32)
            X.indptr = X.indptr.astype(np.int32)
        elif fmt == "csr_array":
            X = sp.csr_array(D)
        else:
            X = raw_csr(D, draw)
        if sp.issparse(X):
            canonical = sp.csr_matrix(X, dtype=np.float64, copy=True)
            canonical.sum_duplicates()
            seen = canonical.toarray()
        else:
            seen = np.asarray(X, dtype=np.float64)  # a list of no rows is [], which is 1-d
    note(f"format {fmt}, dtype {getattr(X, 'dtype', 'list')}")
    return X, seen


def value_errors(seen):
    """The error words an input with these values must raise (empty: it must be accepted)."""
    if seen.ndim != 2:
        return ["1-d"]
    if seen.shape[0] == 0:
        return ["0 rows"]
    if not np.all(np.isfinite(seen)):
        # a duplicate sum that overflows is reported by the range check, after summing
        return ["NaN or infinite", "MaxAbsScaler"]
    if seen.size and np.abs(seen).max() > MAX_ABS_VALUE:
        return ["MaxAbsScaler"]
    return []


# ------------------------------------------------------------------------------ labels
# An object array mixing booleans and integers is refused by every learner: np.unique would
# merge True with 1 and False with 0 into one class each.
BOOL_INT = "mixes label types"


@st.composite
def label_vectors(draw, n, multiclass=None):
    """``(y, reasons)``: labels in some form and the error words they must raise (or none)."""
    kinds = ["int", "str", "bool", "float", "mixed-list", "single", "nan", "continuous",
             "mixed-object", "int-bool-object", "int-object"]
    if multiclass is not None:
        kinds = ["int", "str", "float"]
    if n == 0:
        return np.array([], dtype=np.int64), []  # the empty X is the defect
    kind = draw(st.sampled_from(kinds))
    K = draw(st.integers(2, 4)) if multiclass is None else (4 if multiclass else 2)
    codes = np.array(draw(st.lists(st.integers(0, K - 1), min_size=n, max_size=n)), dtype=np.int64)
    if multiclass is not None and n >= K:
        codes[:K] = np.arange(K)  # every class present
    y, reasons = codes, []
    if kind == "str":
        y = np.array(["spam", "ham", "eggs", "toast"])[codes]
    elif kind == "bool":
        y = codes % 2 == 1
    elif kind == "float":
        y = codes.astype(float)
    elif kind == "mixed-list":  # numpy reads it as strings, as scikit-learn does
        y = [("a" if c == 0 else int(c)) for c in codes]
    elif kind == "single":
        y = np.full(n, 7)
    elif kind == "nan":
        y = codes.astype(float)
        y[draw(st.integers(0, n - 1))] = np.nan
        reasons = ["NaN"]
    elif kind == "continuous":
        y = codes + 0.5
        reasons = ["continuous"]
    elif kind == "mixed-object":
        y = np.array([("a" if c == 0 else int(c)) for c in codes], dtype=object)
        reasons = ["mixes label types"] if {0} < set(codes.tolist()) else []
    elif kind == "int-bool-object":
        y = np.array([bool(c) if c < 2 else int(c) for c in codes], dtype=object)
        reasons = [BOOL_INT] if {0, 1} & set(codes.tolist()) and max(codes) >= 2 else []
    elif kind == "int-object":
        y = codes.astype(object)
    if not reasons and np.unique(np.asarray(y)).size < 2:
        reasons = ["only one class"]
    note(f"labels {kind}: {y!r}")
    return y, reasons


# ------------------------------------------------------------------------------ checking
def attempt(call, *args, **kwargs):
    """``(result, None)``, or ``(None, error)`` for a textcw error; any other exception escapes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence and conversion warnings are not the subject
        try:
            return call(*args, **kwargs), None
        except TextcwError as exc:
            return None, exc


def check_outcome(error, reasons, what):
    """The call failed exactly when the oracle says so, and then with a message naming why.

    ``reasons`` lists every defect of the input: the message must name one of them (which one
    depends on the order of the checks, which is not part of the contract).
    """
    if reasons:
        assert error is not None, f"{what} accepted an input it must refuse ({' / '.join(reasons)})"
        assert any(re.search(r, str(error)) for r in reasons), \
            f"{what}: error {str(error)!r} does not say {' or '.join(reasons)}"
    elif error is not None:
        raise AssertionError(f"{what} refused a valid input: {type(error).__name__}: {error}")


def assert_healthy_state(model):
    """Every state array finite; variances and Cholesky diagonals positive."""
    state = getattr(model, "_state", None)
    if state is None:  # a batch baseline: its scikit-learn estimator's weights
        for name in ("coef_", "intercept_", "feature_log_prob_", "class_log_prior_"):
            value = getattr(getattr(model, "estimator_", None), name, None)
            if value is not None:
                assert np.all(np.isfinite(value)), f"{name} has NaN or inf"
        return
    for name, array in state.items():
        assert np.all(np.isfinite(array)), f"state {name!r} has NaN or inf: {array}"
    for name in ("s", "A"):
        if name in state:
            assert np.all(state[name] > 0), f"state {name!r} has a non-positive variance"
    if "R" in state:
        diagonal = np.diagonal(state["R"], axis1=-2, axis2=-1)
        assert np.all(diagonal > 0), "a Cholesky factor lost its positive diagonal"


def assert_sound_predictions(model, X, n_rows):
    scores = model.decision_function(X)
    assert scores.shape[0] == n_rows and np.all(np.isfinite(scores)), f"scores {scores}"
    labels = model.predict(X)
    assert labels.shape == (n_rows,) and np.all(np.isin(labels, model.classes_))
    if hasattr(model, "predict_proba"):
        proba = model.predict_proba(X)
        assert proba.shape == (n_rows, len(model.classes_))
        assert np.all(np.isfinite(proba)) and np.all((proba >= 0.0) & (proba <= 1.0)), proba
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)


def snapshot(X):
    """Copies of everything the caller owns in ``X``."""
    if sp.issparse(X):
        parts = [X.data, *(getattr(X, a) for a in ("indices", "indptr", "row", "col") if hasattr(X, a))]
        return [np.array(p, copy=True) for p in parts], X.format, X.dtype
    return (np.array(X, copy=True) if isinstance(X, np.ndarray) else repr(X)), None, None


def assert_unchanged(X, before):
    after = snapshot(X)
    if sp.issparse(X):
        assert after[1:] == before[1:] and all(np.array_equal(a, b, equal_nan=True)
                                               for a, b in zip(after[0], before[0]))
    elif isinstance(X, np.ndarray):
        assert np.array_equal(after[0], before[0], equal_nan=X.dtype.kind == "f")
    else:
        assert after[0] == before[0]


def state_copy(model):
    return {name: array.copy() for name, array in model._state.items()}


def assert_same_state(a, b):
    assert a.keys() == b.keys()
    for name in a:
        assert np.array_equal(a[name], b[name]), f"state {name!r} differs"


# ------------------------------------------------------------------------------ fit
@pytest.mark.parametrize("name", ONLINE)
@given(data=st.data())
def test_fit_works_or_raises_a_clear_error(name, data):
    params = data.draw(st.sampled_from(VARIANTS[name]), label="params")
    X, seen = data.draw(feature_inputs(min_rows=0), label="X")
    y, label_reasons = data.draw(label_vectors(seen.shape[0]), label="y")
    reasons = value_errors(seen) + label_reasons
    before = snapshot(X)
    model = learner(name, params)
    fitted, error = attempt(model.fit, X, y)
    assert_unchanged(X, before)
    check_outcome(error, reasons, f"{name}{params}.fit")
    if error is None:
        assert np.array_equal(fitted.classes_, np.unique(np.asarray(y)))
        assert_healthy_state(fitted)
        assert_sound_predictions(fitted, X, seen.shape[0])
        assert_unchanged(X, before)


@pytest.mark.parametrize("name", BATCH)
@given(data=st.data())
def test_batch_baselines_fit_or_raise_a_clear_error(name, data):
    # the baselines take the same inputs, with values in a range their solvers handle
    params = data.draw(st.sampled_from(VARIANTS[name]), label="params")
    X, seen = data.draw(feature_inputs(max_value=1e3, min_rows=0), label="X")
    y, label_reasons = data.draw(label_vectors(seen.shape[0]), label="y")
    reasons = value_errors(seen) + label_reasons
    if needs_counts(name, params) and (seen < 0).any():
        reasons.append("non-negative")
    before = snapshot(X)
    fitted, error = attempt(learner(name, params).fit, X, y)
    assert_unchanged(X, before)
    check_outcome(error, reasons, f"{name}.fit")
    if error is None:
        assert_healthy_state(fitted)
        assert_sound_predictions(fitted, X, seen.shape[0])


# ------------------------------------------------------------------------------ extreme values
@pytest.mark.parametrize("name", ONLINE)
@given(data=st.data())
def test_extreme_values_in_range_keep_every_state_finite(name, data):
    """Binary and multi-class, tiny to the largest accepted values: never inf or NaN."""
    params = data.draw(st.sampled_from(VARIANTS[name]), label="params")
    multiclass = data.draw(st.booleans(), label="multiclass")
    D = data.draw(dense_matrices(max_rows=12, defects=False,
                                 min_rows=5), label="X")
    y, _ = data.draw(label_vectors(D.shape[0], multiclass=multiclass), label="y")
    model = learner(name, params)
    fitted, error = attempt(model.fit, sp.csr_matrix(D), y)
    assert error is None, f"{name}{params} refused an accepted input: {error}"
    assert_healthy_state(fitted)
    assert_sound_predictions(fitted, D, D.shape[0])
    # the same documents again, one by one, continuing from the fitted model
    for i in range(D.shape[0]):
        fitted.partial_fit(D[i:i + 1], np.asarray(y)[i:i + 1])
        assert_healthy_state(fitted)
    assert_sound_predictions(fitted, D, D.shape[0])


def test_documents_whose_squares_underflow_update_nothing():
    """A document with every |x_j| < 1e-154 has ||x||^2 = 0 (or subnormal) in double precision:
    the learners that divide by it skip it instead of computing 0/0 or overflowing."""
    X = np.array([[1e-160, -1e-170, 0.0], [5e-324, 0.0, 1e-200], [1e-155, 2e-155, 0.0]])
    y = np.array([0, 1, 0])
    for name in ("pa", "cw-var", "cw-stdev", "arow", "scw1", "scw2"):
        for params in VARIANTS[name]:
            if params.get("fit_intercept"):  # the intercept's constant feature is not tiny
                continue
            model = learner(name, params).fit(X, y)
            assert model.n_updates_ == [0] * model.n_epochs, (name, params, model.n_updates_)
            assert not np.any(model.coef_), (name, params)
            assert_healthy_state(model)


def test_balanced_winnow_keeps_finite_weights_on_large_values():
    X = np.array([[2000.0, 1.0], [1.0, 2000.0], [3.0, 0.0]])
    model = textcw.make_learner("balanced-winnow", random_state=0).fit(X, [0, 1, 0])
    assert_healthy_state(model)
    assert np.all(np.isfinite(model.decision_function(X)))


def test_values_beyond_the_limit_are_refused_at_fit_and_predict():
    X = np.array([[1.0, 0.0], [0.0, 2.0]])
    for value in (MAX_ABS_VALUE * 1.0000001, -1e31, 1e300):
        bad = X.copy()
        bad[0, 1] = value
        for name in ONLINE + BATCH:
            with pytest.raises(TextcwError, match=r"1e\+30 in absolute value.*MaxAbsScaler"):
                textcw.make_learner(name).fit(bad, [0, 1])
        model = textcw.make_learner("cw-var").fit(X, [0, 1])
        with pytest.raises(TextcwError, match="MaxAbsScaler"):
            model.predict(sp.csr_matrix(bad))
    # duplicates that add up past the limit are refused after summing
    over = sp.csr_matrix((np.array([8e29, 8e29, 1.0]), np.array([0, 0, 1]), np.array([0, 2, 3])), shape=(2, 2))
    with pytest.raises(TextcwError, match="1.6e\\+30"):
        textcw.make_learner("perceptron").fit(over, [0, 1])
    # the limit itself is accepted
    ok = X.copy()
    ok[0, 1] = -MAX_ABS_VALUE
    assert_healthy_state(textcw.make_learner("scw2").fit(ok, [0, 1]))


def test_malformed_sparse_structure_is_refused_without_touching_memory():
    """Index arrays inconsistent with the shape used to crash the interpreter (the kernels index
    the state with them unchecked)."""
    cases = [
        (sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 50_000_000, 1]), np.array([0, 2, 3])),
                       shape=(2, 3)), "indices must be < 3"),
        (sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, -1, 1]), np.array([0, 2, 3])),
                       shape=(2, 3)), "indices must be >= 0"),
        (sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([0, 1, 1]), np.array([0, 3, 2])),
                       shape=(2, 3)), "non-decreasing"),
        (sp.csc_matrix((np.array([1.0, 2.0]), np.array([0, 9]), np.array([0, 1, 2, 2])),
                       shape=(2, 3)), "indices must be < 2"),
    ]
    coo = sp.coo_matrix(np.eye(2, 3))
    coo.col[0] = 7
    cases.append((coo, "outside its shape"))
    for X, fragment in cases:
        for name in ("perceptron", "cw-stdev", "svm"):
            with pytest.raises(TextcwError, match=f"malformed.*{fragment}"):
                textcw.make_learner(name).fit(X, [0, 1])
        model = textcw.make_learner("arow").fit(np.eye(2, 3), [0, 1])
        with pytest.raises(TextcwError, match="malformed"):
            model.decision_function(X)


# ------------------------------------------------------------------------------ canonical CSR
@st.composite
def duplicated_csr(draw, max_rows=8, max_cols=5):
    """``(raw, canonical)``: a CSR with unsorted, duplicate and explicit-zero entries, and the
    same matrix built canonically. Values are multiples of 1/8 below 2^20, so every way of
    adding the duplicates gives the same float."""
    n, d = draw(st.integers(2, max_rows)), draw(st.integers(1, max_cols))
    eighths = st.integers(-64, 64).map(lambda k: k / 8.0)
    D = draw(hnp.arrays(np.float64, (n, d), elements=st.one_of(st.just(0.0), eighths)))
    data, indices, indptr = [], [], [0]
    for row in D:
        entries = []
        for j in range(d):
            parts = draw(st.lists(eighths, max_size=3))
            if row[j] != 0.0 or parts:  # pieces adding up to row[j] (zero: an entry that cancels)
                entries += [(j, p) for p in parts] + [(j, row[j] - sum(parts))]
        entries = draw(st.permutations(entries))
        data += [v for _, v in entries]
        indices += [j for j, _ in entries]
        indptr.append(len(data))
    index_dtype = draw(st.sampled_from([np.int32, np.int64]))
    raw = sp.csr_matrix((np.array(data, dtype=np.float64), np.array(indices, dtype=index_dtype),
                         np.array(indptr, dtype=index_dtype)), shape=(n, d))
    return raw, sp.csr_matrix(D)


@pytest.mark.parametrize("name", ONLINE)
@given(data=st.data())
def test_unsorted_duplicate_indices_train_exactly_the_canonical_model(name, data):
    params = data.draw(st.sampled_from(VARIANTS[name]), label="params")
    raw, canonical = data.draw(duplicated_csr(), label="X")
    n = raw.shape[0]
    y = data.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n), label="y")
    if len(set(y)) < 2:
        y[1] = "b" if y[0] == "a" else "a"
    before = snapshot(raw)
    from_raw = learner(name, params).fit(raw, y)
    from_canonical = learner(name, params).fit(canonical, y)
    assert_unchanged(raw, before)
    assert_same_state(from_raw._state, from_canonical._state)
    assert from_raw.mistakes_ == from_canonical.mistakes_
    assert from_raw.n_updates_ == from_canonical.n_updates_
    assert np.array_equal(from_raw.decision_function(raw), from_canonical.decision_function(canonical))
    # and continuing online from either form
    from_raw.partial_fit(raw, y)
    from_canonical.partial_fit(canonical, y)
    assert_same_state(from_raw._state, from_canonical._state)
    assert_unchanged(raw, before)


# ------------------------------------------------------------------------------ partial_fit
@st.composite
def batches(draw, d, classes, name):
    """``(X, seen, y, reasons)``: a mini-batch, at times with a label never declared, the wrong
    width or no rows, and every defect it has."""
    X, seen = draw(feature_inputs(max_rows=5, max_cols=d + 1,
                                  min_rows=0))
    n = seen.shape[0]
    y = [draw(st.sampled_from(classes)) for _ in range(n)]
    reasons = value_errors(seen)
    if n and draw(st.sampled_from([False, False, True])):
        y[draw(st.integers(0, n - 1))] = "unseen" if isinstance(classes[0], str) else 99
        reasons.append("not among the declared classes")
    if seen.ndim == 2 and seen.shape[1] != d:
        reasons.append("features")
    return X, seen, np.array(y), reasons


@pytest.mark.parametrize("name", ONLINE)
@given(data=st.data())
def test_partial_fit_sequences(name, data):
    params = data.draw(st.sampled_from(VARIANTS[name]), label="params")
    d = data.draw(st.integers(1, 5), label="d")
    classes = data.draw(st.sampled_from([[0, 1], [0, 1, 2], ["x", "y"], ["x", "y", "z", "w"]]))
    model = learner(name, params)
    first = np.zeros((2, d))
    first[0, 0] = 1.0
    model.partial_fit(first, [classes[0], classes[0]], classes=classes)  # one class so far: fine
    assert list(model.classes_) == sorted(classes)
    for step in range(data.draw(st.integers(1, 4), label="batches")):
        X, seen, y, reasons = data.draw(batches(d, classes, name), label=f"batch {step}")
        before_state, before_counts = state_copy(model), (list(model.mistakes_), list(model.n_updates_))
        before_X = snapshot(X)
        _, error = attempt(model.partial_fit, X, y)
        assert_unchanged(X, before_X)
        check_outcome(error, reasons, f"{name}{params}.partial_fit")
        if error is not None:  # refused before any update: the model is exactly as it was
            assert_same_state(before_state, model._state)
            assert (model.mistakes_, model.n_updates_) == before_counts
        else:
            assert len(model.mistakes_) == len(before_counts[0]) + 1
            assert_healthy_state(model)
            assert_sound_predictions(model, X, seen.shape[0])


# ------------------------------------------------------------------------------ prediction
class Models(dict):
    def __repr__(self):  # hypothesis prints the arguments of a failing example
        return f"<{len(self)} fitted models>"


@pytest.fixture(scope="module")
def fitted_models():
    """One model per learner and variant, binary and multi-class, fitted on clean data."""
    rng = np.random.default_rng(0)
    X = sp.random(40, 4, density=0.6, random_state=1, format="csr")
    X.data = rng.uniform(0.1, 3.0, size=X.nnz)  # non-negative: naive Bayes takes counts
    labels = {False: np.where(X @ rng.normal(size=4) > 0, "pos", "neg"),
              True: np.argmax(X @ rng.normal(size=(4, 3)), axis=1)}
    models = Models()
    for name in ONLINE + BATCH:
        for params in VARIANTS[name]:
            for multiclass, y in labels.items():
                models[name, repr(params), multiclass] = learner(name, params).fit(X, y)
    return models


@pytest.mark.parametrize("name", ONLINE + BATCH)
@given(data=st.data())
def test_prediction_works_or_raises_a_clear_error(name, data, fitted_models):
    params = data.draw(st.sampled_from(VARIANTS[name]), label="params")
    multiclass = data.draw(st.booleans(), label="multiclass")
    model = fitted_models[name, repr(params), multiclass]
    X, seen = data.draw(feature_inputs(max_cols=5, min_rows=0),
                        label="X")
    reasons = [r for r in value_errors(seen) if r != "0 rows"]  # predicting nothing is fine
    if seen.ndim == 2 and seen.shape[1] != 4:
        reasons.append("features")
    if needs_counts(name, params) and (seen < 0).any():
        reasons.append("non-negative")
    state = state_copy(model) if hasattr(model, "_state") else None
    before = snapshot(X)
    calls = [model.predict, model.decision_function]
    if hasattr(model, "predict_proba"):
        calls.append(model.predict_proba)
    for call in calls:
        out, error = attempt(call, X)
        check_outcome(error, reasons, f"{name}{params}.{call.__name__}")
        if error is None:
            assert out.shape[0] == seen.shape[0]
            assert out.dtype.kind not in "fc" or np.all(np.isfinite(out))
    assert_unchanged(X, before)
    if not reasons:
        assert_sound_predictions(model, X, seen.shape[0])
    if state is not None:
        assert_same_state(state, model._state)  # predicting never changes the model


# ------------------------------------------------------------------------------ joint step
def _exact_shared_qp(m0, a, d, upper):
    """The KKT point of ``max b'l - a (sum l)^2 / 2 - sum d_j l_j^2 / 2``, ``b = 1 - m0``, over
    ``0 <= l <= upper``, in rational arithmetic (every active set tried)."""
    from fractions import Fraction
    from itertools import product

    b = [1 - Fraction(float(m)) for m in m0]
    a = Fraction(float(a))
    d = [Fraction(float(v)) for v in d]
    top = None if upper == np.inf else Fraction(float(upper))
    for sides in product((0, 1, 2) if top is not None else (0, 1), repeat=len(b)):
        free = [j for j, side in enumerate(sides) if side == 1]
        L = (sum((b[j] / d[j] for j in free), Fraction(0)) + (top or 0) * sides.count(2)) / \
            (1 + sum((a / d[j] for j in free), Fraction(0)))
        lam = [(b[j] - a * L) / d[j] if side == 1 else (top if side == 2 else Fraction(0))
               for j, side in enumerate(sides)]
        if all(lam[j] >= 0 and (top is None or lam[j] <= top) for j in free) and \
                all(b[j] - a * L <= 0 for j, side in enumerate(sides) if side == 0) and \
                all(b[j] - a * L >= top * d[j] for j, side in enumerate(sides) if side == 2):
            return np.array([float(v) for v in lam])
    raise AssertionError("no KKT point")


def test_pa1_upper_breakpoint_survives_margins_next_to_one():
    """A margin 1e-16 below 1 with ``||x||^2 = 1e-16``: ``m0 + C ||x||^2`` rounds to 1, and the
    step used to lose PA-I's upper breakpoint and return ``tau = C = 0.7`` where the program's
    solution is free, ``(1 - m0) / (2 ||x||^2) = 0.555``."""
    from textcw.learners._kernels.shared_qp import pa_multipliers

    margins = np.array([1.0 - 1e-16])
    tau = np.empty(1)
    pa_multipliers(2, margins, 1e-16, 1, 0.7, tau)
    expected = _exact_shared_qp(margins, 1e-16, np.array([1e-16]), 0.7)
    assert expected[0] == pytest.approx(0.5551115123125783, rel=1e-12)
    np.testing.assert_allclose(tau, expected, rtol=1e-12)


@given(scale=st.sampled_from([1e3, 1.0, 1e-3, 1e-6, 1e-8, 1e-10, 1e-12]),
       m0=hnp.arrays(np.float64, st.integers(1, 4), elements=st.floats(-3, 3)),
       offset=st.sampled_from([0.0, 0.0, 1.0, -0.5]), data=st.data())
def test_joint_multiclass_step_is_exact_at_every_scale(scale, m0, offset, data):
    """AROW's and PA's k-constraint steps (``multiclass="exact"``) equal the exact solution of
    their quadratic programs, also for small feature values: with margins of order ``x^2`` far
    below 1 the step used to be computed from ``1 - m0``, which rounds them away, and AROW then
    made wrong steps or none at all (``x' Sigma x`` 1e-16 of ``r``)."""
    from textcw.learners._kernels.shared_qp import arow_multipliers, pa_multipliers

    k = m0.size
    margins = m0 * scale**2 + offset
    vy = data.draw(st.floats(0.1, 2.0)) * scale**2
    vr = data.draw(hnp.arrays(np.float64, k, elements=st.floats(0.1, 2.0))) * scale**2
    lam = np.empty(k)
    arow_multipliers(margins, vy, vr, k, 1.0, lam)
    expected = _exact_shared_qp(margins, vy + 1.0, vr, np.inf)
    np.testing.assert_allclose(lam, expected, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(expected).max()))
    xx = data.draw(st.floats(0.1, 3.0)) * scale**2
    for rule, C, upper, extra in ((1, 1.0, np.inf, 0.0), (2, 0.7, 0.7, 0.0), (3, 0.3, np.inf, 1 / 0.6)):
        tau = np.empty(k)
        pa_multipliers(rule, margins, xx, k, C, tau)  # rule codes: PA, PA-I, PA-II
        expected = _exact_shared_qp(margins, xx, np.full(k, xx + extra), upper)
        np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-12 * max(1.0, np.abs(expected).max()))


# ------------------------------------------------------------------------------ hyperparameters
def _edges(allowed):
    """Values at the edges of a real-valued parameter range: next to each bound, and extremes."""
    candidates = [1e-300, 1e-12, 1e-3, 1.0, 1e3, 1e12, 1e300]
    for bound in (allowed.low, allowed.high):
        if np.isfinite(bound):
            candidates += [bound, np.nextafter(bound, np.inf), np.nextafter(bound, -np.inf)]
    return sorted({float(v) for v in candidates if allowed.contains(v)})


def _numeric_parameters(name):
    from textcw.learners.params import Interval

    constraints = getattr(REGISTRY.get(name).factory(), "constraints", {})
    return {key: _edges(allowed) for key, allowed in constraints.items()
            if isinstance(allowed, Interval) and not allowed.integer and _edges(allowed)}


@pytest.mark.parametrize("name", ONLINE)
@given(data=st.data())
def test_hyperparameters_at_the_edges_of_their_range_keep_the_state_finite(name, data):
    params = dict(data.draw(st.sampled_from(VARIANTS[name]), label="variant"))
    for key, edges in _numeric_parameters(name).items():
        if data.draw(st.booleans(), label=f"set {key}"):
            params[key] = data.draw(st.sampled_from(edges), label=key)
    try:
        model = learner(name, params)
    except TextcwError as error:  # a combination its own checks refuse (e.g. SGD's eta0 alpha)
        assert "invalid" in str(error) or "eta0" in str(error), str(error)
        return
    D = data.draw(dense_matrices(max_rows=10, defects=False, max_value=3.0, min_rows=5), label="X")
    multiclass = data.draw(st.booleans(), label="multiclass")
    y, _ = data.draw(label_vectors(D.shape[0], multiclass=multiclass), label="y")
    fitted = model.fit(D, y)
    assert_healthy_state(fitted)
    assert_sound_predictions(fitted, D, D.shape[0])


@pytest.mark.parametrize("name", ONLINE)
def test_a_width_whose_state_cannot_fit_is_refused_before_allocating(name):
    X = sp.csr_matrix((2, 10**12))  # no values: only the width is absurd
    with pytest.raises(InputError, match=r"X has 1,000,000,000,000 features: .* GB, more than half of this machine"):
        learner(name, {}).fit(X, [0, 1])
    with pytest.raises(InputError, match="more than half of this machine"):
        learner(name, {}).partial_fit(X, [0, 1], classes=[0, 1])
