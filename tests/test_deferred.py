"""textcw._deferred: scipy.stats, which scikit-learn imports and a prediction never reads, is
imported on first use by the ``textcw`` command; any use still gets the real module."""

import subprocess
import sys

from hang import HANG_SECONDS


def run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG_SECONDS)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_scikit_learn_imports_without_running_scipy_stats():
    out = run("from textcw._deferred import defer; defer(); import sys, sklearn.base, sklearn.pipeline; "
              "print(type(sys.modules['scipy.stats']).__name__, 'scipy.stats._stats_py' in sys.modules)")
    assert out == ["_StandIn", "False"]


def test_every_way_of_using_it_gets_the_real_module():
    out = run("from textcw._deferred import defer; defer(); import sys, numpy as np, sklearn.base\n"
              "from sklearn.utils.fixes import _mode\n"
              "print(_mode(np.array([1, 1, 2])).mode[0])\n"  # through the reference sklearn kept
              "from scipy.stats import rankdata\n"
              "import scipy.stats, pickle\n"
              "print(type(sys.modules['scipy.stats']).__name__, rankdata([3, 1, 2]).tolist() == [3.0, 1.0, 2.0], "
              "scipy.stats.rankdata is rankdata, pickle.loads(pickle.dumps(scipy.stats.norm)).__class__.__name__)")
    assert out == ["1", "module", "True", "True", "norm_gen"]


def test_a_submodule_first_loads_the_package_in_its_own_order():
    out = run("from textcw._deferred import defer; defer(); import sys\n"
              "from scipy.stats._stats_py import rankdata\n"
              "print(type(sys.modules['scipy.stats']).__name__, rankdata([2, 1]).tolist())")
    assert out == ["module", "[2.0,", "1.0]"]


def test_one_line_predict_never_runs_scipy_stats(tmp_path):
    out = run("import sys, io, textcw\n"
              "from textcw.pipeline import make_pipeline\n"
              "from textcw.testing import make_documents\n"
              f"path = {str(tmp_path / 'm.textcw-model')!r}\n"
              "docs, labels = make_documents(30, random_state=0)\n"
              "textcw.save(make_pipeline('tfidf', 'scw1').fit(docs, labels), path)\n"
              "for name in [m for m in sys.modules if m.startswith(('scipy', 'sklearn', 'textcw'))]:\n"
              "    del sys.modules[name]\n"
              "sys.stdin = io.TextIOWrapper(io.BytesIO(b'orbit and moon\\n'))\n"
              "from textcw.cli import main\n"
              "main(['predict', path])\n"
              "print(type(sys.modules['scipy.stats']).__name__)")
    assert out[-1] == "_StandIn" and out[0] in ("space", "medicine")
