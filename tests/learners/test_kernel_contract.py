"""The learner/kernel contract (textcw.learners.protocol, textcw.learners.base).

- Every kernel dispatch on a variant code (rule, covariance form, multi-class strategy, SGD loss
  and schedule) ends in a ``ValueError`` for an unknown code instead of running another paper's
  update. Each (kernel, code argument) pair is one test item, built from the kernels' own
  signatures so that a new kernel or code argument cannot be left out; the same calls with
  valid codes update the model, so the unknown code is the only thing that changes.
- :func:`~textcw.learners.protocol.bind_kernel` passes arguments by name and refuses a kernel
  whose signature and the learner disagree.
- A Gaussian learner's ``step_params()`` must name exactly what its rule reads.

The kernel tests run under ``NUMBA_DISABLE_JIT=1`` too (plain Python), where the same
``ValueError`` is raised by the interpreter.
"""

from __future__ import annotations

import inspect
import itertools
import re

import numpy as np
import pytest
import scipy.sparse as sp

from textcw._csr import as_kernel_csr
from textcw.errors import ParameterError
from textcw.learners._kernels import (
    first_order,
    first_order_kbest,
    gaussian_diag,
    gaussian_diag_kbest,
    gaussian_exact,
    gaussian_exact_kbest,
    gaussian_full,
    gaussian_full_kbest,
    gaussian_rules,
    hildreth,
    sgd,
    shared_qp,
)
from textcw.learners._kernels import constants as c
from textcw.learners.cw_var import CWVar
from textcw.learners.arow import AROW
from textcw.learners.protocol import DATA_ARGUMENTS, KernelCall, bind_kernel
from textcw.learners.scw import SCW1

# The modules whose kernels dispatch on variant codes, and the names of those codes' arguments.
CODE_MODULES = (first_order, first_order_kbest, gaussian_diag, gaussian_diag_kbest, gaussian_exact,
                gaussian_exact_kbest, gaussian_full, gaussian_full_kbest, gaussian_rules, hildreth, sgd,
                shared_qp)
CODE_ARGUMENTS = ("rule", "covariance", "strategy", "loss", "schedule")
UNKNOWN_CODES = (99, -1)

FIRST_ORDER_RULES = (c.PERCEPTRON, c.PA, c.PA1, c.PA2)
GAUSSIAN_RULES = (c.CW_VAR, c.CW_STDEV, c.AROW_SQUARED_HINGE, c.AROW_HINGE, c.SCW1, c.SCW2)
# The rules with a joint (multiclass="exact") problem: the learners refuse the others with it.
# (Codes are per family: PERCEPTRON and CW_VAR are both 0.)
FIRST_ORDER_JOINT_RULES = (c.PA, c.PA1, c.PA2)
GAUSSIAN_JOINT_RULES = (c.CW_VAR, c.CW_STDEV, c.AROW_SQUARED_HINGE)


def _valid_codes(module) -> dict[str, tuple[int, ...]]:
    """The codes each code argument of ``module``'s kernels accepts."""
    if module in (first_order, first_order_kbest):
        rules = FIRST_ORDER_RULES
    elif module in (gaussian_exact, gaussian_exact_kbest):
        rules = (c.CW_VAR, c.CW_STDEV)
    else:
        rules = GAUSSIAN_RULES
    strategies = (c.MC_SEQ, c.MC_PAR) if module is gaussian_exact_kbest else (c.MC_SEQ, c.MC_PAR, c.MC_EXACT)
    return {"rule": rules, "covariance": (c.DIAG_KL, c.DIAG_L2), "strategy": strategies,
            "loss": (c.HINGE, c.LOG, c.MODIFIED_HUBER), "schedule": (c.DECAY, c.CONSTANT, c.INVSCALING)}


def _own_kernels(module):
    """``(name, kernel)`` of the compiled functions ``module`` defines (not those it imports)."""
    for name, value in vars(module).items():
        function = getattr(value, "py_func", value)
        if inspect.isfunction(function) and function.__module__ == module.__name__:
            yield name, value


def _parameters(kernel) -> list[str]:
    return list(inspect.signature(getattr(kernel, "py_func", kernel)).parameters)


def _epoch_cases():
    cases = []
    for module in CODE_MODULES:
        for name, kernel in _own_kernels(module):
            if not name.endswith("_epoch"):
                continue
            for argument in CODE_ARGUMENTS:
                if argument in _parameters(kernel):
                    label = f"{module.__name__.rsplit('.', 1)[1]}.{name}"
                    cases.append(pytest.param(module, kernel, argument, id=f"{label}-{argument}"))
    return cases


EPOCH_CASES = _epoch_cases()


# --------------------------------------------------------------------------- tiny real inputs
def _tiny_matrix():
    """A 3x4 CSR matrix, every row non-empty, values not all 1."""
    return as_kernel_csr(sp.csr_matrix(np.array([[1.5, 0.0, -0.5, 0.0],
                                                 [0.0, 2.0, 0.0, 0.25],
                                                 [-1.0, 0.5, 0.0, 1.0]])))


def _epoch_arguments(kernel, codes: dict) -> list:
    """Every argument of an epoch kernel, by parameter name, on the tiny matrix: a fresh state
    (zero means, unit variances) on which the first example makes an update for every valid
    code, and ``codes`` for the code arguments."""
    X = _tiny_matrix()
    d, K = X.shape[1], 3
    binary = kernel.__name__.startswith("binary")
    shape = (d,) if binary else (d, K)
    values = {
        "indptr": X.indptr, "indices": X.indices, "data": X.data,
        "y": np.array([1.0, -1.0, 1.0]) if binary else np.array([0, 1, 2], np.int64),
        "order": np.arange(3, dtype=np.int64),
        "weights": None,  # the optional per-document weights: unweighted
        "u": None,  # the optional running-average accumulator: no averaging
        "mu": np.zeros(shape), "s": np.ones(shape), "count": np.zeros(1),
        "R": np.eye(d) if binary else np.repeat(np.eye(d)[None], K, axis=0),
        "k": K - 1, "phi": 1.0, "C": 0.5, "r": 0.8, "floor": 1e-12,
        "alpha": 0.01, "eta0": 0.5, "power_t": 0.5, "counts": np.zeros(c.N_COUNTS, np.int64),
        **codes,
    }
    return [values[name] for name in _parameters(kernel)]


def _other_codes(module, kernel, argument):
    """Each combination of valid values of the kernel's other code arguments (the strategy
    decides which branch reaches the rule's dispatch, so every one is tried)."""
    valid = _valid_codes(module)
    others = [name for name in CODE_ARGUMENTS if name in _parameters(kernel) and name != argument]
    for combination in itertools.product(*(valid[name] for name in others)):
        yield dict(zip(others, combination))


def _learners_accept(module, codes) -> bool:
    """Whether a learner may pass these codes together: the joint (exact) strategy needs a rule
    with a joint problem (the learners refuse the others, test_learner_matrix.py)."""
    if codes.get("strategy") != c.MC_EXACT:
        return True
    joint = FIRST_ORDER_JOINT_RULES if module is first_order_kbest else GAUSSIAN_JOINT_RULES
    return codes["rule"] in joint


@pytest.mark.parametrize("module,kernel,argument", EPOCH_CASES)
def test_epoch_kernel_refuses_an_unknown_code(module, kernel, argument):
    tried = 0
    for codes in _other_codes(module, kernel, argument):
        for code in _valid_codes(module)[argument]:
            if _learners_accept(module, {**codes, argument: code}):
                mistakes, updates = kernel(*_epoch_arguments(kernel, {**codes, argument: code}))
                assert updates > 0, (codes, argument, code)  # the dispatch is reached on this data
        for code in UNKNOWN_CODES:
            with pytest.raises(ValueError, match="unknown"):
                kernel(*_epoch_arguments(kernel, {**codes, argument: code}))
            tried += 1
    assert tried >= len(UNKNOWN_CODES)


def test_the_epoch_cases_cover_every_code_argument_of_every_kernel():
    kernels = {item.values[1] for item in EPOCH_CASES}
    expected = {
        "first_order": ["binary_epoch", "multiclass_top1_epoch"],
        "first_order_kbest": ["multiclass_epoch"],
        "gaussian_diag": ["binary_epoch", "multiclass_top1_epoch"],
        "gaussian_diag_kbest": ["multiclass_epoch"],
        "gaussian_exact": ["binary_epoch", "multiclass_top1_epoch"],
        "gaussian_exact_kbest": ["multiclass_epoch"],
        "gaussian_full": ["binary_epoch", "multiclass_top1_epoch"],
        "gaussian_full_kbest": ["multiclass_epoch"],
        "sgd": ["binary_epoch", "multiclass_top1_epoch"],
    }
    modules = {m.__name__.rsplit(".", 1)[1]: m for m in CODE_MODULES}
    assert kernels == {getattr(modules[m], name) for m, names in expected.items() for name in names}
    assert len(EPOCH_CASES) == 23


# --------------------------------------------------------------------------- dispatch functions
def _tau():
    return np.empty(2)


# (function, code argument, valid codes, the other arguments by name)
DISPATCH_CASES = [
    (first_order.step_size, "rule", FIRST_ORDER_RULES, {"m": 0.5, "q": 1.0, "C": 1.0}),
    (gaussian_rules.steps, "rule", GAUSSIAN_RULES, {"m": 0.0, "v": 1.0, "phi": 1.0, "C": 1.0, "r": 1.0}),
    (gaussian_diag.update_variance, "covariance", (c.DIAG_KL, c.DIAG_L2),
     {"s_j": 1.0, "x_j": 0.5, "beta": 0.1, "c": 0.2, "floor": 1e-12}),
    (gaussian_exact.violated, "rule", (c.CW_VAR, c.CW_STDEV), {"m": 0.0, "v": 1.0, "phi": 1.0}),
    (gaussian_exact.new_variance, "rule", (c.CW_VAR, c.CW_STDEV),
     {"s_j": 1.0, "wv": 0.5, "k": 0.3, "t": 0.3, "phi": 1.0, "floor": 1e-12}),
    (gaussian_exact.solve_margin, "rule", (c.CW_VAR, c.CW_STDEV),
     {"m": 0.0, "v": 1.0, "phi": 1.0, "w": np.array([0.25, 0.75]), "n": 2}),
    (hildreth.cw_coordinate, "rule", (c.CW_VAR, c.CW_STDEV), {"a": 0.0, "q": 1.0, "W": 1.0, "phi": 1.0}),
    (shared_qp.pa_multipliers, "rule", (c.PA, c.PA1, c.PA2),
     {"m0": np.array([0.0, 0.2]), "xx": 1.0, "k": 2, "C": 0.5, "tau": None}),
    (sgd.negative_slope, "loss", (c.HINGE, c.LOG, c.MODIFIED_HUBER), {"m": 0.0}),
    (sgd.learning_rate, "schedule", (c.DECAY, c.CONSTANT, c.INVSCALING),
     {"t": 3.0, "alpha": 0.01, "eta0": 0.5, "power_t": 0.5}),
]


def _call(function, argument, code, others):
    values = {**others, argument: code}
    if "tau" in values:
        values["tau"] = _tau()
    return function(*(values[name] for name in _parameters(function)))


@pytest.mark.parametrize(
    "function,argument,valid,others",
    [pytest.param(*case, id=f"{case[0].__module__.rsplit('.', 1)[1]}.{case[0].__name__}-{case[1]}")
     for case in DISPATCH_CASES])
def test_dispatch_function_refuses_an_unknown_code(function, argument, valid, others):
    for code in valid:
        result = _call(function, argument, code, others)
        assert np.all(np.isfinite(np.asarray(result, dtype=float)))
    for code in UNKNOWN_CODES:
        with pytest.raises(ValueError, match="unknown"):
            _call(function, argument, code, others)


# Private helpers whose error is reached through a public dispatch function tested above.
REACHED_THROUGH = {"gaussian_exact._value": "gaussian_exact.solve_margin",
                   "gaussian_rules._rule_steps": "gaussian_rules.steps"}


def test_every_function_that_raises_for_an_unknown_code_is_tested():
    raising = set()
    for module in CODE_MODULES:
        for name, kernel in _own_kernels(module):
            if "raise ValueError" in inspect.getsource(getattr(kernel, "py_func", kernel)):
                raising.add(f"{module.__name__.rsplit('.', 1)[1]}.{name}")
    tested = {f"{item.values[0].__name__.rsplit('.', 1)[1]}.{item.values[1].__name__}" for item in EPOCH_CASES}
    tested |= {f"{f.__module__.rsplit('.', 1)[1]}.{f.__name__}" for f, *_ in DISPATCH_CASES}
    assert raising - tested == set(REACHED_THROUGH)
    assert set(REACHED_THROUGH.values()) <= tested


# --------------------------------------------------------------------------- bind_kernel
def recording_kernel(indptr, indices, data, y, order, mu, s, rule, phi, C=1.0, floor=0.0, counts=None):
    """A plain Python kernel that returns what it was given."""
    return {"rule": rule, "phi": phi, "C": C, "floor": floor, "counts": counts}


def shifted_kernel(indptr, indices, data, order, y, mu, s, rule):
    return 0, 0


def test_bind_kernel_passes_values_by_name_in_the_kernels_order():
    values = {"counts": "counts!", "floor": 1e-12, "C": 0.25, "phi": 1.5, "rule": c.CW_STDEV}
    call = bind_kernel(recording_kernel, ("mu", "s"), values)
    assert isinstance(call, KernelCall) and call.kernel is recording_kernel
    assert call.args == (c.CW_STDEV, 1.5, 0.25, 1e-12, "counts!")
    assert call.kernel(*range(7), *call.args) == {"rule": c.CW_STDEV, "phi": 1.5, "C": 0.25,
                                                   "floor": 1e-12, "counts": "counts!"}


def test_bind_kernel_lets_defaults_be_omitted():
    call = bind_kernel(recording_kernel, ("mu", "s"), {"phi": 2.0, "rule": c.CW_VAR})
    assert call.args == (c.CW_VAR, 2.0)  # C, floor and counts keep their defaults
    assert call.kernel(*range(7), *call.args) == {"rule": c.CW_VAR, "phi": 2.0, "C": 1.0, "floor": 0.0,
                                                   "counts": None}
    # a default before a value that is given is passed explicitly: no position shifts
    call = bind_kernel(recording_kernel, ("mu", "s"), {"rule": c.CW_VAR, "phi": 1.0, "counts": "x"})
    assert call.args == (c.CW_VAR, 1.0, 1.0, 0.0, "x")


def test_bind_kernel_refuses_a_value_the_kernel_does_not_take():
    # the trap of a kernel parameter spelled ``count``: the learner's ``counts`` would be dropped
    def misspelled(indptr, indices, data, y, order, mu, s, rule, floor, count=None):
        return 0, 0

    with pytest.raises(ParameterError, match=r"kernel misspelled does not take 'counts', which the "
                                             r"learner passes \(it takes \['rule', 'floor', 'count'\]\)"):
        bind_kernel(misspelled, ("mu", "s"), {"rule": 0, "floor": 0.0, "counts": np.zeros(3)})
    with pytest.raises(ParameterError, match=r"does not take 'k', 'r'"):
        bind_kernel(recording_kernel, ("mu", "s"), {"phi": 2.0, "rule": c.CW_VAR, "r": 9.0, "k": 3})
    # unless the learner declares them optional (values some of its kernels do not read)
    call = bind_kernel(recording_kernel, ("mu", "s"), {"phi": 2.0, "rule": c.CW_VAR, "r": 0.0},
                       optional={"r"})
    assert call.args == (c.CW_VAR, 2.0)


def test_bind_kernel_names_a_missing_argument():
    with pytest.raises(ParameterError, match=r"recording_kernel needs the argument 'phi'"):
        bind_kernel(recording_kernel, ("mu", "s"), {"rule": c.CW_VAR, "C": 0.5})


def averaging_kernel(indptr, indices, data, y, order, mu, rule, weights=None, u=None, count=None):
    return {"weights": weights, "u": u, "count": count}


def test_bind_kernel_passes_none_as_a_value_not_as_absence():
    call = bind_kernel(averaging_kernel, ("mu",), {"rule": 0, "u": "u!", "count": "c!"})
    assert call.args == (0, None, "u!", "c!")  # weights' default, passed so that u lands on u
    assert call.kernel(*range(6), *call.args) == {"weights": None, "u": "u!", "count": "c!"}
    assert bind_kernel(averaging_kernel, ("mu",), {"rule": 0}).args == (0,)
    # None given for a parameter is passed, not taken as "left out"
    assert bind_kernel(recording_kernel, ("mu", "s"), {"rule": 0, "phi": None}).args == (0, None)
    with pytest.raises(ParameterError, match=r"does not take 'k'"):
        bind_kernel(recording_kernel, ("mu", "s"), {"rule": 0, "phi": 1.0, "k": None})


def test_bind_kernel_refuses_a_kernel_whose_first_parameters_disagree():
    with pytest.raises(ParameterError, match=r"kernel shifted_kernel takes \(indptr, indices, data, order, y"):
        bind_kernel(shifted_kernel, ("mu", "s"), {"rule": 0})
    # the state arrays must follow in the learner's state_names order
    with pytest.raises(ParameterError, match=r"recording_kernel .*state_names"):
        bind_kernel(recording_kernel, ("s", "mu"), {"rule": 0, "phi": 1.0})
    with pytest.raises(ParameterError, match=r"binary_epoch"):
        bind_kernel(first_order.binary_epoch, ("w",), {"rule": c.PA1, "C": 0.5})
    assert DATA_ARGUMENTS == ("indptr", "indices", "data", "y", "order")


def test_bind_kernel_binds_a_compiled_kernel():
    with pytest.raises(ParameterError, match=r"binary_epoch does not take 'strategy'"):
        bind_kernel(first_order.binary_epoch, ("mu",), {"C": 0.5, "rule": c.PA1, "strategy": 3})
    call = bind_kernel(first_order.binary_epoch, ("mu",), {"C": 0.5, "rule": c.PA1})
    assert call.args == (c.PA1, 0.5)
    X = _tiny_matrix()
    mu = np.zeros(X.shape[1])
    assert call.kernel(X.indptr, X.indices, X.data, np.array([1.0, -1.0, 1.0]),
                       np.arange(3, dtype=np.int64), mu, *call.args) == (3, 3)


# --------------------------------------------------------------------------- step parameters
class _CWWithAROWParameters(CWVar):
    def step_params(self):
        return {"r": 1.0}


class _CWWithExtraParameters(CWVar):
    def step_params(self):
        return {"phi": self.phi, "C": 1.0}


class _AROWWithCWParameters(AROW):
    def step_params(self):
        return {"phi": 1.0}


class _SCWWithoutC(SCW1):
    def step_params(self):
        return {"phi": self.phi}


@pytest.mark.parametrize("cls,rule,wanted,given", [
    (_CWWithAROWParameters, c.CW_VAR, "['phi']", "['r']"),
    (_CWWithExtraParameters, c.CW_VAR, "['phi']", "['C', 'phi']"),
    (_AROWWithCWParameters, c.AROW_SQUARED_HINGE, "['r']", "['phi']"),
    (_SCWWithoutC, c.SCW1, "['phi', 'C']", "['phi']"),
], ids=["cw-gives-r", "cw-gives-extra-C", "arow-gives-phi", "scw-misses-C"])
def test_wrong_step_params_for_the_rule_is_a_parameter_error_on_fit(binary_problem, cls, rule, wanted, given):
    X, y = binary_problem
    message = (f"{cls.__name__}: rule {rule} reads the step parameters {wanted}, but step_params() "
               f"gives {given}")
    with pytest.raises(ParameterError, match=re.escape(message)):
        cls(n_epochs=1).fit(X, y)
