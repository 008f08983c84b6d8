"""textcw.combine: the formulas of JMLR 2012 section 7.10 against hand computations, and refusals."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from sklearn.pipeline import Pipeline

import textcw
from textcw.errors import InputError, ParameterError, UnknownNameError
from textcw.features.text import binary_bow
from textcw.learners.arow import AROW
from textcw.learners.averaged_perceptron import AveragedPerceptron
from textcw.learners.cw_stdev import CWStdev
from textcw.learners.cw_var import CWVar
from textcw.learners.passive_aggressive import PassiveAggressive
from textcw.learners.perceptron import Perceptron
from textcw.learners.sgd import SGD
from textcw.learners.sop import SecondOrderPerceptron
from textcw.scale.combine import Combiner

from sparse_data import random_sparse


TOL = 1e-12


def shards(X, y, n=3):
    bounds = np.linspace(0, X.shape[0], n + 1).astype(int)
    return [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]


def fit_shards(make, X, y, n=3):
    return [make(i).fit(Xs, ys) for i, (Xs, ys) in enumerate(shards(X, y, n))]


def blocks(cov):
    """Covariance blocks as a (K, d, d) stack (binary models: one block)."""
    return cov[None] if cov.ndim == 2 else cov


@pytest.fixture
def small_binary():
    X = random_sparse(240, 12, 0.3, seed=11)
    w = np.random.default_rng(12).normal(size=12)
    return X, np.where(X @ w > 0, "pos", "neg")


@pytest.fixture
def small_multiclass():
    X = random_sparse(300, 10, 0.35, seed=13)
    W = np.random.default_rng(14).normal(size=(10, 3))
    return X, np.array(["a", "b", "c"])[np.argmax(X @ W, axis=1)]


@pytest.mark.parametrize("problem", ["binary_problem", "multiclass_problem"])
@pytest.mark.parametrize("cls", [CWVar, CWStdev, AROW])
@pytest.mark.parametrize("covariance", ["diag-kl", "diag-l2"])
def test_diagonal_kl_and_uniform_match_the_formulas(request, problem, cls, covariance):
    X, y = request.getfixturevalue(problem)
    models = fit_shards(lambda i: cls(covariance=covariance, n_epochs=2, random_state=i), X, y)
    mus = [m.coef_ for m in models]
    sigmas = [m.sigma_ for m in models]

    kl = textcw.combine(models, method="kl")
    precision = sum(1.0 / s for s in sigmas)
    np.testing.assert_allclose(kl.sigma_, 1.0 / precision, rtol=TOL, atol=0)
    np.testing.assert_allclose(kl.coef_, sum(m / s for m, s in zip(mus, sigmas)) / precision, rtol=TOL, atol=TOL)

    uniform = textcw.combine(models, method="uniform")
    np.testing.assert_allclose(uniform.coef_, sum(mus) / len(mus), rtol=TOL, atol=TOL)
    np.testing.assert_allclose(uniform.sigma_, sum(sigmas) / len(sigmas), rtol=TOL, atol=0)
    for combined in (kl, uniform):
        assert type(combined) is cls and list(combined.classes_) == list(models[0].classes_)
        assert combined.get_params()["covariance"] == covariance


@pytest.mark.parametrize("problem", ["small_binary", "small_multiclass"])
@pytest.mark.parametrize("cls", [CWVar, AROW])
def test_full_covariance_kl_and_uniform_match_the_formulas(request, problem, cls):
    X, y = request.getfixturevalue(problem)
    models = fit_shards(lambda i: cls(covariance="full", n_epochs=1, random_state=i), X, y)
    covs = [blocks(m.covariance_) for m in models]
    mus = [m.coef_ for m in models]
    precisions = [np.linalg.inv(c) for c in covs]

    kl = textcw.combine(models, method="kl")
    sigma = np.linalg.inv(sum(precisions))  # Sigma^{-1} = sum_c Sigma_c^{-1}
    mean = np.stack([sigma[k] @ sum(p[k] @ m[k] for p, m in zip(precisions, mus)) for k in range(len(sigma))])
    np.testing.assert_allclose(blocks(kl.covariance_), sigma, rtol=1e-9, atol=TOL)
    np.testing.assert_allclose(kl.coef_, mean, rtol=1e-9, atol=1e-10)

    uniform = textcw.combine(models, method="uniform")
    np.testing.assert_allclose(blocks(uniform.covariance_), sum(covs) / len(covs), rtol=1e-9, atol=TOL)
    np.testing.assert_allclose(uniform.coef_, sum(mus) / len(mus), rtol=TOL, atol=TOL)


@pytest.mark.parametrize("cls", [Perceptron, PassiveAggressive, AveragedPerceptron, SGD])
def test_first_order_uniform_is_parameter_averaging(binary_problem, cls):
    X, y = binary_problem
    models = fit_shards(lambda i: cls(n_epochs=2, random_state=i), X, y)
    combined = textcw.combine(models, method="uniform")
    np.testing.assert_allclose(combined.coef_, sum(m.coef_ for m in models) / 3, rtol=TOL, atol=TOL)
    combined.partial_fit(X[:50], y[:50])  # the combined state is one training can continue from


def test_averaged_perceptron_keeps_its_average_invariant(binary_problem):
    X, y = binary_problem
    models = fit_shards(lambda i: AveragedPerceptron(n_epochs=2, random_state=i), X, y)
    combined = textcw.combine(models, method="uniform")
    from textcw.scale.combine import fitted_state

    state = fitted_state(combined)
    count = sum(fitted_state(m)["count"][0] for m in models)
    assert state["count"][0] == count == 2 * X.shape[0]
    np.testing.assert_allclose(state["w"] - state["u"] / count, state["mu"], rtol=TOL, atol=TOL)


def test_kl_is_refused_for_first_order_learners(binary_problem):
    X, y = binary_problem
    models = fit_shards(lambda i: Perceptron(n_epochs=1, random_state=i), X, y)
    with pytest.raises(ParameterError, match="use method='uniform'"):
        textcw.combine(models, method="kl")


def test_one_model_is_returned_unchanged(binary_problem):
    X, y = binary_problem
    model = CWVar(n_epochs=1).fit(X, y)
    before = model.coef_.copy(), model.sigma_.copy()
    for method in ("kl", "uniform"):
        assert textcw.combine([model], method=method) is model
    np.testing.assert_array_equal(model.coef_, before[0])
    np.testing.assert_array_equal(model.sigma_, before[1])


@pytest.mark.parametrize("covariance", ["diag-kl", "full"])
@pytest.mark.parametrize("method", ["kl", "uniform"])
def test_order_does_not_matter(small_multiclass, covariance, method):
    X, y = small_multiclass
    models = fit_shards(lambda i: CWVar(covariance=covariance, n_epochs=1, random_state=i), X, y, n=4)
    reference = textcw.combine(models, method=method)
    for order in itertools.permutations(range(4)):
        other = textcw.combine([models[i] for i in order], method=method)
        np.testing.assert_allclose(other.coef_, reference.coef_, rtol=TOL, atol=TOL)
        np.testing.assert_allclose(other.sigma_, reference.sigma_, rtol=TOL, atol=TOL)
        assert other.mistakes_ == reference.mistakes_ and other.random_state == reference.random_state


def test_combined_model_predicts_pickles_and_sums_mistakes(binary_problem):
    X, y = binary_problem
    models = fit_shards(lambda i: CWVar(n_epochs=2, random_state=i), X, y)
    combined = textcw.combine(models)
    assert combined.mistakes_ == [sum(m.mistakes_[e] for m in models) for e in range(2)]
    assert combined.random_state is None  # the shards had different seeds
    again = pickle.loads(pickle.dumps(combined))
    np.testing.assert_array_equal(again.predict(X), combined.predict(X))
    assert np.mean(combined.predict(X) == y) > 0.8


def test_pipelines_combine_into_a_pipeline(binary_problem):
    docs = ["good fine great", "bad awful poor", "great good", "poor bad", "fine good", "awful bad"] * 4
    labels = np.array(["pos", "neg"] * 12)
    feat = binary_bow().fit(docs)
    pipes = []
    for i in range(2):
        half = slice(12 * i, 12 * (i + 1))
        learner = CWVar(n_epochs=1, random_state=i).fit(feat.transform(docs[half]), labels[half])
        pipes.append(Pipeline([("featurizer", feat), ("learner", learner)]))
    combined = textcw.combine(pipes, method="kl")
    assert isinstance(combined, Pipeline)
    assert list(combined.predict(["good great", "awful poor"])) == ["pos", "neg"]

    other_feat = binary_bow().fit(docs + ["unseen words here"])
    learner = CWVar(n_epochs=1).fit(other_feat.transform(docs), labels)
    with pytest.raises(InputError, match="different feature spaces"):
        textcw.combine([pipes[0], Pipeline([("featurizer", other_feat), ("learner", learner)])])
    with pytest.raises(InputError, match="bare learner with a pipeline"):
        textcw.combine([pipes[0], pipes[1].named_steps["learner"]])


def test_refusals_name_what_differs(binary_problem):
    X, y = binary_problem
    base = CWVar(n_epochs=1).fit(X, y)
    cases = [
        ([base, AROW(n_epochs=1).fit(X, y)], InputError, "different learners: model 0 is a CWVar, model 1 is a AROW"),
        ([base, CWVar(n_epochs=1, eta=0.9).fit(X, y)], InputError, "model 0 has eta=0.95, model 1 has eta=0.9"),
        ([base, CWVar(n_epochs=1).fit(X[:, :30], y)], InputError,
         "different feature spaces: model 0 has 40 features, model 1 has 30"),
        ([base, CWVar(n_epochs=1).fit(X, np.where(y == "pos", "yes", "neg"))], InputError, "different label sets"),
        ([base, CWVar(n_epochs=1, covariance="full").fit(X, y)], InputError, "covariance='diag-kl'"),
        ([base, CWVar()], InputError, "model 1 (CWVar) is not fitted"),
        ([], InputError, "at least one model"),
        ([base, "not a model"], InputError, "only textcw online learners"),
    ]
    for models, error, fragment in cases:
        with pytest.raises(error) as info:
            textcw.combine(models)
        assert fragment in str(info.value)
    with pytest.raises(UnknownNameError, match="valid combination method names: kl, uniform"):
        textcw.combine([base, base], method="average")
    sop = SecondOrderPerceptron(n_epochs=1).fit(X, y)
    with pytest.raises(InputError, match="keeps other state"):
        textcw.combine([sop, sop], method="uniform")


def test_combiner_folds_models_in_one_at_a_time(binary_problem):
    X, y = binary_problem
    models = fit_shards(lambda i: CWVar(n_epochs=1, random_state=i), X, y)
    combiner = Combiner("kl")
    for model in models:
        combiner.add(model)
    assert combiner.n_models == 3
    np.testing.assert_array_equal(combiner.result().coef_, textcw.combine(models).coef_)
