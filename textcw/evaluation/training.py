"""Building, fitting and pass-by-pass training of one learner: shared by the evaluators.

The papers choose the number of passes (1..10) on a tuning run (JMLR 2012 section 7.6) and plot
test accuracy after each pass (JMLR Figures 3-4). textcw's online learners report progress at the
end of every epoch of ``fit``, and the model at the end of epoch ``k`` of ``fit(n_epochs=N)`` is
exactly the model ``fit(n_epochs=k)`` returns (same seed, same shuffled orders), so one run of
``max_passes`` passes scores every pass count. Other learners with ``n_epochs`` are refitted for
each count; learners without passes are fitted once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import numpy as np

from textcw.errors import ParameterError
from textcw.evaluation.specs import LearnerSpec
from textcw.learners.base import OnlineLinearClassifier
from textcw.pipeline import build_learner


def build(spec: LearnerSpec, params: dict | None = None, passes: int | None = None, *, seed: int = 0):
    """An unfitted learner: the spec's fixed parameters, then ``params``, ``passes`` and the seed
    (:func:`textcw.pipeline.build_learner`)."""
    return build_learner(spec.name, {**spec.params, **(params or {})},
                         epochs=None if passes is None else int(passes), seed=seed,
                         no_epochs=f"learner {spec.label!r} has no passes (no n_epochs parameter)")


def has_passes(est) -> bool:
    return "n_epochs" in est.get_params(deep=False)


def fit_timed(est, X, y) -> float:
    """Fit ``est`` and return the training seconds (JMLR 2012 Table 5 times training only)."""
    t0 = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t0


def predictions_per_pass(est, X, y, X_eval, max_passes: int, *, at_pass=None) -> Iterator[tuple[int, np.ndarray, float]]:
    """Yield ``(k, predictions on X_eval, training seconds so far)`` after passes ``k = 1..max_passes``.

    ``est`` must have ``n_epochs``; its other parameters (seed, shuffling) are used as ``fit``
    would use them. ``at_pass(k, est)``, if given, is called with the model as it is after pass
    ``k`` (e.g. to read its probabilities; the model moves on afterwards).
    """
    if not has_passes(est):
        raise ParameterError(f"{type(est).__name__} has no passes (no n_epochs parameter)")
    if isinstance(est, OnlineLinearClassifier):
        yield from _online_passes(est, X, y, X_eval, max_passes, at_pass)
        return
    seconds = 0.0
    for k in range(1, max_passes + 1):
        est.set_params(n_epochs=k)
        seconds = fit_timed(est, X, y)
        if at_pass is not None:
            at_pass(k, est)
        yield k, est.predict(X_eval), seconds


def _online_passes(est: OnlineLinearClassifier, X, y, X_eval, max_passes, at_pass):
    # One fit(n_epochs=max_passes), scored at each epoch end through fit's progress callback:
    # the state after epoch k is exactly fit(n_epochs=k)'s model (same seed, same orders), and
    # the input is validated once rather than once per pass.
    est.set_params(n_epochs=max_passes)
    n = X.shape[0]
    results = []
    clock = {"start": time.perf_counter(), "scoring": 0.0}

    def at_chunk(done: int, total: int) -> None:
        if done % n == 0 and done > 0:
            t0 = time.perf_counter()
            seconds = t0 - clock["start"] - clock["scoring"]
            results.append((done // n, est.predict(X_eval), seconds))
            if at_pass is not None:
                at_pass(done // n, est)
            clock["scoring"] += time.perf_counter() - t0

    est.fit(X, y, progress=at_chunk)
    yield from results


def single_threaded():
    """A context in which BLAS and OpenMP use one thread.

    An evaluation fits many small models one after another; on them, native thread pools cost
    more than they save, and on a shared machine their spinning threads slowed the batch
    baselines tenfold (maxent on a 1,800-document fold: 9.9 s with two BLAS threads under
    load, 0.9 s with one). textcw's own kernels are single-threaded, so timings stay comparable.
    """
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1)


def one_thread(fn):
    """Decorator: run ``fn`` inside :func:`single_threaded`."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with single_threaded():
            return fn(*args, **kwargs)

    return wrapper


def error_percent(truth, predicted) -> float:
    """Test error in percent, the unit of the papers' tables."""
    truth = np.asarray(truth)
    return float(100.0 * np.mean(np.asarray(predicted) != truth)) if truth.size else 0.0
