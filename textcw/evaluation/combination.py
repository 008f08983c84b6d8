"""``combination``: the distributed-training experiment of JMLR 2012 Figure 6 (ICML 2008 Figure 2).

"We evaluate classifier combination by training n (10, 50, 100) models by dividing the example
stream into n disjoint parts and report the average performance of each of the n classifiers
(average), the combined classifier from taking the average of the n sets of weights (L2) and the
combination using the KL divergence" (JMLR 2012 section 7.10), against a single model trained
on all the data (the horizontal lines of the figure, drawn for CW and PA).

Here, for every learner and every ``n``, the training split is cut into ``n`` contiguous shards
(:mod:`textcw.scale.shards`), one model is trained per shard with a single pass (the papers'
setting), and the test split scores each shard model, their ``uniform`` combination and their
``kl`` combination (Gaussian learners only); ``n = 1`` is the single model. The featurizer is
fitted once on the whole training split (or learns nothing, like ``hashing``), so all models
share one feature space. Shards run on the local process pool or a Dask cluster; models are
folded into the combinations as they arrive, so memory does not grow with ``n``. ``runs``
repeats everything with other seeds (the paper averages 4 runs).
"""

from __future__ import annotations

import functools
import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from textcw.errors import ParameterError
from textcw.evaluation.report import Report
from textcw.evaluation.specs import as_learner
from textcw.pipeline import default_featurizer, make_featurizer, make_learner
from textcw.plugins import deprecated_registries, in_registries
from textcw.scale.backends import Ready, open_backend
from textcw.scale.combine import METHODS, Combiner, check_combinable
from textcw.scale.shards import fit_featurizer, iter_shards, needs_fit
from textcw.scale.source import CorpusSource

SHARD_COUNTS = (10, 50, 100)


@dataclass
class CombinationRow(Report):
    """Test accuracy (%) of ``n_shards`` shard models of one learner and of their combinations."""

    learner: str
    n_shards: int
    shard_documents: float
    shard_mean: float
    shard_std: float
    uniform: float
    kl: float | None = None


@dataclass
class CombinationReport(Report):
    """JMLR 2012 Figure 6 for one task: single models and shard combinations, accuracy (%)."""

    task: str
    n_train: int
    n_test: int
    passes: int
    runs: int
    shard_counts: list[int]
    single: dict[str, float] = field(default_factory=dict)
    rows: list[CombinationRow] = field(default_factory=list)
    seconds: float = 0.0

    def table(self) -> tuple[list[str], list[list]]:
        """``(columns, rows)`` for printing: one row per learner and shard count."""
        columns = ["learner", "shards", "docs/shard", "single", "average shard", "uniform", "kl"]
        rows = []
        for r in self.rows:
            rows.append([r.learner, r.n_shards, f"{r.shard_documents:.0f}", f"{self.single[r.learner]:.2f}",
                         f"{r.shard_mean:.2f} ± {r.shard_std:.2f}", f"{r.uniform:.2f}",
                         "-" if r.kl is None else f"{r.kl:.2f}"])
        return columns, rows


def combination(*, shard_counts=SHARD_COUNTS, passes: int = 1, runs: int = 1, seed: int = 0,
                featurizer: str | None = None, featurizer_params: dict | None = None,
                backend: str = "local", scheduler: str | None = None, workers: int | None = None,
                registries=None):
    """Evaluator factory: ``run(task, learners=("cw-var", "pa"), progress=None) -> CombinationReport``.

    ``learners`` are names or ``NAME:KEY=VALUE`` specs; ``progress(stage, done, total)`` follows
    the shards; ``on_model(learner, n, run, kind, model, X_test, y_test)`` sees every model
    tested, ``kind`` being ``"shard"`` (one of the ``n`` shard models; for ``n = 1`` the
    single model) or the combination method (``"uniform"``, ``"kl"``). ``featurizer`` defaults to the corpus's own; ``backend``/``scheduler``/``workers``
    are those of :func:`textcw.scale.train_sharded`.
    """
    counts = _check_counts(shard_counts)
    for name, value in (("passes", passes), ("runs", runs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(f"{name}={value!r} is invalid; {name} must be an integer >= 1")

    def run(task, learners=("cw-var", "pa"), progress=None, on_model=None) -> CombinationReport:
        templates = _templates(learners, passes)
        source = CorpusSource.resolve(str(task))
        report = progress or (lambda stage, done, total: None)
        t0 = time.perf_counter()
        feat = make_featurizer(featurizer or default_featurizer(str(task)),
                               **dict(featurizer_params or {}))
        test = source.read("test")
        totals = {(label, n): _Totals() for label in templates for n in (1, *counts)}
        n_train = None
        with open_backend(backend, scheduler=scheduler, n_workers=workers, n_tasks=max(counts)) as runner:
            handle = runner.submit(fit_featurizer, source, feat) if needs_fit(feat) else Ready(feat)
            X_test = handle.result().transform(test.data)
            y_test = test.labels
            for r in range(runs):
                for label, est in templates.items():
                    methods = [m for m in METHODS if _combinable(check_combinable, est, m)]
                    for n in (1, *counts):
                        stage = f"{label} x{n}" + (f" run {r + 1}" if runs > 1 else "")
                        seen = None if on_model is None else functools.partial(on_model, label, n, r)
                        n_train = _fill_cell(totals[(label, n)], runner, source, handle, est, n, seed=seed + r,
                                             methods=methods, X_test=X_test, y_test=y_test, seen=seen,
                                             on_done=lambda done, s=stage, k=n: report(s, done, k))
        out = _summary(str(task), totals, list(templates), counts, n_train=n_train, n_test=len(test),
                       passes=passes, runs=runs)
        out.seconds = time.perf_counter() - t0
        return out

    return in_registries(deprecated_registries(registries, "textcw.evaluation.evaluators.combination"), run)


@dataclass
class _Totals:
    shards: list = field(default_factory=list)
    sizes: list = field(default_factory=list)
    combined: dict = field(default_factory=lambda: {"uniform": [], "kl": []})


def _templates(learners, passes: int) -> dict:
    """``{label: unfitted learner}`` of the ``learners`` specs, each checked to train in shards."""
    specs = [as_learner(s) for s in learners]
    if not specs:
        raise ParameterError("the combination experiment needs at least one learner")
    templates = {}
    for spec in specs:
        est = make_learner(spec.name, **spec.params)
        if not hasattr(est, "partial_fit") or "n_epochs" not in est.get_params(deep=False):
            raise ParameterError(f"learner {spec.label!r} is not an online learner; shards need one")
        est.set_params(n_epochs=passes)
        check_combinable(est, "uniform")
        templates[spec.label] = est
    return templates


def _fill_cell(cell: _Totals, runner, source, handle, est, n: int, *, seed: int, methods: list, X_test, y_test,
               seen, on_done) -> int:
    """Train ``n`` shard models of ``est``, test them and their combinations into ``cell``; the
    documents trained on. ``seen(kind, model, X_test, y_test)``, if given, sees every model tested."""
    combiners = {m: Combiner(m) for m in methods}
    accuracies, sizes = [], []
    for result in iter_shards(runner, source, handle, est, n, seed=seed, on_done=on_done):
        accuracies.append(_accuracy(result.model, X_test, y_test))
        sizes.append(result.n_documents)
        if seen is not None:
            seen("shard", result.model, X_test, y_test)
        for combiner in combiners.values():
            combiner.add(result.model)
    cell.shards.extend(accuracies)
    cell.sizes.extend(sizes)
    for m, combiner in combiners.items():
        combined = combiner.result()
        if seen is not None:
            seen(m, combined, X_test, y_test)
        cell.combined[m].append(_accuracy(combined, X_test, y_test))
    return sum(sizes)


def _summary(task: str, totals: dict, labels: list, counts: tuple[int, ...], *, n_train, n_test: int,
             passes: int, runs: int) -> CombinationReport:
    """The report of the cells: each learner's single model, then one row per shard count."""
    out = CombinationReport(task=task, n_train=int(n_train), n_test=n_test, passes=passes,
                            runs=runs, shard_counts=list(counts))
    for label in labels:
        out.single[label] = statistics.fmean(totals[(label, 1)].shards)
        for n in counts:
            cell = totals[(label, n)]
            out.rows.append(CombinationRow(
                learner=label, n_shards=n, shard_documents=statistics.fmean(cell.sizes),
                shard_mean=statistics.fmean(cell.shards), shard_std=statistics.pstdev(cell.shards),
                uniform=statistics.fmean(cell.combined["uniform"]),
                kl=statistics.fmean(cell.combined["kl"]) if cell.combined["kl"] else None,
            ))
    return out


def _accuracy(model, X, y) -> float:
    return 100.0 * float(np.mean(model.predict(X) == y))


def _combinable(check, est, method) -> bool:
    try:
        check(est, method)
    except ParameterError:  # kl for a learner without covariance: reported as "-"
        return False
    return True


def _check_counts(shard_counts) -> tuple[int, ...]:
    try:
        counts = tuple(int(n) for n in shard_counts)
    except (TypeError, ValueError):
        raise ParameterError(f"shard_counts={shard_counts!r} is not a list of integers") from None
    if not counts or any(n < 2 for n in counts):
        raise ParameterError(
            f"shard_counts={list(counts)} is invalid; give shard counts >= 2 (the single model, "
            "n = 1, is always included)"
        )
    return counts
