"""textcw's two epoch loops (learners/_kernels/diagonal_loop.py and feature_loop.py) run the
built-in rules and the plugins' variants alike, and numba caches their code for every variant
whose functions are defined at module level (textcw._jit.KernelRef).

- a built-in rule written as a plugin's variant trains exactly what the built-in kernel trains;
- a variant's functions are named the same in every process, so a second process loads the
  loops' compiled code instead of compiling it (checked in fresh processes sharing one cache);
- functions without such a name (closures) run on uncached twins of the loops;
- a NaN margin is no mistake for the diagonal loop and the built-in first-order rules (``m <= 0``,
  as before) and one for a plugin's per-feature variant (its full guards);
- the per-feature loops keep huge finite values and undo a document that made one infinite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from scipy.special import ndtri

from textcw._jit import KernelRef
from textcw.kernels import diagonal_gaussian_kernels, kernel, per_feature_kernels
from textcw.learners._kernels import constants as c
from textcw.learners._kernels import first_order, gaussian_diag


def problem(binary, seed=3, index_dtype=np.int64):
    rng = np.random.default_rng(seed)
    X = sp.random(160, 40, density=0.15, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    X.indices, X.indptr = X.indices.astype(index_dtype), X.indptr.astype(index_dtype)
    if binary:
        y = np.where(X @ rng.normal(size=40) + 0.3 * rng.normal(size=160) > 0, 1.0, -1.0)
    else:
        y = np.argmax(X @ rng.normal(size=(40, 4)), axis=1).astype(np.int64)
    return X, y


# The built-in rules as a plugin would write them: the built-ins' own step and variance, built
# into kernels by the public factory (parameters as floats, by name).
AS_PLUGIN = diagonal_gaussian_kernels(gaussian_diag.rule_steps, gaussian_diag.rule_variance,
                                      params=("rule", "phi", "C", "r"), forms=("diag-kl", "diag-l2"))
RULES = [c.CW_VAR, c.CW_STDEV, c.AROW_SQUARED_HINGE, c.AROW_HINGE, c.SCW1, c.SCW2]


@pytest.mark.parametrize("covariance", [c.DIAG_KL, c.DIAG_L2])
@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("binary", [True, False])
def test_a_builtin_rule_as_a_plugin_variant_trains_the_builtin_model_exactly(binary, rule, covariance):
    X, y = problem(binary)
    shape = (40,) if binary else (40, 4)
    phi, C, r, floor = float(ndtri(0.95)), 0.6, 0.8, 1e-12
    mine, theirs = (np.zeros(shape), np.full(shape, 0.7)), (np.zeros(shape), np.full(shape, 0.7))
    counts_mine, counts_theirs = np.zeros(c.N_COUNTS, np.int64), np.zeros(c.N_COUNTS, np.int64)
    plugin = AS_PLUGIN.binary if binary else AS_PLUGIN.top1
    builtin = gaussian_diag.binary_epoch if binary else gaussian_diag.multiclass_top1_epoch
    rng = np.random.default_rng(5)
    for _ in range(3):
        order = rng.permutation(160).astype(np.int64)
        got = plugin(X.indptr, X.indices, X.data, y, order, *mine, covariance, floor,
                     (float(rule), phi, C, r), counts_mine)
        want = builtin(X.indptr, X.indices, X.data, y, order, *theirs, rule, covariance, phi, C, r,
                       floor, counts_theirs)
        assert tuple(got) == tuple(want)
        assert_array_equal(mine[0], theirs[0])
        assert_array_equal(mine[1], theirs[1])
        assert_array_equal(counts_mine, counts_theirs)
    assert want[1] > 0


def test_the_names_of_module_level_functions_are_stable_and_those_of_closures_unique():
    ref = KernelRef(first_order.rule_step)
    assert ref.cacheable
    assert ref.key.startswith("textcw.learners._kernels.first_order:rule_step@")
    assert KernelRef(first_order.rule_step).key == ref.key  # the same name for the same function

    @kernel
    def local_step(m, q, params):
        return 1.0

    a, b = KernelRef(local_step), KernelRef(local_step)
    assert not a.cacheable and not b.cacheable
    assert a.key != b.key  # no process, this one included, can name it again


def test_a_variant_of_closures_runs_on_the_uncached_loops_and_equals_the_module_level_one():
    @kernel
    def weight(state, c):
        return state[0][c]

    @kernel
    def step(m, q, params):
        return min(params[0], max(0.0, 1.0 - m) / q) if q > 0.0 else 0.0

    @kernel
    def update(state, c, x, g, params):
        state[0][c] += g * x

    local = per_feature_kernels(weight, step, update, state=("mu",), params=("C",))
    X, y = problem(True)
    mine, theirs = np.zeros(40), np.zeros(40)
    order = np.random.default_rng(1).permutation(160).astype(np.int64)
    got = local.binary(X.indptr, X.indices, X.data, y, order, mine, 0.5)
    want = first_order.binary_epoch(X.indptr, X.indices, X.data, y, order, theirs, c.PA1, 0.5)
    assert tuple(got) == tuple(want) and want[1] > 0
    assert_array_equal(mine, theirs)


def test_the_diagonal_loop_counts_no_nan_margin_as_a_mistake_and_makes_no_update():
    """``m <= 0`` as every built-in kernel tests it, for the built-in rules and plugins alike."""
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    arow = c.AROW_SQUARED_HINGE
    for epoch, extra in ((gaussian_diag.binary_epoch, (arow, c.DIAG_KL, 0.0, 0.0, 1.0, 1e-12)),
                         (AS_PLUGIN.binary, (c.DIAG_KL, 1e-12, (float(arow), 0.0, 0.0, 1.0)))):
        mu, s = np.array([np.nan, 0.0]), np.ones(2)
        y, order = np.array([1.0, -1.0]), np.array([0, 1], np.int64)
        got = epoch(X.indptr, X.indices, X.data, y, order, mu, s, *extra)
        assert tuple(got) == (1, 1)  # row 0's NaN margin: no mistake, no update; row 1's tie: both
        assert_array_equal(s[:1], [1.0])
        assert s[1] < 1.0


def test_the_first_order_rules_keep_their_mistake_test_and_plugins_get_the_full_guards():
    """The built-in perceptron and PA rules run the per-feature loop with ``checked=None``: a
    NaN margin is not a mistake (``m <= 0``, as they always counted); the same functions as a
    plugin's variant run with the full guards, where it is one."""
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0]]))
    y, order = np.array([1.0, -1.0]), np.array([0, 1], np.int64)
    as_plugin = per_feature_kernels(first_order.weight, first_order.rule_step,
                                    first_order.additive_update, state=("w",),
                                    params=("rule", "C", "scale", "lag"))
    for rule in (c.PERCEPTRON, c.PA1):
        builtin, plugin = np.array([np.nan, 0.0]), np.array([np.nan, 0.0])
        got = first_order.binary_epoch(X.indptr, X.indices, X.data, y, order, builtin, rule, 0.5)
        assert tuple(got) == (1, 1)  # the tie of row 1 only
        got = as_plugin.binary(X.indptr, X.indices, X.data, y, order, plugin, rule, 0.5, 1.0, 0.0)
        assert tuple(got) == (2, 1)
        assert_array_equal(builtin, plugin)
        assert builtin[1] < 0.0


# ------------------------------------------------------------------ caching across processes
VARIANT = '''
"""A plugin-style variant: a diagonal Gaussian step and a per-feature update, at module level."""
from textcw.kernels import diagonal_gaussian_kernels, kernel, per_feature_kernels, update_variance


@kernel
def step(m, v, params):
    if m >= 1.0:
        return 0.0, 0.0, 0.0
    beta = 1.0 / (v + params[0])
    return (1.0 - m) * beta, beta, 1.0 / params[0]


@kernel
def variance(s_j, x_j, beta, c, params, covariance, floor):
    return update_variance(s_j, x_j, beta, c, covariance, floor)


@kernel
def weight(state, c):
    return state[0][c]


@kernel
def unit_step(m, q, params):
    return params[0] if m <= 0.0 else 0.0


@kernel
def update(state, c, x, g, params):
    state[0][c] += g * x


GAUSSIAN = diagonal_gaussian_kernels(step, variance, params=("r",), forms=("diag-kl", "diag-l2"))
FEATURES = per_feature_kernels(weight, unit_step, update, state=("w",), params=("rate",))
'''

CHILD = '''
import json, sys
import numpy as np, scipy.sparse as sp
import variant
from textcw.learners._kernels import diagonal_loop, feature_loop
X = sp.random(50, 20, density=0.2, format="csr", random_state=0)
order = np.arange(50, dtype=np.int64)
yb, ym = np.where(np.arange(50) % 2, 1.0, -1.0), (np.arange(50) % 3).astype(np.int64)
variant.GAUSSIAN.binary(X.indptr, X.indices, X.data, yb, order, np.zeros(20), np.ones(20), 0, 1e-12, (1.0,))
variant.GAUSSIAN.top1(X.indptr, X.indices, X.data, ym, order, np.zeros((20, 3)), np.ones((20, 3)), 0, 1e-12, (1.0,))
variant.FEATURES.binary(X.indptr, X.indices, X.data, yb, order, np.zeros(20), 1.0)
variant.FEATURES.top1(X.indptr, X.indices, X.data, ym, order, np.zeros((20, 3)), 1.0)
loops = [diagonal_loop.binary_loop, diagonal_loop.top1_loop, feature_loop.binary_loop, feature_loop.top1_loop]
print(json.dumps({"hits": [sum(f.stats.cache_hits.values()) for f in loops],
                  "misses": [sum(f.stats.cache_misses.values()) for f in loops]}))
'''


def run_child(folder, cache):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(folder)}
    env.pop("NUMBA_DISABLE_JIT", None)
    out = subprocess.run([sys.executable, "-c", CHILD], cwd=folder, env=env, capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_variant_is_compiled_in_the_first_process_and_loaded_from_the_cache_in_the_next(tmp_path):
    (tmp_path / "variant.py").write_text(textwrap.dedent(VARIANT))
    cache = tmp_path / "numba-cache"
    first = run_child(tmp_path, cache)
    assert first["misses"] == [1, 1, 1, 1] and first["hits"] == [0, 0, 0, 0]
    second = run_child(tmp_path, cache)
    assert second["misses"] == [0, 0, 0, 0] and second["hits"] == [1, 1, 1, 1]
    # an edited variant is a new variant: its loops are compiled again
    (tmp_path / "variant.py").write_text(textwrap.dedent(VARIANT) + "\n# edited\n")
    assert run_child(tmp_path, cache)["misses"] == [1, 1, 1, 1]


CLOSURE_CHILD = '''
import numpy as np, scipy.sparse as sp
from textcw.kernels import diagonal_gaussian_kernels, kernel, update_variance


def build():
    @kernel
    def step(m, v, params):
        beta = 1.0 / (v + params[0])
        return (max(0.0, 1.0 - m) * beta, beta, 1.0 / params[0])

    @kernel
    def variance(s_j, x_j, beta, c, params, covariance, floor):
        return update_variance(s_j, x_j, beta, c, covariance, floor)

    return diagonal_gaussian_kernels(step, variance, params=("r",), forms=("diag-kl", "diag-l2"))


X = sp.random(50, 20, density=0.2, format="csr", random_state=0)
y = np.where(np.arange(50) % 2, 1.0, -1.0)
print(build().binary(X.indptr, X.indices, X.data, y, np.arange(50, dtype=np.int64), np.zeros(20),
                     np.ones(20), 0, 1e-12, (1.0,)))
'''


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="nothing is compiled")
def test_a_variant_of_closures_writes_nothing_of_the_loops_to_the_cache(tmp_path):
    """Its functions have names no later process can find, so neither the loops nor the helpers
    that take the functions leave compiled code for them on disk (it could never be read)."""
    cache = tmp_path / "numba-cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    env.pop("NUMBA_DISABLE_JIT", None)
    (tmp_path / "closures.py").write_text(CLOSURE_CHILD)
    out = subprocess.run([sys.executable, "closures.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip().startswith("(")  # it trained: (mistakes, updates)
    indexes = [path.name for path in cache.rglob("*.nbi")]
    assert any(name.startswith("gaussian_diag.update_variance") for name in indexes)  # cached as ever
    assert not [name for name in indexes if name.startswith("diagonal_loop.")]


@kernel
def first_weight(state, c):
    return state[0][c]


@kernel
def unit_step(m, q, params):
    return 1.0


@kernel
def set_update(state, c, x, g, params):
    """Every updated value becomes ``params[0]``."""
    state[0][c] = params[0]


HUGE = per_feature_kernels(first_weight, unit_step, set_update, state=("w",), params=("value",))


@pytest.mark.parametrize("binary", [True, False])
def test_huge_finite_values_are_kept_and_an_infinite_one_undone(binary):
    """The per-feature loops check every new value of a document once, after its update: 1e308 in
    every cell is finite and stays; an infinite value undoes the document and is refused."""
    X = sp.csr_matrix(np.array([[1.0, 2.0, 0.0]]))
    order = np.array([0], np.int64)
    if binary:
        loop, y, w, want = HUGE.binary, np.array([1.0]), np.zeros(3), [1e308, 1e308, 0.0]
    else:
        loop, y, w, want = HUGE.top1, np.array([1]), np.zeros((3, 2)), [[1e308] * 2, [1e308] * 2, [0.0, 0.0]]
    assert tuple(loop(X.indptr, X.indices, X.data, y, order, w, 1e308)) == (1, 1)
    assert_array_equal(w, want)
    w[:] = 0.0
    with pytest.raises(FloatingPointError):
        loop(X.indptr, X.indices, X.data, y, order, w, np.inf)
    assert not w.any()
