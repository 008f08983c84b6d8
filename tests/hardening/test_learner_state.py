"""A fitted learner's state can only be used by kernels whose shapes it matches.

The numba kernels do not check bounds: a state array shorter than ``X`` is wide, or a label
index past the last label block, reads and writes outside the array, which corrupts memory or
kills the process (SIGSEGV, SIGBUS, glibc's heap checks). These tests change, from Python,
everything a caller can change after fitting and check that each change is refused with a
clear :class:`textcw.errors.TextcwError` before a kernel runs, or (for parameters that only
steer the updates) works:

- every parameter with a fixed set of values (``fit_intercept``, ``covariance``, ``multiclass``,
  ``loss``, ``shuffle``, ...) of every registered online learner, plugins' included, set to each
  other value after ``fit``: ``partial_fit`` refuses the parameters in ``state_params`` with a
  :class:`~textcw.errors.ParameterError` naming the parameter and pointing to ``fit()``, and
  continues the fitted model with any other; ``fit`` starts over with the new value;
- state arrays replaced by arrays of other shapes or types, ``n_features_in_`` and ``classes_``
  edited, read-only state arrays.

Crash-prone cases run in a child process, so that a segfault fails the test instead of ending
the test run.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, note
from hypothesis import strategies as st

import textcw
from textcw.errors import InputError, ParameterError, TextcwError
from textcw.plugins import default_registries
from hang import HANG_SECONDS

REGISTRY = default_registries().learners
ONLINE = [n for n in REGISTRY.names() if hasattr(REGISTRY.get(n).factory(), "partial_fit")]


def _option_values(name):
    """Every parameter of a learner that takes one of a fixed set of values, with those values."""
    constraints = getattr(REGISTRY.get(name).factory(), "constraints", {})
    return {key: list(allowed.values) for key, allowed in constraints.items()
            if getattr(allowed, "values", None) and None not in allowed.values}


def test_every_online_learner_has_options_to_change():
    # the registry holds the built-ins and the example plugin's learner
    assert {"cw-stdev", "arow", "sop", "sgd", "balanced-winnow"} <= set(ONLINE)
    for name in ONLINE:
        assert {"fit_intercept", "shuffle"} <= set(_option_values(name)), name


# The child process: fit each learner with each base variant on binary and multi-class data,
# change one option-valued parameter to each other value, call partial_fit, and report what
# happened as JSON (one line per case). A crash shows as a negative return code.
CHILD = textwrap.dedent('''
    import copy, json, sys
    import numpy as np, scipy.sparse as sp
    import textcw
    from textcw.errors import TextcwError
    from textcw.plugins import default_registries

    name = sys.argv[1]
    options = json.loads(sys.argv[2])
    rng = np.random.default_rng(0)
    X = sp.random(40, 12, density=0.4, random_state=1, format="csr")
    X.data = rng.normal(size=X.nnz)
    problems = {"binary": rng.integers(0, 2, 40), "multiclass": rng.integers(0, 4, 40)}
    bases = [{}] + [{"covariance": c} for c in options.get("covariance", [])] + [{"fit_intercept": True}]

    def outcome(call):
        try:
            call()
            return ["ok", ""]
        except TextcwError as error:
            return [type(error).__name__, str(error)]
        except Exception as error:  # a failure of the test, reported to the parent
            return ["UNEXPECTED " + type(error).__name__, str(error)]

    for base in bases:
        for kind, y in problems.items():
            try:
                fitted = textcw.make_learner(name, n_epochs=2, **base).fit(X, y)
            except TextcwError:
                continue
            for key, values in options.items():
                for value in values:
                    if fitted.get_params()[key] == value and type(fitted.get_params()[key]) is type(value):
                        continue
                    model = copy.deepcopy(fitted)
                    before = {k: a.copy() for k, a in model._state.items()}
                    model.set_params(**{key: value})
                    result = outcome(lambda: model.partial_fit(X, y))
                    healthy = None
                    if result[0] == "ok":
                        healthy = bool(all(np.all(np.isfinite(a)) for a in model._state.values())
                                       and model.predict(X).shape == (40,))
                    else:
                        healthy = all(np.array_equal(model._state[k], a) for k, a in before.items())
                    refit = outcome(lambda: model.fit(X, y))
                    shapes_after_fit = None
                    if refit[0] == "ok":
                        fresh = textcw.make_learner(name, n_epochs=2, **{**base, key: value}).fit(X, y)
                        shapes_after_fit = all(model._state[k].shape == fresh._state[k].shape
                                               for k in fresh._state)
                    print(json.dumps({"base": base, "kind": kind, "key": key, "value": value,
                                      "partial_fit": result, "healthy": healthy,
                                      "fit": refit, "shapes_after_fit": shapes_after_fit}))
    print("DONE")
''')


# One child process serves the programs above, one request after another: starting Python with
# numpy, scikit-learn, numba and the learners' cached kernels costs about a second of CPU, several
# times what one program does. A child that crashes (or raises) ends; the test that asked sees its
# exit code and error output, and the next request starts a new child.
SERVER = textwrap.dedent('''
    import json, sys
    for request in sys.stdin:
        code, args = json.loads(request)
        sys.argv = ["-c", *args]
        exec(compile(code, "<child program>", "exec"), {"__name__": "__main__"})
        sys.stdout.flush()
''')


class Child:
    """The serving child process of this test session (started on first use)."""

    def __init__(self, tmp_path_factory):
        self.folder, self.proc, self.stderr = tmp_path_factory.mktemp("child"), None, None

    def run(self, code, *args, timeout=HANG_SECONDS) -> subprocess.CompletedProcess:
        """``python -c code *args`` in the child; its output up to the program's ``DONE`` line."""
        if self.proc is None:
            self.stderr = open(self.folder / f"stderr-{len(list(self.folder.iterdir()))}.txt", "w+")
            self.proc = subprocess.Popen([sys.executable, "-c", SERVER], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self.stderr, text=True,
                                         env=dict(os.environ, PYTHONFAULTHANDLER="1"))
        self.stderr.seek(0, os.SEEK_END)
        start = self.stderr.tell()
        watchdog = threading.Timer(timeout, self.proc.kill)  # a hang fails the test, never the run
        watchdog.start()
        try:
            self.proc.stdin.write(json.dumps([code, list(args)]) + "\n")
            self.proc.stdin.flush()
            lines = []
            for line in self.proc.stdout:
                lines.append(line)
                if line == "DONE\n":
                    return subprocess.CompletedProcess(args, 0, "".join(lines), "")
        except BrokenPipeError:  # died before reading the request
            lines = []
        finally:
            watchdog.cancel()
        code = self.proc.wait()  # the program ended without DONE: the child died
        self.proc = None
        self.stderr.seek(start)
        return subprocess.CompletedProcess(args, code, "".join(lines), self.stderr.read())

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        if self.stderr is not None:
            self.stderr.close()


@pytest.fixture(scope="module")
def child(tmp_path_factory):
    served = Child(tmp_path_factory)
    yield served
    served.close()


@pytest.mark.parametrize("name", ONLINE)
def test_changing_any_option_after_fit_is_refused_or_continues_never_crashes(name, child):
    learner = REGISTRY.get(name).factory()
    state_params = set(learner.state_params)
    options = _option_values(name)
    run = child.run(CHILD, name, json.dumps(options))
    assert run.returncode == 0, f"child died with {run.returncode}:\n{run.stderr[-3000:]}"
    lines = run.stdout.strip().splitlines()
    assert lines[-1] == "DONE", run.stdout[-2000:]
    cases = [json.loads(line) for line in lines[:-1]]
    assert {c["key"] for c in cases} == set(options)  # every option was changed at least once
    for case in cases:
        status, message = case["partial_fit"]
        where = f"{name} {case['base']} {case['kind']}: {case['key']}={case['value']!r}"
        assert not status.startswith("UNEXPECTED"), f"{where}: {status} {message}"
        assert case["healthy"], where  # continued: finite; refused: the state untouched
        if case["key"] in state_params and case["fit"] != case["partial_fit"]:
            # partial_fit keeps the fitted state: a parameter that shapes it cannot change (unless
            # the new value is refused anyway, as fit refuses it: the branch below)
            assert status == "ParameterError", where
            assert f"{case['key']} was " in message and "call fit() to start over" in message, message
        elif status != "ok":
            # only a combination the learner refuses anyway (e.g. multiclass='exact' with
            # covariance='exact'), with the same error fit gives
            assert status == "ParameterError" and case["fit"] == case["partial_fit"], f"{where}: {message}"
        if case["fit"][0] == "ok":  # fit starts over with the new value
            assert case["shapes_after_fit"], where
        else:
            assert case["fit"][0] == "ParameterError", f"{where}: {case['fit']}"


@pytest.mark.parametrize("name", ONLINE)
def test_fit_intercept_switched_on_after_fit_names_the_parameter(name):
    X = sp.random(30, 8, density=0.5, random_state=0, format="csr")
    y = np.arange(30) % 2
    model = textcw.make_learner(name).fit(X, y)
    coef = model.coef_.copy()
    model.set_params(fit_intercept=True)
    expected = (f"{type(model).__name__}: fit_intercept was False when the model was fitted and is "
                "now True; fit_intercept decides the shape of the fitted state, so the fitted model "
                "cannot be continued by partial_fit with fit_intercept=True: call fit() to start "
                "over with the new value, or set_params(fit_intercept=False) to keep the fitted model")
    with pytest.raises(ParameterError, match=re.escape(expected)):
        model.partial_fit(X, y)
    with pytest.raises(ParameterError, match="cannot be used with fit_intercept=True"):
        model.predict(X)  # reading the model with the wrong intercept layout is refused too
    model.set_params(fit_intercept=False)  # set back: the fitted model is intact and usable
    np.testing.assert_array_equal(model.coef_, coef)
    model.partial_fit(X, y)
    model.set_params(fit_intercept=True).fit(X, y)  # fit starts over, with an intercept
    assert model.intercept_.shape == (1,) and model.coef_.shape == (1, 8)
    model.partial_fit(X, y)


# ------------------------------------------------------------------------------ edited state
TAMPER_CHILD = textwrap.dedent('''
    import json, sys
    import numpy as np, scipy.sparse as sp
    import textcw
    from textcw.errors import TextcwError

    name, kind = sys.argv[1], sys.argv[2]
    X = sp.random(40, 10, density=0.4, random_state=2, format="csr")
    y = np.arange(40) % (2 if kind == "binary" else 4)

    def fitted():
        return textcw.make_learner(name, n_epochs=1).fit(X, y)

    def edits(model):
        names = list(model.state_names)
        for key in names:
            a = model._state[key]
            yield f"{key} one row short", lambda m, k=key, a=a: m._state.__setitem__(k, a[:-1].copy())
            yield f"{key} one row long", lambda m, k=key, a=a: m._state.__setitem__(k, np.concatenate([a, a[:1]]))
            if a.size > 1:
                yield f"{key} flattened", lambda m, k=key, a=a: m._state.__setitem__(k, a.ravel()[:-1].copy())
            yield f"{key} float32", lambda m, k=key, a=a: m._state.__setitem__(k, a.astype(np.float32))
            yield f"{key} removed", lambda m, k=key: m._state.pop(k)
            yield f"{key} a list", lambda m, k=key, a=a: m._state.__setitem__(k, a.tolist())
        yield "n_features_in_ + 5", lambda m: setattr(m, "n_features_in_", m.n_features_in_ + 5)
        yield "n_features_in_ - 3", lambda m: setattr(m, "n_features_in_", m.n_features_in_ - 3)
        yield "a class more", lambda m: setattr(m, "classes_", np.append(m.classes_, 99))
        yield "a class fewer", lambda m: setattr(m, "classes_", m.classes_[:-1])
        yield "classes unsorted", lambda m: setattr(m, "classes_", m.classes_[::-1].copy())

    for label, edit in edits(fitted()):
        for call in ("partial_fit", "predict", "wider partial_fit"):
            model = fitted()
            edit(model)
            Xc = X
            if call == "wider partial_fit":
                Xc = sp.hstack([X, sp.random(40, 5, density=0.5, random_state=3)], format="csr")
            try:
                getattr(model, call.split()[-1])(Xc, y) if call != "predict" else model.predict(Xc)
                result = ["ok", ""]
            except TextcwError as error:
                result = [type(error).__name__, str(error)]
            except Exception as error:
                result = ["UNEXPECTED " + type(error).__name__, str(error)]
            print(json.dumps({"edit": label, "call": call, "result": result}))
    print("DONE")
''')


@pytest.mark.parametrize("kind", ["binary", "multiclass"])
@pytest.mark.parametrize("name", ONLINE)
def test_edited_state_arrays_and_attributes_are_refused_before_a_kernel_runs(name, kind, child):
    run = child.run(TAMPER_CHILD, name, kind)
    assert run.returncode == 0, f"child died with {run.returncode}:\n{run.stderr[-3000:]}"
    lines = run.stdout.strip().splitlines()
    assert lines[-1] == "DONE", run.stdout[-2000:]
    cases = [json.loads(line) for line in lines[:-1]]
    assert len(cases) >= 3 * (5 + 5)
    for case in cases:
        status, message = case["result"]
        where = f"{name} {kind}: {case['edit']} then {case['call']}"
        assert not status.startswith("UNEXPECTED"), f"{where}: {status} {message}"
        # every edit leaves the state unusable: refused (never run, never a crash)
        assert status == "InputError", f"{where}: {status} {message}"
        if case["edit"] == "a class fewer" and case["call"] == "partial_fit":
            # the label dropped from classes_ is still in y: it is reported as undeclared
            assert "not among the declared classes" in message, f"{where}: {message}"
        else:
            assert "call fit() to start over" in message or "features" in message, f"{where}: {message}"


@pytest.mark.parametrize("name", ONLINE)
def test_coef_cannot_be_assigned_and_edits_in_place_keep_the_shape(name):
    X = sp.random(30, 8, density=0.5, random_state=0, format="csr")
    y = np.arange(30) % 3
    model = textcw.make_learner(name, n_epochs=1).fit(X, y)
    with pytest.raises(AttributeError):
        model.coef_ = np.zeros((3, 9))
    model.partial_fit(X, y)  # still the fitted model, still usable
    assert model.coef_.shape == (3, 8)


@pytest.mark.parametrize("name", ONLINE)
def test_read_only_state_arrays_are_copied_before_the_kernel_writes(name):
    X = sp.random(30, 8, density=0.5, random_state=0, format="csr")
    y = np.arange(30) % 2
    model = textcw.make_learner(name, n_epochs=1, random_state=0).fit(X, y)
    reference = textcw.make_learner(name, n_epochs=1, random_state=0).fit(X, y)
    frozen = {}
    for key, array in model._state.items():
        array.setflags(write=False)  # e.g. a model loaded memory-mapped
        frozen[key] = array
    snapshot = {key: array.copy() for key, array in frozen.items()}
    model.partial_fit(X, y)
    reference.partial_fit(X, y)
    for key, array in frozen.items():
        np.testing.assert_array_equal(array, snapshot[key])  # the read-only arrays untouched
        np.testing.assert_array_equal(model._state[key], reference._state[key])  # same model


@pytest.mark.parametrize("name", ["cw-stdev", "arow", "sop", "balanced-winnow"])
@given(data=st.data())
def test_any_replaced_state_array_is_used_only_with_the_right_shape(name, data):
    """Property: replacing one state array by a float64 array of any small shape either is the
    shape the kernel needs (then partial_fit works) or is refused with InputError."""
    params = {"covariance": "full"} if name in ("cw-stdev", "arow", "sop") and data.draw(st.booleans()) else {}
    kind = data.draw(st.sampled_from([2, 3]), label="classes")
    X = sp.random(12, 4, density=0.5, random_state=0, format="csr")
    y = np.arange(12) % kind
    model = textcw.make_learner(name, n_epochs=1, **params).fit(X, y)
    key = data.draw(st.sampled_from(list(model.state_names)), label="array")
    right = model._state[key].shape
    shape = data.draw(st.one_of(st.just(right), st.lists(st.integers(0, 5), min_size=0, max_size=3).map(tuple)),
                      label="shape")
    note(f"{key}: {right} -> {shape}")
    model._state[key] = np.ones(shape)
    if shape == right:
        model.partial_fit(X, y)
        return
    with pytest.raises(InputError, match=rf"state array '{key}' has shape .*call fit\(\) to start over"):
        model.partial_fit(X, y)
    with pytest.raises(InputError, match=rf"state array '{key}' has shape"):
        model.predict(X)


def test_load_state_dict_then_changed_parameters_is_refused():
    X = sp.random(30, 8, density=0.5, random_state=0, format="csr")
    y = np.arange(30) % 2
    source = textcw.make_learner("arow", covariance="full").fit(X, y)
    target = textcw.make_learner("arow", covariance="full").load_state_dict(source.state_dict())
    target.set_params(covariance="diag-kl")
    with pytest.raises(ParameterError, match="covariance was 'full' when the model was fitted and is now 'diag-kl'"):
        target.partial_fit(X, y)
    with pytest.raises(ParameterError, match="covariance was 'full'"):
        target.state_dict()  # an export would pair the wrong parameters with the state
    with pytest.raises(TextcwError):
        textcw.make_learner("arow").load_state_dict(source.state_dict())  # diag model, full state
