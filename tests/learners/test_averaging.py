"""Averaged learners (``average=True``, textcw.learners.averaging; docs/algorithms.md "Averaging").

The lazily kept average (``mu - u / count``, O(nnz) per update) is checked against the naive
average: the same learner without averaging, trained one example at a time in the order ``fit``
visits them (the seeded permutation of every epoch, then ``partial_fit`` chunks), its ``coef_``
recorded after every example and averaged with numpy. Training itself must not change: the
running mean, the variances and the mistakes equal those of ``average=False`` bit for bit.
"""

from __future__ import annotations

import contextlib
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import textcw
from cli_run import run
from sparse_data import random_sparse
from textcw.cli.train import parse_params
from textcw.errors import InputError, ParameterError

N_EPOCHS = 3
# (learner, parameters): every learner with the parameter, each covariance form, PA's k-best
SUPPORTED = [
    ("pa", {}), ("pa1", {"C": 0.3}), ("pa2", {"C": 0.3}),
    ("cw-var", {"eta": 0.9}), ("cw-var", {"eta": 0.9, "covariance": "diag-l2"}),
    ("cw-var", {"eta": 0.9, "covariance": "exact"}), ("cw-var", {"eta": 0.9, "covariance": "full"}),
    ("cw-stdev", {"eta": 0.9}), ("cw-stdev", {"eta": 0.9, "covariance": "exact"}),
    ("cw-stdev", {"eta": 0.9, "covariance": "full", "fit_intercept": True}),
    ("arow", {"r": 0.8}), ("arow", {"r": 0.8, "loss": "hinge", "covariance": "diag-l2"}),
    ("arow", {"r": 0.8, "covariance": "full"}),
    ("scw1", {"eta": 0.8, "C": 0.6}), ("scw2", {"eta": 0.8, "C": 0.6, "fit_intercept": True}),
]
KBEST = [("pa1", {"C": 0.3, "multiclass": m, "k": 2}) for m in ("seq", "par", "exact")]


def problem(kind: str, n: int = 70, seed: int = 5):
    X = random_sparse(n, 12, 0.35, seed=seed, empty_rows=(3,)).tocsr()
    rng = np.random.default_rng(seed)
    if kind == "binary":
        y = np.where(X @ rng.normal(size=12) > 0, 1, -1)
        y[rng.random(n) < 0.15] *= -1
    else:
        y = np.argmax(X @ rng.normal(size=(12, 4)), axis=1)
        noisy = rng.random(n) < 0.15
        y[noisy] = rng.integers(0, 4, size=int(noisy.sum()))
    return X, y


@contextlib.contextmanager
def quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # variance-floor warnings of CW-stdev on dense toy data
        yield


def naive_average(name, params, X, y, chunks, sample_weight=None):
    """``(average of coef_ and of intercept_ after every example, the running model)``: the
    learner without averaging, one example per ``partial_fit`` call, in ``fit``'s order."""
    model = textcw.make_learner(name, **params, average=False)
    n_fit = chunks[0]
    rng = np.random.RandomState(model.random_state)
    order = [rng.permutation(n_fit) for _ in range(model.n_epochs)]
    order.append(np.arange(n_fit, X.shape[0]))  # the partial_fit chunks, in row order
    coefs, intercepts = [], []
    classes = np.unique(y)
    for i in np.concatenate(order):
        weight = None if sample_weight is None else sample_weight[i:i + 1]
        model.partial_fit(X[i:i + 1], y[i:i + 1], classes=classes, sample_weight=weight)
        coefs.append(model.coef_.copy())
        intercepts.append(model.intercept_.copy())
    return np.mean(coefs, axis=0), np.mean(intercepts, axis=0), model


def lazy_model(name, params, X, y, chunks, sample_weight=None):
    model = textcw.make_learner(name, **params, n_epochs=N_EPOCHS, average=True)
    n_fit = chunks[0]
    model.fit(X[:n_fit], y[:n_fit], sample_weight=None if sample_weight is None else sample_weight[:n_fit])
    for start, stop in zip(chunks, chunks[1:]):
        model.partial_fit(X[start:stop], y[start:stop],
                          sample_weight=None if sample_weight is None else sample_weight[start:stop])
    return model


def assert_close_to_1e12(got, want):
    scale = max(1.0, float(np.max(np.abs(want))))
    assert np.max(np.abs(got - want)) <= 1e-12 * scale


@pytest.mark.parametrize("kind", ["binary", "4-class"])
@pytest.mark.parametrize("name,params", SUPPORTED + KBEST,
                         ids=[f"{n}-{'-'.join(f'{k}={v}' for k, v in p.items())}" for n, p in SUPPORTED + KBEST])
def test_the_lazy_average_is_the_average_of_the_mean_after_every_example(name, params, kind):
    if kind == "binary" and "multiclass" in params:
        pytest.skip("the k-best strategies are multi-class")
    X, y = problem(kind)
    chunks = [50, 61, 70]  # fit on 50 rows, then two partial_fit chunks
    with quiet():
        lazy = lazy_model(name, params, X, y, chunks)
        want_coef, want_intercept, running = naive_average(name, {**params, "n_epochs": N_EPOCHS}, X, y, chunks)
    assert_close_to_1e12(lazy.coef_, want_coef)
    assert_close_to_1e12(lazy.intercept_, want_intercept)
    assert lazy.fitted_state()["count"][0] == N_EPOCHS * 50 + 20
    # training is unchanged: the running state is the model without averaging, bit for bit
    for array, value in running.state_dict()["arrays"].items():
        np.testing.assert_array_equal(lazy.fitted_state()[array], value)
    assert sum(lazy.mistakes_) == sum(running.mistakes_)
    # and the averaged model predicts with the average
    scores = lazy.decision_function(X)
    np.testing.assert_allclose(scores, np.squeeze(X @ want_coef.T + want_intercept), rtol=1e-10, atol=1e-12)
    assert not np.allclose(lazy.coef_, running.coef_)  # (so that the check above can fail)


@pytest.mark.parametrize("name,params", [("pa1", {"C": 0.3}), ("arow", {"r": 0.8}), ("scw1", {"eta": 0.8})])
@pytest.mark.parametrize("kind", ["binary", "4-class"])
def test_weighted_examples_scale_the_step_and_count_once(name, params, kind):
    X, y = problem(kind, seed=8)
    weights = np.random.default_rng(2).uniform(0.2, 3.0, X.shape[0])
    chunks = [50, 70]
    with quiet():
        lazy = lazy_model(name, params, X, y, chunks, weights)
        want_coef, _, _ = naive_average(name, {**params, "n_epochs": N_EPOCHS}, X, y, chunks, weights)
    assert_close_to_1e12(lazy.coef_, want_coef)
    assert lazy.fitted_state()["count"][0] == N_EPOCHS * 50 + 20  # examples, not their weights


def test_an_example_of_weight_zero_is_skipped_and_not_counted():
    X, y = problem("binary")
    weights = np.ones(X.shape[0])
    weights[::2] = 0.0
    model = textcw.make_learner("pa1", average=True, n_epochs=2).fit(X, y, sample_weight=weights)
    assert model.fitted_state()["count"][0] == 2 * int(np.sum(weights > 0))


@pytest.mark.parametrize("name", ["pa", "pa1", "pa2", "cw-var", "cw-stdev", "arow", "scw1", "scw2"])
def test_average_false_trains_and_predicts_as_before(name):
    X, y = problem("4-class")
    with quiet():
        default = textcw.make_learner(name).fit(X, y)
        plain = textcw.make_learner(name, average=False).fit(X, y)
        averaged = textcw.make_learner(name, average=True).fit(X, y)
    assert default.get_params()["average"] is False
    assert set(default.state_dict()["arrays"]) == set(plain.state_dict()["arrays"]) and "u" not in plain.state_dict()["arrays"]
    for array, value in plain.state_dict()["arrays"].items():
        np.testing.assert_array_equal(default.fitted_state()[array], value)
        np.testing.assert_array_equal(averaged.fitted_state()[array], value)  # the same training
    np.testing.assert_array_equal(plain.coef_, plain.fitted_state()["mu"].T)
    assert default.mistakes_ == plain.mistakes_ == averaged.mistakes_


# --------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("name,params", [
    ("cw-stdev", {"multiclass": "seq"}), ("cw-var", {"multiclass": "par"}),
    ("arow", {"multiclass": "exact"}), ("cw-stdev", {"multiclass": "exact", "covariance": "full"}),
])
def test_k_best_gaussian_updates_refuse_average_and_say_what_is_supported(name, params):
    X, y = problem("4-class")
    model = textcw.make_learner(name, **params, average=True)
    with pytest.raises(ParameterError, match=r"average=True is not supported with multiclass='(seq|par|exact)' "
                                             r".*supported for binary problems and multiclass='top1', with "
                                             r"every covariance"):
        model.fit(X, y)
    with pytest.raises(ParameterError, match="average=True is not supported"):
        textcw.make_learner(name, **params, average=True).partial_fit(X, y, classes=np.unique(y))
    # binary problems have one competitor: the same parameters average there
    Xb, yb = problem("binary")
    with quiet():
        textcw.make_learner(name, **params, average=True).fit(Xb, yb)


def test_average_must_be_a_boolean():
    X, y = problem("binary")
    with pytest.raises(ParameterError, match="average"):
        textcw.make_learner("cw-stdev", average="yes").fit(X, y)


def test_average_decides_the_state_and_cannot_change_in_partial_fit():
    X, y = problem("binary")
    model = textcw.make_learner("arow", average=True).fit(X, y)
    model.set_params(average=False)
    with pytest.raises(ParameterError, match="average was True when the model was fitted"):
        model.partial_fit(X, y)


# --------------------------------------------------------------------------- saving, loading
def test_state_dict_save_and_export_round_trips_keep_the_average(tmp_path):
    docs = [f"w{i % 7} w{(i * 3) % 11} w{(i * 5) % 13}" for i in range(120)]
    labels = [int(f"w{i % 7}" in ("w1", "w2", "w3")) for i in range(120)]
    with quiet():
        pipeline = textcw.make_pipeline("binary-bow", "cw-stdev", eta=0.9, average=True).fit(docs, labels)
    learner = pipeline.steps[-1][1]
    scores = pipeline.decision_function(docs)
    state = learner.state_dict()
    assert set(state["arrays"]) == {"mu", "s", "mu_avg", "u", "count"}
    copy = textcw.make_learner("cw-stdev", eta=0.9, average=True).load_state_dict(state)
    np.testing.assert_array_equal(copy.coef_, learner.coef_)
    textcw.save(pipeline, tmp_path / "m.textcw-model")
    np.testing.assert_array_equal(textcw.load(tmp_path / "m.textcw-model").decision_function(docs), scores)
    textcw.export_model(pipeline, tmp_path / "m.textcw")
    back = textcw.import_model(tmp_path / "m.textcw")
    np.testing.assert_array_equal(back.decision_function(docs), scores)
    # the imported model continues the same average
    for model in (pipeline, back):
        with quiet():
            model[-1].partial_fit(model[:-1].transform(docs[:30]), labels[:30])
    np.testing.assert_array_equal(back.decision_function(docs), pipeline.decision_function(docs))


def test_a_state_without_the_averaging_arrays_is_refused_by_an_averaged_learner():
    X, y = problem("binary")
    state = textcw.make_learner("pa1").fit(X, y).state_dict()
    with pytest.raises(InputError, match=r"keeps the state arrays \['mu', 'mu_avg', 'u', 'count'\]"):
        textcw.make_learner("pa1", average=True).load_state_dict(state)
    bad = textcw.make_learner("pa1", average=True).fit(X, y).state_dict()
    bad["arrays"] = {**bad["arrays"], "count": np.array([2.5])}
    with pytest.raises(InputError, match="'count' counts the examples seen"):
        textcw.make_learner("pa1", average=True).load_state_dict(bad)


def test_models_saved_before_the_parameter_existed_still_load():
    X, y = problem("4-class")
    with quiet():
        model = textcw.make_learner("cw-stdev").fit(X, y)
    old = pickle.loads(pickle.dumps(model))
    del old.__dict__["average"]  # a model pickled by an earlier release
    old = pickle.loads(pickle.dumps(old))
    assert old.get_params()["average"] is False
    np.testing.assert_array_equal(old.decision_function(X), model.decision_function(X))
    state = model.state_dict()  # an earlier export: parameters without "average"
    params = {k: v for k, v in model.get_params().items() if k != "average"}
    copy = type(model)(**params).load_state_dict(state)
    np.testing.assert_array_equal(copy.predict(X), model.predict(X))


# --------------------------------------------------------------------------- combination
@pytest.mark.parametrize("name", ["pa2", "cw-stdev", "arow"])
def test_uniform_combination_averages_the_averages_and_continues_them(name):
    X, y = problem("4-class", n=90)
    shards = [slice(0, 30), slice(30, 60)]
    with quiet():
        models = [textcw.make_learner(name, average=True, random_state=k).fit(X[s], y[s])
                  for k, s in enumerate(shards)]
        combined = textcw.combine(models, method="uniform")
    state = combined.fitted_state()
    np.testing.assert_allclose(combined.coef_, np.mean([m.coef_ for m in models], axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(state["mu"], np.mean([m.fitted_state()["mu"] for m in models], axis=0), rtol=1e-12)
    assert state["count"][0] == sum(m.fitted_state()["count"][0] for m in models) == 2 * 30 * 5
    # continuing: the average over the combined count plus every new example's mean
    count, average = state["count"][0], combined.coef_.copy()
    running = textcw.make_learner(name, average=False)
    running.load_state_dict({**combined.state_dict(), "arrays": {
        k: v.copy() for k, v in state.items() if k not in ("mu_avg", "u", "count")}})
    with quiet():
        combined.partial_fit(X[60:], y[60:])
        coefs = []
        for i in range(60, 90):
            running.partial_fit(X[i:i + 1], y[i:i + 1])
            coefs.append(running.coef_.copy())
    want = (count * average + np.sum(coefs, axis=0)) / (count + 30)
    assert_close_to_1e12(combined.coef_, want)


def test_kl_combination_of_averaged_models_is_refused_with_a_way_out():
    X, y = problem("binary")
    models = [textcw.make_learner("arow", average=True, random_state=k).fit(X, y) for k in range(2)]
    with pytest.raises(ParameterError, match=r"an averaged AROW \(average=True\) predicts with the average "
                       r".*use method='uniform'.*or train with average=False"):
        textcw.combine(models, method="kl")


# --------------------------------------------------------------------------- the command line
def test_the_command_line_lists_and_sets_average(capsys):
    code, out, _ = run(capsys, "list", "learners", "cw-stdev")
    assert code == 0 and "average" in out and "Predict with the average" in out
    code, out, _ = run(capsys, "list", "learners", "pa1")
    assert code == 0 and "average" in out
    # --param average=true reaches the learner as the boolean
    params = parse_params(["average=true"])
    assert textcw.make_learner("cw-stdev", **params).average is True
