"""Every variant combination of every built-in online learner trains the reference model.

For each learner registered by textcw with ``online=True`` and each combination of its variant
parameters (``loss``, ``learning_rate``, ``covariance``, ``multiclass``: the ``Options`` in its
``constraints``), one epoch of ``fit(shuffle=False)`` on a small binary and a small 4-class
problem gives the state arrays of the plain-numpy twins in tests/reference.py. This checks the
whole path a learner takes (constraints, ``kernel_values``/``epoch_call``, the covariance form
table, the named step parameters, the kernels), not the kernels alone as test_kernels.py does.
The combinations a learner refuses are a :class:`~textcw.errors.ParameterError` on ``fit``, so
the matrix is complete.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import reference as ref
from sparse_data import random_sparse
from textcw import make_learner
from textcw.errors import ParameterError
from textcw.learners._kernels.constants import VARIANCE_FLOOR
from textcw.learners.linalg import covariance_from_factor
from textcw.learners.params import Options
from textcw.plugins import BUILTIN_PROVIDER, default_registries

# The parameters that choose a variant of the update; every other Options parameter of a
# learner must be listed as not changing the training (checked below), so that a new variant
# parameter cannot be left out of the matrix.
VARIANT_PARAMETERS = ("loss", "learning_rate", "covariance", "multiclass")
# ("average" changes what the model predicts with, not its training: the averaged rows below
# check that the running state is the same. "dtype" stores the same update's state in 32 bits:
# tests/learners/test_float32_state.py holds it to the 64-bit run these twins check.)
NOT_VARIANTS = {"shuffle", "fit_intercept", "proba", "average", "dtype"}

# Hyperparameters away from their defaults, so that a value that does not reach the kernel shows.
A, C_PA, C_SCW, R_AROW, ETA = 0.7, 0.3, 0.6, 0.8, 0.9
SGD = {"alpha": 0.01, "eta0": 0.5, "power_t": 0.6}
HYPERPARAMETERS = {
    "pa1": {"C": C_PA}, "pa2": {"C": C_PA}, "sgd": SGD, "sop": {"a": A},
    "cw-var": {"eta": ETA, "a": A}, "cw-stdev": {"eta": ETA, "a": A}, "arow": {"r": R_AROW, "a": A},
    "scw1": {"eta": ETA, "C": C_SCW, "a": A}, "scw2": {"eta": ETA, "C": C_SCW, "a": A},
}
FIRST_ORDER_RULES = {"perceptron": ref.PERCEPTRON, "pa": ref.PA, "pa1": ref.PA1, "pa2": ref.PA2}
GAUSSIAN_RULES = {"cw-var": ref.VAR, "cw-stdev": ref.STDEV, "scw1": ref.SCW1, "scw2": ref.SCW2}
AROW_RULES = {"squared_hinge": ref.AROW, "hinge": ref.AROW_HINGE}
K_COMPETITORS = 2  # of the 3 other labels, so that k visibly reaches the kernels


def refusal(name: str, variant: dict) -> str | None:
    """What a learner's error says about a combination it refuses (None: it accepts it)."""
    multiclass = variant.get("multiclass")
    if name == "perceptron" and multiclass == "exact":
        return "multiclass='exact' is not defined: the perceptron solves no optimisation problem"
    if name in ("cw-var", "cw-stdev") and multiclass == "exact" and variant["covariance"] == "exact":
        return "multiclass='exact' with covariance='exact' is not supported"
    if name == "arow" and multiclass == "exact" and variant["loss"] == "hinge":
        return "multiclass='exact' with loss='hinge' is not defined"
    return None


def builtin_online_learners() -> dict[str, type]:
    return {entry.name: entry.factory for entry in default_registries().learners
            if entry.online and entry.provider == BUILTIN_PROVIDER}


def variants(cls) -> list[dict]:
    """Every combination of the variant parameters the learner's constraints offer."""
    axes = [(name, cls.constraints[name].values) for name in VARIANT_PARAMETERS if name in cls.constraints]
    return [dict(zip([n for n, _ in axes], values)) for values in itertools.product(*(v for _, v in axes))]


def _matrix():
    items = []
    for name, cls in sorted(builtin_online_learners().items()):
        for variant in variants(cls):
            for problem in ("binary", "4-class"):
                label = "-".join([name, problem, *(f"{k}={v}" for k, v in variant.items())])
                items.append(pytest.param(name, variant, problem, id=label))
    return items


MATRIX = _matrix()


# --------------------------------------------------------------------------- problems
def make_problem(kind: str):
    """A fixed sparse problem: 48 rows of 10 features (about 40% active, normal values, two
    empty rows), labels from a hidden linear model with a few flipped. Binary labels are -1/+1
    (so the encoded labels are the labels), the 4-class labels 0..3."""
    X = random_sparse(48, 10, 0.4, seed=31, empty_rows=(0, 9)).tocsr()
    rng = np.random.default_rng(32)
    if kind == "binary":
        y = np.where(X @ rng.normal(size=10) > 0, 1, -1)
        y[rng.random(48) < 0.1] *= -1
    else:
        y = np.argmax(X @ rng.normal(size=(10, 4)), axis=1)
        noisy = rng.random(48) < 0.1
        y[noisy] = rng.integers(0, 4, size=int(noisy.sum()))
    assert len(np.unique(y)) == (2 if kind == "binary" else 4)
    return X, y


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- twins
def reference_state(name: str, variant: dict, X, y) -> tuple[tuple[int, int], dict]:
    """``((mistakes, updates), {state array: value})`` of one epoch in row order, from the twins."""
    binary = len(np.unique(y)) == 2
    yk = y.astype(float) if binary else y.astype(int)
    d, K = X.shape[1], len(np.unique(y))
    order = np.arange(X.shape[0])
    shape = (d,) if binary else (d, K)
    multiclass = variant.get("multiclass", "top1")
    strategy = {"seq": ref.SEQ, "par": ref.PAR, "exact": ref.EXACT}.get(multiclass)
    kbest = not binary and strategy is not None
    floor = A * VARIANCE_FLOOR

    if name in FIRST_ORDER_RULES:
        rule, C = FIRST_ORDER_RULES[name], HYPERPARAMETERS.get(name, {}).get("C", 1.0)
        mu = np.zeros(shape)
        if binary:
            counts = ref.first_order_binary(X, yk, order, mu, rule, C)
        elif kbest:
            counts = ref.first_order_multiclass_kbest(X, yk, order, mu, rule, strategy, K_COMPETITORS, C)
        else:
            counts = ref.first_order_multiclass(X, yk, order, mu, rule, C)
        return counts, {"mu": mu}

    if name == "averaged-perceptron":
        twin = ref.averaged_perceptron_binary if binary else ref.averaged_perceptron_multiclass
        history = [np.zeros(shape)]
        counts, mean = twin(X, yk, order, history)
        return counts, {"mu": mean, "w": history[-1], "count": np.array([float(len(order))])}

    if name == "sgd":
        mu, count = np.zeros(shape), np.zeros(1)
        twin = ref.sgd_binary if binary else ref.sgd_multiclass
        counts = twin(X, yk, order, mu, count, variant["loss"], variant["learning_rate"], SGD["alpha"],
                      SGD["eta0"], SGD["power_t"])
        return counts, {"mu": mu, "count": count}

    if name == "sop":
        full = variant["covariance"] == "full"
        vsum = np.zeros(shape)
        if full:
            A_ref = A * np.eye(d) if binary else np.repeat((A * np.eye(d))[None], K, axis=0)
        else:
            A_ref = np.full(shape, A)
        counts = (ref.sop_binary(X, yk, order, vsum, A_ref, full) if binary
                  else ref.sop_multiclass(X, yk, order, vsum, A_ref, full))
        if not full:
            return counts, {"vsum": vsum, "A": A_ref, "mu": vsum / A_ref}
        if binary:
            return counts, {"vsum": vsum, "A": A_ref, "mu": np.linalg.solve(A_ref, vsum)}
        mu = np.column_stack([np.linalg.solve(A_ref[k], vsum[:, k]) for k in range(K)])
        return counts, {"vsum": vsum, "A": A_ref, "mu": mu}

    # Gaussian learners
    rule = AROW_RULES[variant["loss"]] if name == "arow" else GAUSSIAN_RULES[name]
    covariance = variant["covariance"]
    steps = {"eta": ETA, "C": C_SCW, "r": R_AROW}
    mu = np.zeros(shape)
    if covariance == "full":
        Sigma = A * np.eye(d) if binary else np.repeat((A * np.eye(d))[None], K, axis=0)
        if binary:
            counts = ref.gaussian_full_binary(X, yk, order, mu, Sigma, rule, **steps, floor=floor)
        elif kbest:
            counts = ref.gaussian_full_multiclass_kbest(X, yk, order, mu, Sigma, rule, strategy, K_COMPETITORS,
                                                        **steps, floor=floor)
        else:
            counts = ref.gaussian_full_multiclass(X, yk, order, mu, Sigma, rule, **steps, floor=floor)
        return counts, {"mu": mu, "Sigma": Sigma}
    s = np.full(shape, A)
    if covariance == "exact":
        if binary:
            counts = ref.gaussian_exact_binary(X, yk, order, mu, s, rule, ETA, floor)
        elif kbest:
            counts = ref.gaussian_exact_multiclass_kbest(X, yk, order, mu, s, rule, strategy, K_COMPETITORS,
                                                         ETA, floor)
        else:
            counts = ref.gaussian_exact_multiclass(X, yk, order, mu, s, rule, ETA, floor)
        return counts, {"mu": mu, "s": s}
    if binary:
        counts = ref.gaussian_diag_binary(X, yk, order, mu, s, rule, covariance, **steps, floor=floor)
    elif kbest:
        counts = ref.gaussian_diag_multiclass_kbest(X, yk, order, mu, s, rule, covariance, strategy,
                                                    K_COMPETITORS, **steps, floor=floor)
    else:
        counts = ref.gaussian_diag_multiclass(X, yk, order, mu, s, rule, covariance, **steps, floor=floor)
    return counts, {"mu": mu, "s": s}


def learner_state(model) -> dict:
    """The fitted state in the twins' representation (Sigma from the precision factor, SOP's
    correlation from its factor)."""
    state = dict(model.fitted_state())
    if "R" in state:
        R = state.pop("R")
        blocks = [R] if R.ndim == 2 else list(R)
        if "vsum" in state:  # SOP: A = R' R
            mats = [b.T @ b for b in blocks]
            state["A"] = mats[0] if R.ndim == 2 else np.stack(mats)
        else:  # Gaussian: Sigma = (R' R)^{-1}
            mats = [covariance_from_factor(b) for b in blocks]
            state["Sigma"] = mats[0] if R.ndim == 2 else np.stack(mats)
    return state


# --------------------------------------------------------------------------- the matrix
@pytest.mark.parametrize("name,variant,problem", MATRIX)
def test_one_epoch_matches_the_reference(name, variant, problem):
    X, y = make_problem(problem)
    multiclass = variant.get("multiclass", "top1")
    k = K_COMPETITORS if problem == "4-class" and multiclass != "top1" else None
    params = {**HYPERPARAMETERS.get(name, {}), **variant, "n_epochs": 1, "shuffle": False}
    if "multiclass" in variant:
        params["k"] = k
    refused = refusal(name, variant)
    if refused is not None:
        # refused by name (make_learner validates) and by the class itself on fit
        with pytest.raises(ParameterError, match=refused):
            make_learner(name, **params)
        with pytest.raises(ParameterError, match=refused):
            builtin_online_learners()[name](**params).fit(X, y)
        return
    model = make_learner(name, **params).fit(X, y)
    counts, want = reference_state(name, variant, X, y)
    got = learner_state(model)
    assert (model.mistakes_[0], model.n_updates_[0]) == counts
    assert counts[1] > 0
    for array, value in want.items():
        close(got[array], value)
    assert set(want) >= set(got) - {"u"}  # every state array is checked (u: derived, see below)
    if name == "averaged-perceptron":
        # u is the sum of t * (update at example t), from which mu is recovered: w - u / count
        close(got["w"] - got["u"] / got["count"][0], want["mu"])
    if "average" in model.get_params() and model.average_refusal(problem == "binary") is None:
        # averaging (docs/algorithms.md "Averaging") leaves the training as it is, bit for bit
        averaged = make_learner(name, **params, average=True).fit(X, y)
        assert averaged.mistakes_ == model.mistakes_
        for array, value in model.fitted_state().items():
            np.testing.assert_array_equal(averaged.fitted_state()[array], value)
        assert averaged.fitted_state()["count"][0] == X.shape[0]


def test_the_matrix_covers_every_builtin_online_learner_and_variant():
    learners = builtin_online_learners()
    assert set(learners) == {"perceptron", "averaged-perceptron", "pa", "pa1", "pa2", "sgd", "sop", "cw-var",
                             "cw-stdev", "arow", "scw1", "scw2"}
    for name, cls in learners.items():
        options = {p for p, allowed in cls.constraints.items() if isinstance(allowed, Options)}
        assert options - NOT_VARIANTS <= set(VARIANT_PARAMETERS), (name, options)
        assert set(HYPERPARAMETERS.get(name, {})) <= set(cls().get_params()), name
    covered = {(item.values[0], tuple(item.values[1].items()), item.values[2]) for item in MATRIX}
    assert len(covered) == len(MATRIX)
    # the Gaussian learners offer every covariance form they accept, and nothing else
    assert {v["covariance"] for v in variants(learners["cw-var"])} == {"diag-kl", "diag-l2", "exact", "full"}
    refused = {item.id for item in MATRIX if refusal(item.values[0], item.values[1])}
    # on both problems: the perceptron's exact; CW var's and stdev's exact with exact; AROW's
    # exact with the hinge, for each of its 3 covariance forms
    assert len(refused) == 2 * (1 + 1 + 1 + 3)
