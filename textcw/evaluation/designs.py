"""The built-in evaluation designs (hook ``register_evaluators``).

``cv``, ``holdout`` and ``noise`` are :class:`~textcw.evaluation.contract.SplitDesign` designs: the
papers' protocol with its own splits. ``cv`` is JMLR 2012 section 7.6 (stratified seeded k-fold
over the pooled task, optionally tuned first); ``holdout`` trains on the corpus's train split and
tests on its test split (AROW 2013 section 5.3, USPS and MNIST); ``noise`` is ``cv`` at the
binary label-noise rates of AROW 2013 section 5.3, tuned at each rate.

The other measurements of the papers are designs too, each giving the same table of cells
(task x learner, a value per "fold"), with what a fold is said in its docstring: ``tune`` (the
tuning run's held-out part), ``timing`` (repeated fits, JMLR 2012 Table 5), ``curve`` (a
learning curve: one row per training size), ``online`` (progressive validation, one pass per
run) and ``combination`` (shard models combined, JMLR 2012 Figure 6: one row per shard count).
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from textcw.errors import InputError, ParameterError, TextcwError
from textcw.evaluation.contract import Design, Fold, Option, SplitDesign, Verdict, check_metrics
from textcw.evaluation.data import dev_split, fold_indices
from textcw.evaluation.specs import CV as CV_PROTOCOL
from textcw.evaluation.specs import SPLIT

__all__ = ["CV", "Combination", "Curve", "Holdout", "Noise", "Online", "Timing", "Tune"]

NOISE_LEVELS = [0.0, 0.05, 0.1, 0.15, 0.2, 0.3]
SEED = Option("int", 0, "seed of folds, samples, shuffling and noise", minimum=0)
TUNE = Option("bool", False, "choose parameters and passes on a tuning run first")
QUICK = Option("bool", False, "with tune: a smaller grid")
NOISE = Option("floats", [0.0], "training label-noise rates, each in [0, 1)")  # checked by run_suite


class CV(SplitDesign):
    """Stratified, seeded k-fold cross-validation over the pooled task (JMLR 2012 section 7.6)."""

    protocol = CV_PROTOCOL
    options = {"folds": Option("int", 10, "how many folds (cross-validation needs at least 2 folds)", minimum=2),
               "sample": Option("int", None, "cross-validate a class-balanced sample of this many documents",
                                minimum=2),
               "seed": SEED, "tune": TUNE, "quick": QUICK, "noise": NOISE}

    def splits(self, task, seed):
        return fold_indices(task, self.settings["folds"], seed)

    def caption(self, report) -> str:
        return f", {report.folds}-fold CV"


class Holdout(SplitDesign):
    """Train on the corpus's train split, test on its test split (AROW 2013 section 5.3)."""

    protocol = SPLIT
    options = {"seed": SEED, "tune": TUNE, "quick": QUICK, "noise": NOISE}

    def splits(self, task, seed):
        return [(task.train_index, task.test_index)]


class Noise(CV):
    """:class:`CV`, tuned, at the label-noise rates of AROW 2013 section 5.3 (0 to 0.3)."""

    options = {**CV.options, "tune": Option("bool", True, TUNE.help),
               "noise": Option("floats", NOISE_LEVELS, NOISE.help)}


SAMPLE = Option("int", None, "use a class-balanced sample of this many documents of each task", minimum=2)


class Tune(SplitDesign):
    """The papers' tuning run as a table (JMLR 2012 section 7.6): one seeded stratified split
    of the pool holds out 10%, every learner's grid is searched on it
    (:func:`textcw.evaluation.suite.tuning_run`), and the cell is the chosen settings' model
    tested on the held-out part, one "fold". Its error is the tuning run's ``dev_error``; the
    chosen parameters and passes follow in the report's ``tuning`` (a second table)."""

    options = {"sample": SAMPLE, "seed": SEED, "quick": QUICK}

    def splits(self, task, seed):
        from textcw.evaluation.tune import DEV_SIZE

        return [dev_split(task, DEV_SIZE, seed)]

    def run(self, tasks, learners, *, metrics, baseline=None, **hooks):
        from textcw.evaluation.specs import as_task
        from textcw.evaluation.suite import run_suite

        get = self.settings.get
        tasks = [replace(task, protocol=self.protocol, sample=get("sample") or task.sample)
                 for task in map(as_task, tasks)]
        return run_suite(tasks, learners, splitter=self.splits, folds=0, seed=get("seed"), tune=True,
                         quick=bool(get("quick")), baseline=baseline, metrics=metrics, **hooks)

    def caption(self, report) -> str:
        return ", held-out 10% of the tuning run"


class Timing(SplitDesign):
    """Training seconds of one model, as in JMLR 2012 Table 5 ("a single training run,
    averaged over 10 trials"): each learner is fitted ``repeats`` times on the training part of
    the first of ``folds`` stratified folds (each fit one "fold" of the cell, timed by
    :func:`textcw.evaluation.training.fit_timed`: ``fit`` only, featurizing excluded) and tested
    on that fold's test part. The metric tables show the (identical, seeded) test values; the
    design's own table, ``timing`` in the report's ``verdicts``, the seconds."""

    options = {"repeats": Option("int", 10, "fits per learner (each one timed)", minimum=1, maximum=1000),
               "folds": Option("int", 10, "the fold whose training part is timed is the first of this many",
                               minimum=2),
               "sample": SAMPLE, "seed": SEED, "tune": TUNE, "quick": QUICK}

    def splits(self, task, seed):
        return [fold_indices(task, self.settings["folds"], seed)[0]] * self.settings["repeats"]

    def run(self, tasks, learners, *, metrics, baseline=None, **hooks):
        report = super().run(tasks, learners, metrics=metrics, baseline=baseline, **hooks)
        report.folds = self.settings["folds"]
        report.verdicts["timing"] = self.seconds_table(report)
        return report

    def seconds_table(self, report) -> Verdict:
        """Mean training seconds per fit (and the fastest fit) of every task x learner."""
        labels = [s.label for s in report.learners]
        rows = []
        for info in report.task_info:
            cells = [report.cell(info.label, name) for name in labels]
            rows.append([info.label, *["–" if c is None or not c.train_seconds else
                                       f"{np.mean(c.train_seconds):.4f} (min {min(c.train_seconds):.4f})"
                                       for c in cells]])
        return Verdict(f"training seconds per fit, mean of {self.settings['repeats']} (fit only, on the first "
                       f"of {self.settings['folds']} folds' training part)", ["task", *labels], rows)

    def caption(self, report) -> str:
        return f", first of {self.settings['folds']} folds, fitted {self.settings['repeats']} times"


class Curve(Design):
    """A learning curve: error against the number of training documents.

    For every size ``n`` of ``sizes``, each of ``folds`` stratified folds trains on the first
    ``n`` documents of its training part (in one seeded order per fold, so a larger size adds
    documents to a smaller one's) and tests on the fold's whole test part; the featurizer is
    fitted on those ``n`` documents only. The table has one row per task and size (``row`` is
    ``n``, ``row_title`` ``"train docs"``), a cell's folds being the folds at that size, so
    McNemar's test and the ranks compare learners at equal size. A size larger than a fold's
    training part, or whose first documents hold a single label, fails that task.
    """

    options = {"sizes": Option("ints", None, "training sizes, e.g. sizes=100,400,1600", minimum=2, maximum=10**7,
                               required=True),
               "folds": Option("int", 10, "how many folds (each tested at every size)", minimum=2),
               "sample": SAMPLE, "seed": SEED}

    def __init__(self, **options):
        super().__init__(**options)
        _distinct("curve", "sizes", self.settings["sizes"])

    def splits_at(self, size: int):
        """The splitter of one size: each fold's training part, seeded order, first ``size``."""
        folds = self.settings["folds"]

        def splits(task, seed):
            out = []
            for k, (train, test) in enumerate(fold_indices(task, folds, seed)):
                if size > len(train):
                    raise InputError(f"sizes has {size}, more than the {len(train)} documents "
                                     f"of a fold's training part; give sizes up to {len(train)} (or fewer folds)")
                order = np.random.RandomState([seed, k, 7919]).permutation(train)
                out.append((np.sort(order[:size]), test))
            return out

        return splits

    def run(self, tasks, learners, *, metrics, baseline=None, **hooks):
        from textcw.evaluation.specs import as_task
        from textcw.evaluation.suite import run_suite, summarise

        get = self.settings.get
        tasks = [replace(task, protocol=CV_PROTOCOL, sample=get("sample") or task.sample)
                 for task in map(as_task, tasks)]
        report, on_task = None, hooks.pop("on_task", None)
        for size in get("sizes"):
            def at_size(info, size=size):  # "task n=100: done": one line per task and size
                on_task(replace(info, label=f"{info.label} n={size}"))

            part = run_suite(tasks, learners, splitter=self.splits_at(size), folds=get("folds"), seed=get("seed"),
                             baseline=baseline, metrics=metrics, on_task=at_size if on_task else None, **hooks)
            for cell in part.cells:
                cell.row = str(size)
            if report is None:
                report = part
            else:
                report.cells += part.cells
                seen = {info.label: info for info in report.task_info}
                for info in part.task_info:  # one entry per task: its seconds over every size
                    if info.label in seen:
                        seen[info.label].seconds += info.seconds
                    else:
                        report.task_info.append(info)
                report.failures += [f for f in part.failures if f not in report.failures]
                report.seconds += part.seconds
            if part.interrupted:
                report.interrupted = True
                break
        report.row_title = "train docs"
        # the cells of a task, size by size (the order of its rows)
        order = {t.label: i for i, t in enumerate(report.tasks)}
        report.cells.sort(key=lambda c: order.get(c.task, len(order)))
        summarise(report)
        return report

    def caption(self, report) -> str:
        return f", {report.folds}-fold CV, trained on the first n documents of each fold"


class Online(Design):
    """Progressive validation (the online mistakes of NIPS 2008 Figure 2a and AROW 2013 Figure
    5): each run streams the task's pool once, in a seeded order of its own, and every document
    is predicted by the model learned from the documents before it, then learned
    (:func:`textcw.evaluation.online.progressive_predictions`); with ``noise`` the streamed
    labels are flipped at that rate and mistakes are counted against them, as
    :func:`textcw.evaluation.online.online` does. A cell's "folds" are the runs:
    its error is the percentage of online mistakes of each pass, the outcomes the first run's,
    and a metric reads each pass's predicted labels (``gives`` is labels only: there are no
    scores or probabilities of a model that changes after every document). The featurizer is
    fitted on the whole stream (see :mod:`textcw.evaluation.online`)."""

    gives = frozenset({"labels"})
    options = {"runs": Option("int", 1, "passes, each over the stream in another seeded order from a fresh "
                                        "learner", minimum=1, maximum=100),
               "noise": Option("floats", [0.0], "rates at which the streamed labels are flipped, one table each "
                                                 "(AROW 2013 Figure 5)", minimum=0.0, maximum=0.99),
               "sample": SAMPLE, "seed": SEED}

    def run(self, tasks, learners, *, metrics, baseline=None, progress=None, on_task=None, **hooks):
        from textcw.evaluation.noise import check_noise
        from textcw.evaluation.specs import as_learner, as_task, check_specs
        from textcw.evaluation.suite import SuiteReport, describe_metric, run_each_task, summarise
        from textcw.evaluation.training import build, single_threaded
        from textcw.plugins import use_registries

        check_metrics("design 'online'", self, metrics)
        get = self.settings.get
        tasks = [replace(task, protocol=CV_PROTOCOL, sample=get("sample") or task.sample)
                 for task in map(as_task, tasks)]
        learners = [as_learner(s) for s in learners]
        t0 = time.perf_counter()
        with use_registries(hooks.get("registries")):
            check_specs(tasks, learners, baseline)
            for spec in learners:
                if not hasattr(build(spec), "partial_fit"):
                    raise ParameterError(f"design 'online': learner {spec.label!r} has no partial_fit, so it cannot "
                                         "learn online; choose online learners (textcw list learners)")
            levels = [check_noise(p) for p in get("noise")]
            report = SuiteReport(tasks, learners, get("runs"), get("seed"), noise=levels, baseline=baseline,
                                 metrics=[describe_metric(name, m) for name, m in metrics.items()])
            with single_threaded():
                run_each_task(report, tasks, lambda task: self._run_task(report, task, learners, metrics, progress),
                              on_task)
        summarise(report)
        report.seconds = time.perf_counter() - t0
        return report

    def _run_task(self, report, task, learners, metrics, progress):
        from textcw.evaluation.cv import CellResult, measure
        from textcw.evaluation.data import featurize, load_task
        from textcw.evaluation.noise import corrupt_labels
        from textcw.evaluation.online import progressive_predictions
        from textcw.evaluation.suite import TaskInfo
        from textcw.evaluation.training import build, error_percent, has_passes

        runs, seed, levels = self.settings["runs"], self.settings["seed"], report.noise
        t_task = time.perf_counter()
        data = load_task(task, seed=seed)
        everything = np.arange(len(data))
        X, _ = featurize(data, everything, everything[:1])
        labels, classes = data.labels, data.classes
        cells = {(spec.label, p): CellResult(task.label, spec.label, p, {}, None, runs, outcomes="." * len(data),
                                             metrics={name: [] for name in metrics})
                 for p in levels for spec in learners}
        done, total = 0, runs * len(learners) * len(levels)
        for p in levels:
            for r in range(runs):
                # the stream of online(): the same order and, with noise, the same flipped labels
                rng = np.random.RandomState([seed, r])
                order = rng.permutation(len(data))
                y = labels[order]
                if p > 0:  # mistakes are counted against the labels the learner is shown
                    y = corrupt_labels(y, p, classes, rng)[0]
                for spec in learners:
                    cell = cells[spec.label, p]
                    est = build(spec, seed=seed + r)
                    if has_passes(est):
                        cell.passes = 1
                    t = time.perf_counter()
                    predicted = progressive_predictions(est, X[order], y, classes)
                    seconds = time.perf_counter() - t
                    fold = Fold(y, predicted, np.asarray(est.classes_), labels=classes)
                    values = measure(metrics, fold, task=task.label, learner=spec.label)
                    if r == 0:
                        outcomes = np.full(len(data), "0", dtype="<U1")
                        outcomes[order[predicted == y]] = "1"
                        cell.outcomes = "".join(outcomes)
                    cell.fold_errors = [*cell.fold_errors, error_percent(y, predicted)]
                    cell.fold_macro_f1 = [*cell.fold_macro_f1, _macro_f1(y, predicted)]
                    cell.train_seconds = [*cell.train_seconds, seconds]
                    cell.metrics = {name: [*v, values.get(name)] for name, v in cell.metrics.items()}
                    done += 1
                    if progress is not None:
                        progress(task.label, done, total)
        for cell in cells.values():
            cell.summarise()
        report.cells.extend(cells.values())
        info = TaskInfo(task.label, task.corpus, task.protocol, len(data), len(data.target_names), runs,
                        float(X.shape[1]), time.perf_counter() - t_task)
        report.task_info.append(info)
        return info

    def caption(self, report) -> str:
        runs = self.settings["runs"]
        return ", online mistakes of one pass" + (f" (mean of {runs} runs)" if runs > 1 else "")


def _macro_f1(y, predicted) -> float:
    from textcw.metrics import label_metrics

    return label_metrics(y, predicted)["macro_f1"]


class Combination(Design):
    """Shard models combined (JMLR 2012 section 7.10 and Figure 6; ICML 2008 Figure 2), through
    :func:`textcw.evaluation.combination.combination`: for every ``n`` of ``shards`` the
    corpus's train split is cut into ``n`` contiguous shards, one model is trained per shard
    (``passes`` each, one by default as in the papers) and the models are combined with
    ``method`` (``uniform``: averaged weights and covariances; ``kl``: the KL combination of
    Gaussian learners, :mod:`textcw.scale.combine`); the combined model is tested on the test
    split. The table has one row per task and shard count (``row_title`` ``"shards"``), the row
    ``1`` being the single model trained on the whole train split; a cell has one "fold", the
    test split. The shard models themselves are summarised in the design's own table
    (``combination`` in the report's ``verdicts``: their mean error and spread)."""

    protocol = SPLIT
    options = {"shards": Option("ints", [10], "shard counts (each >= 2; the single model is always included)",
                                minimum=2, maximum=1000),
               "method": Option("str", "uniform", "how shard models are combined: uniform or kl"),
               "passes": Option("int", 1, "passes of each shard model", minimum=1, maximum=100),
               "seed": SEED}

    def __init__(self, **options):
        super().__init__(**options)
        from textcw.scale.combine import METHODS

        _distinct("combination", "shards", self.settings["shards"])
        if self.settings["method"] not in METHODS:
            raise ParameterError(f"design 'combination': method={self.settings['method']!r} is invalid; "
                                 f"give one of {', '.join(sorted(METHODS))}")

    def run(self, tasks, learners, *, metrics, baseline=None, progress=None, on_task=None, **hooks):
        from textcw.evaluation.specs import as_learner, as_task, check_specs
        from textcw.evaluation.suite import SuiteReport, describe_metric, run_each_task, summarise
        from textcw.plugins import use_registries

        check_metrics("design 'combination'", self, metrics)
        tasks = [replace(task, protocol=SPLIT) for task in map(as_task, tasks)]
        learners = [as_learner(s) for s in learners]
        t0 = time.perf_counter()
        with use_registries(hooks.get("registries")):
            check_specs(tasks, learners, baseline)
            self._check_learners(learners)
            report = SuiteReport(tasks, learners, 1, self.settings["seed"], baseline=baseline, row_title="shards",
                                 metrics=[describe_metric(name, m) for name, m in metrics.items()])
            shard_rows = []
            run_each_task(report, tasks,
                          lambda task: self._run_task(report, task, learners, metrics, progress, shard_rows), on_task)
        report.verdicts["combination"] = Verdict(
            "test error (%) of the shard models themselves, mean ± standard deviation",
            ["task", "shards", "docs/shard", *[s.label for s in learners]], shard_rows)
        summarise(report)
        report.seconds = time.perf_counter() - t0
        return report

    def _check_learners(self, learners) -> None:
        """Refuse, before training, a learner that cannot be trained on shards or combined so."""
        from textcw.pipeline import make_learner
        from textcw.scale.combine import check_combinable

        for spec in learners:
            est = make_learner(spec.name, **spec.params)
            if not hasattr(est, "partial_fit") or "n_epochs" not in est.get_params(deep=False):
                raise ParameterError(f"design 'combination': learner {spec.label!r} is not an online learner; "
                                     "shard models need one")
            try:
                check_combinable(est, self.settings["method"])
            except TextcwError as exc:
                if self.settings["method"] == "kl":
                    exc = (f"{type(est).__name__} keeps no covariance, which method=kl weights each shard model "
                           "by; use method=uniform (parameter averaging)")
                raise ParameterError(f"design 'combination': learner {spec.label!r}: {exc}") from None

    def _run_task(self, report, task, learners, metrics, progress, shard_rows):
        from textcw.evaluation.combination import combination
        from textcw.evaluation.cv import CellResult, measure
        from textcw.evaluation.suite import TaskInfo
        from textcw.evaluation.training import error_percent

        method, counts = self.settings["method"], self.settings["shards"]
        needs = set().union(*(m.needs for m in metrics.values())) if metrics else set()
        t_task = time.perf_counter()
        cells, shards, seen_labels = {}, {}, set()

        def on_model(label, n, run, kind, model, X_test, y_test):
            if kind == "shard" and n > 1:
                shards.setdefault((label, n), []).append(error_percent(y_test, model.predict(X_test)))
                return
            if kind != ("shard" if n == 1 else method):
                return
            from textcw.evaluation.cv import _fold, _record

            predicted = model.predict(X_test)
            y_test = np.asarray(y_test)
            seen_labels.update(y_test.tolist())
            task_labels = np.unique(np.concatenate([y_test.astype(object), np.asarray(model.classes_, dtype=object)]))
            fold = _fold(model, X_test, y_test, predicted, needs, task_labels)
            values = measure(metrics, fold, task=task.label, learner=label) if metrics else {}
            cell = CellResult(task.label, label, 0.0, {}, self.settings["passes"], 1, outcomes="." * len(y_test),
                              metrics={name: [] for name in metrics}, row=str(n))
            _record(cell, np.arange(len(y_test)), y_test, predicted, 0.0, None, values)
            cell.summarise()
            cells[label, n] = cell

        def shard_progress(stage, done, total):  # one bar per learner and shard count
            if progress is not None:
                progress(f"{task.label} {stage}", done, total)

        run = combination(shard_counts=counts, passes=self.settings["passes"], seed=self.settings["seed"],
                          featurizer=task.featurizer, featurizer_params=task.featurizer_params or None)
        out = run(task.corpus, [s.label for s in learners], progress=shard_progress, on_model=on_model)
        for n in (1, *counts):
            report.cells.extend(cells[s.label, n] for s in learners if (s.label, n) in cells)
        for n in counts:
            sizes = [r.shard_documents for r in out.rows if r.n_shards == n]
            shard_rows.append([task.label, str(n), f"{sizes[0]:.0f}" if sizes else "–",
                               *[_spread(shards.get((s.label, n), [])) for s in learners]])
        info = TaskInfo(task.label, task.corpus, SPLIT, out.n_train + out.n_test, len(seen_labels), 1, None,
                        time.perf_counter() - t_task)
        report.task_info.append(info)
        return info

    def caption(self, report) -> str:
        return f", the {self.settings['method']} combination of n shard models"


def _distinct(design: str, name: str, values) -> None:
    """Refuse a list option naming a value twice (it would run and print the same row twice)."""
    twice = sorted({v for v in values if values.count(v) > 1})
    if twice:
        raise ParameterError(f"design {design!r}: {name} lists {', '.join(map(str, twice))} twice; list each once")


def _spread(errors) -> str:
    if not errors:
        return "–"
    return f"{np.mean(errors):.2f} ± {np.std(errors):.2f}"
