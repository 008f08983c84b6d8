"""Multi-class strategies and label probabilities through the learners' public interface."""

from __future__ import annotations

import io

import joblib
import numpy as np
import pytest
from scipy.special import ndtr

import textcw
from textcw.errors import InputError, ParameterError
from textcw.learners._kernels import constants as c

# Every learner with the multiclass parameter, every strategy it allows, and the covariance
# forms (full and exact diagonal) with the strategies they allow.
KBEST = [(name, {"multiclass": strategy}) for name in ("cw-var", "cw-stdev", "arow", "pa", "pa1", "pa2")
         for strategy in ("seq", "par", "exact")]
KBEST += [("perceptron", {"multiclass": "seq"}), ("perceptron", {"multiclass": "par"})]
KBEST += [(name, {"multiclass": strategy, "covariance": cov, "k": 2})
          for name in ("cw-var", "arow") for strategy in ("seq", "par", "exact")
          for cov in ("diag-l2", "full")]
KBEST += [("cw-stdev", {"multiclass": strategy, "covariance": "exact", "k": 2}) for strategy in ("seq", "par")]
KBEST += [("arow", {"multiclass": "seq", "loss": "hinge"}), ("pa1", {"multiclass": "seq", "k": 2})]
KBEST += [(name, {"multiclass": strategy}) for name in ("scw1", "scw2") for strategy in ("seq", "par")]
KBEST += [("scw1", {"multiclass": "par", "covariance": cov, "k": 2}) for cov in ("diag-l2", "full")]
IDS = [name + "".join(f"-{v}" for v in params.values()) for name, params in KBEST]


def state_arrays(model):
    return {name: array.copy() for name, array in model.fitted_state().items()}


@pytest.mark.parametrize("name,params", KBEST, ids=IDS)
def test_kbest_variants_learn_and_are_reproducible(name, params, multiclass_problem):
    X, y = multiclass_problem
    a = textcw.make_learner(name, random_state=3, **params).fit(X, y)
    b = textcw.make_learner(name, random_state=3, **params).fit(X, y)
    assert a.mistakes_ == b.mistakes_ and a.n_updates_ == b.n_updates_
    for key, array in state_arrays(a).items():
        assert np.array_equal(array, b.fitted_state()[key]), key
    assert a.mistakes_[-1] < a.mistakes_[0]
    assert np.mean(a.predict(X) == y) > 0.75  # four labels, 5% label noise


@pytest.mark.parametrize("name,params", KBEST, ids=IDS)
def test_kbest_partial_fit_equals_unshuffled_epochs(name, params, multiclass_problem):
    X, y = multiclass_problem
    fitted = textcw.make_learner(name, n_epochs=2, shuffle=False, **params).fit(X, y)
    online = textcw.make_learner(name, **params)
    online.partial_fit(X[:150], y[:150], classes=np.unique(y))
    online.partial_fit(X[150:], y[150:])
    online.partial_fit(X, y)
    assert sum(online.mistakes_) == sum(fitted.mistakes_)
    for key, array in state_arrays(fitted).items():
        assert np.array_equal(array, online.fitted_state()[key]), key


@pytest.mark.parametrize("name,params", [("cw-var", {}), ("cw-stdev", {"covariance": "diag-l2"}),
                                         ("arow", {"covariance": "full"}), ("cw-var", {"covariance": "exact"}),
                                         ("pa1", {}), ("perceptron", {})])
def test_top1_is_the_top1_kernel_and_seq_with_one_competitor_equals_it(name, params, multiclass_problem):
    # The default multi-class update runs the unchanged top-1 kernel; seq with k = 1 is the same
    # sequence of updates, bit for bit.
    X, y = multiclass_problem
    top1 = textcw.make_learner(name, random_state=0, **params).fit(X, y)
    assert top1.multiclass == "top1"
    assert top1.epoch_call(False).kernel.py_func.__name__ == "multiclass_top1_epoch"
    seq = textcw.make_learner(name, random_state=0, multiclass="seq", k=1, **params).fit(X, y)
    assert seq.mistakes_ == top1.mistakes_
    for key, array in state_arrays(top1).items():
        assert np.array_equal(array, seq.fitted_state()[key]), key


def test_multiclass_strategy_does_not_touch_binary_problems(binary_problem):
    X, y = binary_problem
    base = textcw.make_learner("cw-var", random_state=0).fit(X, y)
    for strategy in ("seq", "par", "exact"):
        other = textcw.make_learner("cw-var", random_state=0, multiclass=strategy).fit(X, y)
        assert np.array_equal(other.coef_, base.coef_)


def test_more_competitors_means_more_constraints_per_example(multiclass_problem):
    # With k competitors every example can be checked against k labels: seq enforces more
    # constraints, so its first pass ends with a model that makes fewer training mistakes.
    X, y = multiclass_problem
    one = textcw.make_learner("cw-var", multiclass="seq", k=1, n_epochs=1, random_state=0).fit(X, y)
    three = textcw.make_learner("cw-var", multiclass="seq", k=3, n_epochs=1, random_state=0).fit(X, y)
    assert np.mean(three.predict(X) != y) <= np.mean(one.predict(X) != y)
    assert not np.array_equal(one.coef_, three.coef_)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("name", ["cw-var", "cw-stdev", "arow", "scw1", "scw2", "pa", "pa1", "pa2", "perceptron"])
def test_k_out_of_range_is_refused_at_fit_time(name, multiclass_problem):
    X, y = multiclass_problem  # K = 4 classes
    model = textcw.make_learner(name, multiclass="seq", k=4)  # accepted: K is not known yet
    message = r"k=4 is out of range for K=4 classes; k must be an integer in 1\.\.3 \(1\.\.K-1"
    with pytest.raises(ParameterError, match=message):
        model.fit(X, y)
    with pytest.raises(ParameterError, match=message):
        textcw.make_learner(name, multiclass="seq", k=4).partial_fit(X, y, classes=[0, 1, 2, 3])
    # a binary problem has a single competitor
    with pytest.raises(ParameterError, match=r"k=2 is out of range for K=2 classes; k must be an integer in 1\.\.1"):
        textcw.make_learner(name, multiclass="par", k=2).fit(X, y % 2)
    # k changed by set_params between partial_fit calls
    model = textcw.make_learner(name, multiclass="seq", k=3).partial_fit(X, y, classes=[0, 1, 2, 3])
    model.set_params(k=7)
    with pytest.raises(ParameterError, match="k=7 is out of range for K=4"):
        model.partial_fit(X, y)


@pytest.mark.parametrize(
    "name,params,fragment",
    [
        ("cw-var", {"k": 0}, "k=0 is invalid; k must be one of None, 'all' or an integer >= 1"),
        ("pa1", {"k": 2.5}, "k=2.5 is invalid"),
        ("arow", {"k": "some"}, "k='some' is invalid"),
        ("cw-stdev", {"multiclass": "kbest"}, "multiclass must be one of 'top1', 'seq', 'par', 'exact'"),
        ("cw-var", {"k": 3}, "k=3 needs multiclass='seq', 'par' or 'exact'; multiclass='top1'"),
        ("perceptron", {"multiclass": "exact"}, "Perceptron: multiclass='exact' is not defined: the perceptron "
                                                "solves no optimisation problem"),
        ("arow", {"multiclass": "exact", "loss": "hinge"}, "AROW: multiclass='exact' with loss='hinge' is "
                                                           "not defined.*MLJ 2013"),
        ("cw-stdev", {"multiclass": "exact", "covariance": "exact"}, "multiclass='exact' with covariance='exact' "
                                                                      "is not supported.*use multiclass='seq'"),
        ("cw-var", {"proba": "gibbs"}, "proba must be one of 'quadrature', 'sampling'"),
        ("scw1", {"multiclass": "exact"}, "SCW1: multiclass='exact' is invalid; multiclass must be one of 'top1', 'seq', 'par'"),
        ("scw2", {"k": 2}, "k=2 needs multiclass='seq', 'par' or 'exact'; multiclass='top1'"),
    ],
)
def test_invalid_multiclass_parameters_are_refused(name, params, fragment):
    with pytest.raises(ParameterError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        textcw.make_learner(name, **params)


@pytest.mark.parametrize("name,params", KBEST[::3], ids=IDS[::3])
def test_partial_fit_label_checks_and_late_classes(name, params, multiclass_problem):
    X, y = multiclass_problem
    model = textcw.make_learner(name, **params)
    with pytest.raises(InputError, match="the first partial_fit call needs classes="):
        model.partial_fit(X, y)
    model.partial_fit(X[:200], y[:200], classes=[0, 1, 2, 3, 4])
    with pytest.raises(InputError, match=r"labels \[7\] are not among the declared classes \[0, 1, 2, 3, 4\]"):
        model.partial_fit(X[:2], [7, 7])
    # class 4, declared up front, arrives late and is learned when it does
    assert model.coef_.shape == (5, 30)
    rows = [0, 1, 2, 4, 5]  # row 3 has no features
    for _ in range(3):
        model.partial_fit(X[rows], [4] * 5)
    assert np.all(model.predict(X[rows]) == 4)


# --------------------------------------------------------------------------- probabilities
@pytest.mark.parametrize("name,params", [("cw-var", {"multiclass": "exact"}), ("arow", {"multiclass": "seq"}),
                                         ("cw-stdev", {"covariance": "full"}), ("scw2", {})])
def test_sampling_estimates_the_quadrature_probabilities(name, params, multiclass_problem):
    X, y = multiclass_problem
    model = textcw.make_learner(name, n_epochs=1, random_state=5, **params).fit(X[:80], y[:80])
    exact = model.predict_proba(X)
    model.set_params(proba="sampling")
    sampled = model.predict_proba(X)
    np.testing.assert_allclose(sampled.sum(axis=1), 1.0, rtol=1e-12)
    # 2,000 draws: standard error at most 0.011 per probability
    np.testing.assert_allclose(sampled, exact, atol=0.05)
    assert np.mean(np.abs(sampled - exact)) < 0.01
    # empty documents (row 3): every label ties, and the draws split evenly
    np.testing.assert_allclose(sampled[3], 0.25)
    # deterministic, seeded by random_state, and row by row (batch and order do not matter)
    np.testing.assert_array_equal(model.predict_proba(X), sampled)
    np.testing.assert_array_equal(model.predict_proba(X[::-1])[::-1], sampled)
    np.testing.assert_array_equal(model.predict_proba(X[10:20]), sampled[10:20])
    model.set_params(random_state=6)
    assert not np.array_equal(model.predict_proba(X), sampled)


def test_binary_sampling_agrees_with_the_closed_form(binary_problem):
    X, y = binary_problem
    model = textcw.make_learner("cw-stdev", random_state=0, proba="sampling").fit(X, y)
    sampled = model.predict_proba(X)
    model.set_params(proba="quadrature")
    closed = model.predict_proba(X)
    mu, s = model.coef_[0], model.sigma_[0]
    Xd = X.toarray()
    with np.errstate(invalid="ignore"):
        want = np.where(np.any(Xd != 0, axis=1), ndtr((Xd @ mu) / np.sqrt((Xd**2) @ s)), 0.5)
    np.testing.assert_allclose(closed[:, 1], want, rtol=1e-9)
    np.testing.assert_allclose(sampled[:, 1], want, atol=0.05)
    assert np.mean(np.abs(sampled[:, 1] - want)) < 0.01
    np.testing.assert_allclose(sampled.sum(axis=1), 1.0)


@pytest.mark.parametrize("low,high", [(0.01, 3.0), (1e-6, 10.0), (1e-10, 1.0)])
def test_quadrature_on_two_labels_is_the_binary_closed_form(low, high):
    # including standard deviations orders of magnitude apart, where a Gauss-Hermite rule
    # centred on one label steps over the other's distribution function
    from textcw.learners.probability import label_probabilities_quadrature, label_probabilities_sampling

    rng = np.random.default_rng(0)
    means = rng.normal(size=(2000, 2)) * 2
    variances = np.exp(rng.uniform(np.log(low), np.log(high), size=(2000, 2)))
    want = ndtr((means[:, 1] - means[:, 0]) / np.sqrt(variances.sum(axis=1)))
    np.testing.assert_allclose(label_probabilities_quadrature(means, variances)[:, 1], want, atol=1e-9)
    sampled = label_probabilities_sampling(means, variances, seed=1)[:, 1]
    assert np.max(np.abs(sampled - want)) < 0.05 and np.mean(np.abs(sampled - want)) < 0.01


def test_quadrature_handles_certain_scores():
    from textcw.learners.probability import label_probabilities_quadrature

    means = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 2.0], [0.0, 0.5, 0.1], [3.0, 0.0, 1.0]])
    variances = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1e-30, 1.0, 0.0]])
    p = label_probabilities_quadrature(means, variances)
    np.testing.assert_allclose(p[0], 1 / 3)  # a document without features: every label ties
    np.testing.assert_allclose(p[1], [0, 0.5, 0.5])  # certain scores: the top ones split
    # z_2 = 0.1 certain, z_0 = 0 certain, z_1 ~ N(0.5, 1): label 1 wins iff z_1 > 0.1
    np.testing.assert_allclose(p[2], [0, ndtr(0.4), ndtr(-0.4)], atol=1e-9)
    np.testing.assert_allclose(p[3], [ndtr(3.0), ndtr(-3.0), 0.0], atol=1e-9)


def test_sampling_model_round_trips_through_joblib(multiclass_problem):
    X, y = multiclass_problem
    model = textcw.make_learner("cw-var", multiclass="par", proba="sampling", random_state=1).fit(X, y)
    buffer = io.BytesIO()
    joblib.dump(model, buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(joblib.load(buffer).predict_proba(X), model.predict_proba(X))


def test_kbest_kernels_are_chosen_by_strategy_and_form(multiclass_problem):
    X, y = multiclass_problem
    for cov, module in (("diag-kl", "gaussian_diag_kbest"), ("diag-l2", "gaussian_diag_kbest"),
                        ("full", "gaussian_full_kbest"), ("exact", "gaussian_exact_kbest")):
        model = textcw.make_learner("cw-var", covariance=cov, multiclass="seq", k=2).fit(X, y)
        assert model.epoch_call(False).kernel.py_func.__module__.endswith(module)
        assert model.kernel_values()["strategy"] == c.MC_SEQ


def test_a_variant_with_its_own_step_kernels_refuses_the_k_best_updates(multiclass_problem):
    from textcw.learners.arow import AROW

    class OwnKernels(AROW):
        step_kernels = object()  # a variant built on the diagonal loop: a top-1 kernel only

    X, y = multiclass_problem
    with pytest.raises(ParameterError, match=r"OwnKernels: its own step kernels run the top-1 update, not "
                                             r"multiclass='par'.*use multiclass='top1'"):
        OwnKernels(multiclass="par", k=2).fit(X, y)
