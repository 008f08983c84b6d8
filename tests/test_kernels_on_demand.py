"""Kernels load on first use: a module of kernels imports no numba, and a one-line prediction
(small text, small matrices) runs without numba, with the same result as the compiled path."""

from __future__ import annotations

import pickle
import subprocess
import sys

import numpy as np
import pytest

import textcw._jit as jit
from hang import HANG_SECONDS
from textcw.features import native
from textcw.pipeline import make_featurizer
from textcw.testing import make_documents


compiled = pytest.mark.skipif(jit.DISABLED, reason="nothing is compiled")


def run(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@compiled
def test_importing_kernels_imports_no_numba_and_first_use_does():
    out = run("import sys\n"
              "import textcw.learners.arow, textcw.features.native, textcw.kernels\n"
              "from textcw.learners._kernels.common import column\n"
              "print('numba' in sys.modules, type(column).__name__, column.loaded)\n"
              "import numpy as np, scipy.sparse as sp, textcw\n"
              "textcw.make_learner('arow').fit(sp.identity(4, format='csr'), [0, 1, 0, 1])\n"
              "print('numba' in sys.modules)")
    assert out == ["False", "Kernel", "False", "True"]


@compiled
def test_a_kernel_is_its_numba_function():
    from textcw.learners._kernels.common import column

    assert column(np.int64(3)) == 3
    assert column.loaded and column.signatures  # numba's attributes, of the compiled function
    assert column.py_func.__name__ == "column" and column.__qualname__ == "column"
    assert pickle.loads(pickle.dumps(column)) is column  # by reference, as a function
    assert list(jit.dispatchers_in([column, 1, "x"])) == [column.dispatcher]


def test_one_line_predict_imports_no_numba(tmp_path):
    path = str(tmp_path / "m.textcw-model")
    lines = ["orbit and moon", "the doctor gave a dose", "Straße über die Sterne"]
    want = run("import textcw\n"
               "from textcw.pipeline import make_pipeline\n"
               "from textcw.testing import make_documents\n"
               "docs, labels = make_documents(30, random_state=0)\n"
               f"model = make_pipeline('tfidf', 'scw1').fit(docs, labels)\n"
               f"textcw.save(model, {path!r})\n"
               f"print(*model.predict_proba({lines!r}).round(12).ravel())")
    got = run("import sys, io, textcw\n"
              f"model = textcw.load({path!r})\n"
              f"print(*model.predict_proba({lines!r}).round(12).ravel())\n"
              f"sys.stdin = io.TextIOWrapper(io.BytesIO({lines[0].encode()!r} + b'\\n'))\n"
              "from textcw.cli import main\n"
              f"main(['predict', {path!r}])\n"
              "print('numba' in sys.modules)")
    assert got[:6] == want and got[-1] == "False" and got[6] in ("space", "medicine")


@pytest.mark.parametrize("params", [{}, {"ngram_range": (1, 2)}, {"lowercase": False, "binary": True},
                                    {"token_pattern": r"(?u)\b\w+\b"}])
@pytest.mark.parametrize("name", ["binary-bow", "tfidf", "hashing", "hashed-tfidf"])
def test_small_text_before_the_kernels_is_featurized_as_the_kernels_do(monkeypatch, name, params):
    docs, _ = make_documents(20, random_state=1)
    featurizer = make_featurizer(name, **params).fit(docs)
    new = ["Orbit, orbit and MOON!", "", "naïve Straße ß and moon", "x", "dose dose of the doctor " * 50]
    compiled = featurizer.transform(new)
    monkeypatch.setattr(native, "kernels_loaded", lambda: False)
    assert native.small_before_kernels(new)
    small = featurizer.transform(new)
    assert (small.shape, small.dtype, small.indices.dtype) == (compiled.shape, compiled.dtype, compiled.indices.dtype)
    for a, b in ((small.indptr, compiled.indptr), (small.indices, compiled.indices), (small.data, compiled.data)):
        assert np.array_equal(a, b)
    long = ["moon " * (native.SMALL_TEXT_CHARS // 5 + 1)]
    assert not native.small_before_kernels(long)  # past the bound: the kernels featurize
    assert not native.small_before_kernels(["m"] * (native.SMALL_TEXT_CHARS + 1))


@compiled
def test_a_kernel_built_inside_a_function_pickles_by_value():
    def make(offset):
        return jit.closure_kernel(lambda x: x + offset)

    add_two = make(2.0)
    again = pickle.loads(pickle.dumps(add_two))
    assert again is not add_two and again(1.0) == 3.0 and isinstance(again, jit.Kernel)


@compiled
def test_threads_starting_on_one_kernel_share_its_numba_function():
    import threading

    fresh = jit.closure_kernel(lambda x: 2 * x)
    seen, barrier = [], threading.Barrier(4)

    def first_call():
        barrier.wait()
        seen.append((fresh(3), id(fresh.dispatcher)))

    threads = [threading.Thread(target=first_call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(HANG_SECONDS)
    assert seen and {s[0] for s in seen} == {6} and len({s[1] for s in seen}) == 1 and len(seen) == 4
