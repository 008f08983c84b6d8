"""One training epoch of textcw against scikit-learn and vowpalwabbit, on the same rows.

Builds one seeded sparse data set shaped like a large text corpus (by default 200,000 documents,
1,000,000 features, about 85 non-zeros per row, Zipf-like feature frequencies, binary values,
labels from a hidden sparse linear model with 5% flipped), then times a single shuffled epoch of

- textcw ``perceptron``, ``pa1``, ``cw-var``, ``cw-stdev``, ``arow`` (diagonal covariance), and
  with ``--plugins`` the example plugin's variants on the same loops (``bounded-arow``, ``nherd``,
  ``balanced-winnow``; needs ``plugins/textcw-example`` installed); with ``--dtype float32`` the
  Gaussian learners keep a 32-bit state (``dtype="float32"``, half the memory and traffic of
  their means and variances), and with ``--dtype both`` each has a 64-bit and a 32-bit row;
- scikit-learn ``Perceptron`` and ``SGDClassifier(loss="hinge", penalty=None,
  learning_rate="pa1", eta0=1.0)`` (the replacement for its deprecated PA classes);
- vowpalwabbit (its default SGD, hinge loss), reading the same rows from its binary cache
  (written in an untimed first pass, so text parsing is not counted against it).

Every fit is timed end to end (input validation included), in interleaved rounds; the best
time of each counts.
numba kernels are compiled (or loaded from cache) before timing. It prints non-zeros per second
and the ratio of each textcw learner to scikit-learn's PA-I and Perceptron.

Run by hand (not a test): ``python benchmarks/bench_epoch.py [--rows N] [--features D]
[--nnz K] [--repeat R] [--dtype float64|float32|both] [--plugins] [--json out.json]``. Needs
``pip install vowpalwabbit`` for the VW row (skipped with a note if it is not installed). Results:
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron, SGDClassifier

import textcw

SEED = 0


def _zipf_rows(rng, n_rows, n_features, tokens_per_row, columns):
    """Rows of Poisson(tokens_per_row) tokens, each a feature of Zipf rank r, P(r) ~ r^-1.1."""
    lengths = rng.poisson(tokens_per_row, size=n_rows).clip(1)
    total = int(lengths.sum())
    s = 1.1  # inverse CDF of the continuous power law on [1, d + 1)
    top = (n_features + 1.0) ** (1 - s)
    ranks = np.floor((1 + rng.random(total) * (top - 1)) ** (1 / (1 - s))).astype(np.int64) - 1
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    X = sp.csr_matrix((np.ones(total), columns[np.minimum(ranks, n_features - 1)], indptr),
                      shape=(n_rows, n_features))
    X.sum_duplicates()  # a word repeated in a document is one binary feature
    X.data[:] = 1.0
    return X


def make_data(n_rows: int, n_features: int, nnz_per_row: int, seed: int = SEED):
    """A seeded binary bag-of-words matrix with Zipf-like feature frequencies, and labels.

    Frequent words repeat within a document, so the number of tokens per document is set (from a
    seeded pilot sample) such that the *distinct* features per row average ``nnz_per_row``.
    Feature ids are a random relabelling of the Zipf ranks, so frequent features are spread
    over the index range as in a real vocabulary.
    """
    rng = np.random.default_rng(seed)
    columns = rng.permutation(n_features)
    tokens = float(nnz_per_row)
    for _ in range(3):  # fixed-point on the pilot's distinct/token ratio
        pilot = _zipf_rows(np.random.default_rng(seed + 1), 5000, n_features, tokens, columns)
        tokens *= nnz_per_row / (pilot.nnz / 5000)
    X = _zipf_rows(rng, n_rows, n_features, tokens, columns)
    # Labels: a hidden sparse linear model (5% of the features carry weight), median split,
    # 5% flipped, so no linear model is perfect.
    w = np.where(rng.random(n_features) < 0.05, rng.normal(size=n_features), 0.0)
    score = X @ w
    y = np.where(score > np.median(score), 1, -1)
    y = np.where(rng.random(n_rows) < 0.05, -y, y)
    X.indices = X.indices.astype(np.int32)  # scipy's usual index type for a matrix of this size
    X.indptr = X.indptr.astype(np.int32)
    return X, y


GAUSSIAN = ("cw-var", "cw-stdev", "arow")  # the learners with a dtype parameter timed here


def textcw_fits(X, y, plugins=False, dtypes=("float64",)):
    runs = {
        "textcw perceptron": ("perceptron", {}),
        "textcw pa1": ("pa1", {"C": 1.0}),
    }
    for name in GAUSSIAN:
        for dtype in dtypes:  # the 64-bit row keeps its name: earlier tables compare with it
            label = f"textcw {name} (diag-kl{'' if dtype == 'float64' else ', ' + dtype})"
            runs[label] = (name, {} if dtype == "float64" else {"dtype": dtype})
    if plugins:  # variants that run on the same loops, from the example plugin
        runs.update({
            "plugin bounded-arow (diag-kl)": ("bounded-arow", {}),
            "plugin nherd (diag-kl)": ("nherd", {}),
            "plugin balanced-winnow": ("balanced-winnow", {}),
        })
    fits = {}
    for label, (name, params) in runs.items():
        def fit(name=name, params=params, X=X, y=y):
            textcw.make_learner(name, n_epochs=1, shuffle=True, random_state=SEED, **params).fit(X, y)
        fit(X=X[:200], y=y[:200])  # compile or load the kernels before timing
        fits[label] = fit
    return fits


def sklearn_fits(X, y):
    makers = {
        "sklearn Perceptron": lambda: Perceptron(max_iter=1, tol=None, shuffle=True, random_state=SEED),
        "sklearn SGD pa1": lambda: SGDClassifier(loss="hinge", penalty=None, learning_rate="pa1", eta0=1.0,
                                                 max_iter=1, tol=None, shuffle=True, random_state=SEED),
    }

    def fitter(make):
        def fit():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # one epoch on purpose
                make().fit(X, y)
        return fit

    return {label: fitter(make) for label, make in makers.items()}


def vw_fits(X, y, n_bits, tmp):
    """vowpalwabbit on the same rows in the same shuffled order, read from its binary cache."""
    try:
        import vowpalwabbit
    except ImportError:
        return {}, "vowpalwabbit is not installed (pip install vowpalwabbit); skipped"
    text = os.path.join(tmp, "rows.vw")
    cache = os.path.join(tmp, "rows.cache")
    with open(text, "w") as out:
        for i in np.random.default_rng(SEED).permutation(X.shape[0]):
            cols = X.indices[X.indptr[i]:X.indptr[i + 1]]
            out.write(f"{y[i]} | " + " ".join(f"{c}:1" for c in cols) + "\n")
    common = f"--quiet --loss_function hinge -b {n_bits} --cache_file {cache} -d {text}"
    first = vowpalwabbit.Workspace(common)  # untimed: parse the text once and write the cache
    first.run_parser()
    first.finish()

    def fit():
        vw = vowpalwabbit.Workspace(common)
        vw.run_parser()
        vw.finish()

    return {"vowpalwabbit (cache, 1 pass)": fit}, f"vowpalwabbit {vowpalwabbit.__version__}"


def time_interleaved(fits: dict, repeat: int) -> tuple[dict, dict]:
    """Best wall time and best CPU time of each fit over ``repeat`` rounds.

    Every round runs every fit once, so a change in machine load during the run affects all of
    them alike. CPU time (of this process, all threads) is less sensitive to other processes
    on a shared machine; vowpalwabbit's parser thread is included in its CPU time.
    """
    wall = {label: [] for label in fits}
    cpu = {label: [] for label in fits}
    for _ in range(repeat):
        for label, fit in fits.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            fit()
            wall[label].append(time.perf_counter() - start)
            cpu[label].append(time.process_time() - start_cpu)
    return ({label: min(v) for label, v in wall.items()}, {label: min(v) for label, v in cpu.items()})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=1_000_000)
    parser.add_argument("--nnz", type=int, default=85)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vw-bits", type=int, default=20)
    parser.add_argument("--dtype", choices=("float64", "float32", "both"), default="float64",
                        help="the state of the Gaussian learners: 64-bit (default), 32-bit, or a row of each")
    parser.add_argument("--plugins", action="store_true",
                        help="also time the example plugin's variants (textcw-example)")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    start = time.perf_counter()
    X, y = make_data(args.rows, args.features, args.nnz)
    print(f"data: {X.shape[0]:,} rows x {X.shape[1]:,} features, {X.nnz:,} non-zeros "
          f"({X.nnz / X.shape[0]:.1f} per row), built in {time.perf_counter() - start:.1f} s")
    print(f"python {platform.python_version()}, numpy {np.__version__}, scikit-learn {sklearn.__version__}, "
          f"textcw {textcw.__version__}, {os.cpu_count()} cpus, {platform.machine()}")

    with tempfile.TemporaryDirectory() as tmp:
        dtypes = ("float64", "float32") if args.dtype == "both" else (args.dtype,)
        fits = {**sklearn_fits(X, y), **textcw_fits(X, y, args.plugins, dtypes)}
        vw, note = vw_fits(X, y, args.vw_bits, tmp)
        fits.update(vw)
        seconds, cpu_seconds = time_interleaved(fits, args.repeat)
    print(note)
    if hasattr(os, "getloadavg"):
        print(f"load average after the timed rounds: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus")

    def ratio(times, label, reference):
        """Throughput of ``label`` relative to ``reference`` (same rows, so a time ratio)."""
        return times[reference] / times[label]

    print(f"\n{'learner':37s} {'wall s':>7s} {'nnz/s':>10s} {'/skl pa1':>9s} {'/skl perc':>9s}"
          f" {'cpu s':>7s} {'/skl pa1':>9s} {'/skl perc':>9s}")
    rows = []
    for label in seconds:
        row = {
            "learner": label,
            "seconds": seconds[label],
            "nnz_per_second": X.nnz / seconds[label],
            "vs_sklearn_pa1": ratio(seconds, label, "sklearn SGD pa1"),
            "vs_sklearn_perceptron": ratio(seconds, label, "sklearn Perceptron"),
            "cpu_seconds": cpu_seconds[label],
            "cpu_vs_sklearn_pa1": ratio(cpu_seconds, label, "sklearn SGD pa1"),
            "cpu_vs_sklearn_perceptron": ratio(cpu_seconds, label, "sklearn Perceptron"),
        }
        rows.append(row)
        print(f"{label:37s} {row['seconds']:7.3f} {row['nnz_per_second']:10.3e} {row['vs_sklearn_pa1']:9.2f}"
              f" {row['vs_sklearn_perceptron']:9.2f} {row['cpu_seconds']:7.3f} {row['cpu_vs_sklearn_pa1']:9.2f}"
              f" {row['cpu_vs_sklearn_perceptron']:9.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"rows": X.shape[0], "features": X.shape[1], "nnz": int(X.nnz), "results": rows,
                       "vw": note}, out, indent=2)


if __name__ == "__main__":
    main()
