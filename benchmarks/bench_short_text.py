"""Many classes of short text: ``textcw train`` as a user runs it against tuned scikit-learn,
with the calibration of its probabilities bin by bin, and where the accuracy gap comes from.

Tasks: :mod:`short_text_data` (``debian-sections``, ``python-docstrings``, ``locale-languages``,
``newsgroups-subjects``, ``gcloud-groups``, ``wordnet-glosses``: 20-40 classes, a median of 4-7
distinct words a document). No learner default was chosen on them; the first four informed the n-gram choice.

Rows (``--study train``, the default):

- ``NAME textcw train``: ``make_pipeline("tfidf", NAME, train_defaults=True)``, what
  ``textcw train --learner NAME`` fits on a text corpus (self-tuned values, calibrated
  probabilities); its time includes featurizing and the calibration's fits. Fitted once on 200
  documents first, untimed, so that compiling the kernels (paid once per process) is not counted.
- ``LinearSVC default``: scikit-learn's defaults on ``TfidfVectorizer()`` features.
- ``LinearSVC tuned``, ``LogisticRegression tuned``: ``GridSearchCV`` (3 folds) over C (LinearSVC
  {0.1, 0.3, 1, 3, 10}, LogisticRegression {0.1, 1, 10, 100}, ``max_iter=1000``) and unigrams or
  uni+bigrams of sublinear TF-IDF, the vectorizer refitted in every fold; the time includes the
  search.

Reported per row: accuracy, macro-F1, ECE (10 equal-width bins of the predicted label's
probability), log-loss, the mean predicted probability of the predicted label ("confidence"),
the reliability bins (documents, mean confidence, accuracy) and seconds.

``--study calibration`` fits each learner once and calibrates that same final model with each
candidate, on honest scores of the training documents: :data:`CALIBRATORS` on the scores of
2-, 3- and 5-fold cross-fitting (``--folds K``: only K); "vector" scaling (a temperature and a
per-class bias) and an "extrapolated" temperature (fitted at two model sizes, extrapolated to
the full one) on the 2-fold ones. Test accuracy is the final model's, except for "vector",
whose biases can change the most probable label; a row's seconds are its calibration's (the
clones' fits and the calibrator's fit). ``--study fit-time`` times the calibrator's own fit of
each method of :data:`CALIBRATORS` (interleaved, 5 times: best and median) on the same 2-fold
scores. Both also take the project's held-out tasks of benchmarks/bench_out_of_box.py
(``--tasks digits,sotu-party,...``): a calibrator must not hurt them. ``--study gap`` trains
``scw1`` and ``arow`` (their self-tuned values kept) with one thing changed at a time: epochs,
averaging, bigrams, the regularisation, the multi-class update.

Run by hand: ``python benchmarks/bench_short_text.py [--tasks a,b] [--learners scw1,arow]
[--study train|calibration|gap|fit-time] [--folds K] [--method auto] [--ngrams fixed] [--unseen keep] [--max-per-class N]
[--no-sklearn | --no-logistic] [--json out.json]``; a small run: ``--max-per-class 40 --no-sklearn``. The tasks
are kept as JSON under ``build/short-text`` after their first build. Results in docs/quality.md
"Many classes of short text".
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
from sklearn.svm import LinearSVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from heldout_data import WORD_GRID, text_features  # noqa: E402
from short_text_data import SHORT_TEXT_TASKS, cached  # noqa: E402

import textcw  # noqa: E402
from textcw.atomic import atomic_write_text  # noqa: E402
from textcw.evaluation.metrics import classification_metrics  # noqa: E402
from textcw.pipeline import learner_train_defaults  # noqa: E402

LEARNERS = ("scw1", "scw2", "arow", "cw-stdev", "sgd")
BINS = 10
TUNED = {
    "LinearSVC tuned": (LinearSVC(), {"C": [0.1, 0.3, 1, 3, 10]}),
    "LogisticRegression tuned": (LogisticRegression(max_iter=1000), {"C": [0.1, 1, 10, 100]}),
}
# What --study calibration compares, on the same honest scores: name -> fit_calibration's method.
CALIBRATORS = ("temperature", "top-bias", "auto")


def reliability(proba: np.ndarray, correct: np.ndarray) -> list[list[float]]:
    """``[documents, mean confidence, accuracy]`` of each non-empty equal-width bin of the
    predicted label's probability."""
    top = proba.max(axis=1)
    which = np.minimum((top * BINS).astype(int), BINS - 1)
    return [[int(np.sum(which == b)), round(float(top[which == b].mean()), 4),
             round(float(correct[which == b].mean()), 4)] for b in range(BINS) if np.any(which == b)]


def score(y, predicted, proba, classes, seconds, **extra) -> dict:
    metrics = classification_metrics(y, predicted, proba, classes)
    out = {k: metrics[k] for k in ("accuracy", "macro_f1", "expected_calibration_error", "log_loss")}
    if proba is not None:
        correct = classes[np.argmax(proba, axis=1)] == np.asarray(y)
        out["confidence"] = float(proba.max(axis=1).mean())
        out["confidence_minus_accuracy"] = out["confidence"] - out["accuracy"]
        out["reliability"] = reliability(proba, correct)
    return {**out, "seconds": seconds, **extra}


def _calibrated(proba, classes, y, seconds, **extra):  # the predicted label: the probabilities' argmax
    return score(y, classes[np.argmax(proba, axis=1)], proba, classes, seconds, **extra)


def timed_fit(model, X, y):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence, variance-floor and calibration warnings
        model.fit(X, y)
    return model, time.perf_counter() - start


def _warm(build, task):
    warm = np.random.default_rng(0).permutation(len(task.y_train))[:200]
    timed_fit(build(), [task.X_train[i] for i in warm], task.y_train[warm])


def _featurize(task):
    """``textcw train``'s features of a text corpus (``tfidf``), or the task's own for numbers."""
    featurizer = textcw.make_featurizer("tfidf") if isinstance(task.X_train[0], str) else task.features()
    return featurizer.fit_transform(task.X_train), featurizer.transform(task.X_test)


CACHE = Path(__file__).resolve().parent.parent / "build" / "short-text"


def load_task(name, max_per_class=None, cache=CACHE):
    """A task of :mod:`short_text_data` (kept as JSON in ``cache`` after its first build), or one
    of benchmarks/bench_out_of_box.py's held-out tasks (the project's, for ``--study
    calibration``: a calibrator must not hurt them)."""
    if name in SHORT_TEXT_TASKS:
        return cached(name, max_per_class, cache)
    from bench_out_of_box import task_loaders

    return task_loaders(10000)[name]()


def train_rows(task, learners, calibration=None) -> dict:
    """``textcw train``'s pipelines; ``calibration`` (e.g. ``{"folds": 5}``) changes the
    calibration's settings from their defaults."""
    rows = {}
    for name in learners:
        def build(name=name):
            return textcw.make_pipeline("tfidf", name, train_defaults=True).set_params(**(calibration or {}))
        _warm(build, task)
        model, t = timed_fit(build(), task.X_train, task.y_train)
        proba = model.predict_proba(task.X_test)
        tuned = dict(getattr(model.steps[-1][1], "tuned_params_", {}))
        rows[f"{name} textcw train"] = score(task.y_test, model.predict(task.X_test), proba, model.classes_, t,
                                             tuned={k: float(v) for k, v in tuned.items()},
                                             calibration=model.probability_calibration_.to_dict(),
                                             unseen=getattr(model, "unseen_", None),
                                             ngrams=getattr(model, "ngram_choice_", None) and model.ngram_choice_.to_dict())
    return rows


def sklearn_rows(task, skip=()) -> dict:
    """scikit-learn's rows, but those named in ``skip`` (e.g. the LogisticRegression search,
    which takes most of a run)."""
    rows = {}
    model, t = timed_fit(Pipeline([("features", text_features()), ("model", LinearSVC())]),
                         task.X_train, task.y_train)
    rows["LinearSVC default"] = score(task.y_test, model.predict(task.X_test), None, None, t)
    for label, (estimator, grid) in TUNED.items():
        if label in skip:
            continue
        search = GridSearchCV(Pipeline([("features", task.features()), ("model", clone(estimator))]),
                              {**{f"model__{k}": v for k, v in grid.items()},
                               **{f"features__{k}": v for k, v in WORD_GRID.items()}}, cv=3)
        fitted, t = timed_fit(search, task.X_train, task.y_train)
        proba = fitted.predict_proba(task.X_test) if hasattr(fitted, "predict_proba") else None
        rows[label] = score(task.y_test, fitted.predict(task.X_test), proba,
                            fitted.classes_ if proba is not None else None, t,
                            chosen={k: str(v) for k, v in fitted.best_params_.items()})
    return rows


def honest_scores(settings, X, y, labels, k, gaussian, random_state, subsample=False):
    """Out-of-fold ``(scores, variances, norms, seconds)`` of ``k`` clones of ``settings``, each
    fitted on ``k - 1`` of ``k`` stratified folds, as ``Calibrated``'s cross-fitting gives them
    (same folds, same seed). ``subsample``: each clone learns only a stratified half of its
    folds (a younger model scoring the same documents)."""
    from sklearn.model_selection import StratifiedKFold

    from textcw.learners.temperature import weight_norm

    n, target = X.shape[0], np.searchsorted(labels, y)
    shape = (n,) if len(labels) == 2 else (n, len(labels))
    scores, variances, norms = np.zeros(shape), np.zeros(shape), np.zeros(n)
    start = time.perf_counter()
    for fitted_on, scored in StratifiedKFold(k, shuffle=True, random_state=random_state).split(
            np.zeros((n, 1)), target):
        if subsample:
            fitted_on = fitted_on[next(StratifiedKFold(2, shuffle=True, random_state=random_state).split(
                np.zeros((fitted_on.size, 1)), target[fitted_on]))[1]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clone_ = clone(settings).fit(X[fitted_on], y[fitted_on])
        scores[scored] = clone_.decision_function(X[scored])
        if gaussian:
            variances[scored] = clone_.margin_variance(X[scored])
        norms[scored] = weight_norm(clone_)
    return scores, variances, norms, time.perf_counter() - start


def margin_logits(scores, variances, norms, margin):
    """``(n, K)`` logits of the recorded scores in ``margin`` (what a fitted temperature scales)."""
    from textcw.learners.temperature import as_logits, normalized_scores, standardized_scores

    z = {"raw": lambda: scores, "normalized": lambda: normalized_scores(scores, norms),
         "standardized": lambda: standardized_scores(scores, variances)}[margin]()
    return as_logits(z)


def fit_vector_scaling(logits, target):
    """``(beta, b)`` minimising the cross-entropy of ``softmax(beta * z + b)`` against Platt's
    targets plus ``||b||^2 / (2 n)`` (a standard normal prior on each class's offset, in logit
    units): temperature scaling with a per-class bias, the "vector scaling" of Guo et al., ICML
    2017, section 4.2, with one shared scale. Convex (a log-sum-exp of linear functions, minus a
    linear one, plus a quadratic); L-BFGS-B from the temperature's fit, ``beta >= 0``."""
    import scipy.optimize
    from scipy.special import logsumexp, softmax

    from textcw.learners.temperature import fit_inverse_temperature, smoothed_targets

    n, K = logits.shape
    weights = smoothed_targets(target, K)

    def loss(theta):
        scaled = theta[0] * logits + theta[1:]
        p = softmax(scaled, axis=1)
        value = np.mean(logsumexp(scaled, axis=1) - (weights * scaled).sum(axis=1)) + theta[1:] @ theta[1:] / (2 * n)
        grad = np.concatenate([[np.mean(((p - weights) * logits).sum(axis=1))],
                               (p - weights).mean(axis=0) + theta[1:] / n])
        return value, grad

    theta0 = np.concatenate([[fit_inverse_temperature(logits, target)], np.zeros(K)])
    found = scipy.optimize.minimize(loss, theta0, jac=True, method="L-BFGS-B",
                                    bounds=[(0.0, None)] + [(None, None)] * K)
    return float(found.x[0]), found.x[1:]


def extrapolated_inverse_temperature(beta_quarter, beta_half):
    """The inverse temperature for the model of all ``n`` documents, from those fitted to the
    scores of models of ``n/4`` and ``n/2`` documents (the same documents scored): ``beta``
    linear in ``log m`` (a learning curve over doublings of the data; Cortes, Jackel, Solla,
    Vapnik and Denker, "Learning curves: asymptotic values and rate of convergence", NIPS 1993),
    one more doubling: ``2 beta_half - beta_quarter``. Capped to ``[beta_half / 2, 2 beta_half]``:
    an online learner's weights, and so its scores, grow at most in proportion to the documents
    it learns (each update's step is bounded), so one doubling of the data moves the scale by at
    most a factor of 2. Either direction: normalized scores need a larger ``beta`` for a larger
    model, standardized ones (whose variances shrink) a smaller one."""
    return float(np.clip(2.0 * beta_half - beta_quarter, beta_half / 2.0, 2.0 * beta_half))


def _self_tuned(name, X, y):
    """``(learner, final model, learner with the final model's self-tuned values)``: the learner as
    ``textcw train`` builds it, fitted to ``X``; honest scores come from clones of the third."""
    learner = textcw.make_learner(name, **learner_train_defaults(name))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = clone(learner).fit(X, y)
    return learner, model, clone(learner).set_params(**dict(getattr(model, "tuned_params_", {})))


def calibration_rows(task, learners, folds=(2, 3, 5)) -> dict:
    """Each calibrator fitted to honest scores of the learner ``textcw train`` fits and applied
    to that same final model's test scores: :data:`CALIBRATORS` on the scores of ``k``-fold
    cross-fitting for each ``k`` in ``folds``; ``vector`` (:func:`fit_vector_scaling`) and
    ``extrapolated`` (:func:`extrapolated_inverse_temperature`) on the 2-fold ones. A row's
    ``seconds`` is its calibration's: the clones' fits plus the calibrator's own fit."""
    from scipy.special import softmax

    from textcw.learners.temperature import TemperatureScaling, as_logits, fit_inverse_temperature, fit_temperature

    Xtr, Xte = _featurize(task)
    rows = {}
    labels = np.unique(task.y_train)
    target = np.searchsorted(labels, task.y_train)
    for name in learners:
        learner, model, settings = _self_tuned(name, Xtr, task.y_train)
        gaussian = hasattr(learner, "margin_variance")
        seed = learner.get_params().get("random_state", 0)
        recorded = {}
        for k in sorted({*folds, 2}):
            recorded[k] = honest_scores(settings, Xtr, task.y_train, labels, k, gaussian, seed)
        for k in folds:
            scores, variances, norms, fits = recorded[k]
            for method in CALIBRATORS:
                start = time.perf_counter()
                scaling = fit_temperature(scores, variances if gaussian else None, target, margin="auto",
                                          record="cross-fit", norms=norms, method=method)
                rows[f"{name} {method} k={k}"] = _calibrated(scaling.predict_proba(model, Xte), model.classes_,
                                                             task.y_test, fits + time.perf_counter() - start,
                                                             calibration=scaling.to_dict())
        # the 2-fold temperature's margin, for the candidates that rescale its scores
        start = time.perf_counter()
        base = fit_temperature(recorded[2][0], recorded[2][1] if gaussian else None, target, margin="auto",
                               record="cross-fit", norms=recorded[2][2])
        base_seconds = time.perf_counter() - start
        z_test = as_logits(TemperatureScaling(base.margin, 1.0, "cross-fit").scores(model, Xte))
        # the inverse temperature of each model size in that margin (the extrapolation's check)
        betas = {k: fit_inverse_temperature(margin_logits(*recorded[k][:3], base.margin), target)
                 for k in recorded}
        logits = margin_logits(*recorded[2][:3], base.margin)
        start = time.perf_counter()
        beta, bias = fit_vector_scaling(logits, target)
        t = recorded[2][3] + base_seconds + time.perf_counter() - start
        proba = softmax(beta * z_test + bias, axis=1)
        agrees = float(np.mean(np.argmax(proba, axis=1) == np.argmax(z_test, axis=1)))
        rows[f"{name} vector k=2"] = _calibrated(proba, model.classes_, task.y_test, t, argmax_agrees=agrees,
                                                 calibration={"inverse_temperature": beta, "bias": bias.tolist()})
        quarter = honest_scores(settings, Xtr, task.y_train, labels, 2, gaussian, seed, subsample=True)
        start = time.perf_counter()
        beta_q = fit_inverse_temperature(margin_logits(*quarter[:3], base.margin), target)
        beta_n = extrapolated_inverse_temperature(beta_q, base.inverse_temperature)
        t = recorded[2][3] + base_seconds + quarter[3] + time.perf_counter() - start
        proba = softmax(beta_n * z_test, axis=1)
        rows[f"{name} extrapolated k=2"] = _calibrated(
            proba, model.classes_, task.y_test, t,
            calibration={"inverse_temperature": beta_n, "quarter": beta_q, "half": base.inverse_temperature,
                         "by_folds": {str(k): v for k, v in betas.items()}, "margin": base.margin})
    return rows


def fit_time_rows(task, learners, repeat=5) -> dict:
    """Seconds of the calibrator's own fit for each method of :data:`CALIBRATORS` on the same 2-fold
    honest scores, interleaved ``repeat`` times (best, median), and of the half-size fits behind them."""
    from textcw.learners.temperature import fit_temperature

    Xtr, _ = _featurize(task)
    labels = np.unique(task.y_train)
    target = np.searchsorted(labels, task.y_train)
    rows = {}
    for name in learners:
        learner, model, settings = _self_tuned(name, Xtr, task.y_train)
        gaussian = hasattr(learner, "margin_variance")
        scores, variances, norms, halves = honest_scores(settings, Xtr, task.y_train, labels, 2, gaussian,
                                                         learner.get_params().get("random_state", 0))
        seconds = {method: [] for method in CALIBRATORS}
        for _ in range(repeat):
            for method in CALIBRATORS:
                start = time.perf_counter()
                fit_temperature(scores, variances if gaussian else None, target, margin="auto", record="cross-fit",
                                norms=norms, method=method)
                seconds[method].append(time.perf_counter() - start)
        for method, times in seconds.items():
            rows[f"{name} {method}"] = {"best": min(times), "median": float(np.median(times)),
                                        "half_fits": halves, "repeat": repeat}
    return rows


def gap_rows(task, learners=("scw1", "arow")) -> dict:
    """One change at a time to the learner ``textcw train`` fits (its self-tuned values kept)."""
    rows = {}
    for name in learners:
        base = textcw.make_pipeline("tfidf", name, train_defaults=True, probability="raw")
        fitted, t = timed_fit(base, task.X_train, task.y_train)
        tuned = dict(getattr(fitted.steps[-1][1], "tuned_params_", {}))
        params = textcw.make_learner(name).get_params()
        changes = {"as trained": {}, "1 epoch": {"n_epochs": 1}, "20 epochs": {"n_epochs": 20},
                   "averaged": {"average": True}, "averaged, 20 epochs": {"average": True, "n_epochs": 20}}
        for key in ("C", "r"):
            if key in params:
                value = tuned.get(key, params[key])
                changes[f"{key} x0.1"] = {key: value * 0.1}
                changes[f"{key} x10"] = {key: value * 10}
        if "multiclass" in params:  # k-best and exact updates (Crammer, Dredze and Kulesza, EMNLP 2009)
            changes["multiclass seq, k=5"] = {"multiclass": "seq", "k": 5}
            changes["multiclass exact, k=5"] = {"multiclass": "exact", "k": 5}
        for label, change in changes.items():
            model = textcw.make_pipeline("tfidf", name, probability="raw", **{**tuned, **change})
            model, t = timed_fit(model, task.X_train, task.y_train)
            rows[f"{name} {label}"] = {"accuracy": float(np.mean(model.predict(task.X_test) == task.y_test)),
                                       "seconds": t}
        model = textcw.make_pipeline("tfidf", name, probability="raw", featurizer_params={"ngram_range": (1, 2)},
                                     **tuned)
        model, t = timed_fit(model, task.X_train, task.y_train)
        rows[f"{name} bigrams"] = {"accuracy": float(np.mean(model.predict(task.X_test) == task.y_test)),
                                   "seconds": t}
    return rows


def markdown(task, rows) -> str:
    def cell(value, digits=3):
        return "-" if value is None else f"{value:.{digits}f}"

    lines = [f"### {task}", "", "| model | accuracy | ECE | confidence | log-loss | seconds |",
             "|---|---|---|---|---|---|"]
    for label, r in rows.items():
        lines.append(f"| {label} | {cell(r['accuracy'])} | {cell(r.get('expected_calibration_error'))} | "
                     f"{cell(r.get('confidence'))} | {cell(r.get('log_loss'))} | {cell(r['seconds'], 2)} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", default=",".join(SHORT_TEXT_TASKS))
    parser.add_argument("--learners", default=",".join(LEARNERS))
    parser.add_argument("--study", choices=("train", "calibration", "gap", "fit-time"), default="train")
    parser.add_argument("--max-per-class", type=int, default=None,
                        help="at most this many documents a class (a quick run); default: the tasks' own caps")
    parser.add_argument("--no-sklearn", action="store_true")
    parser.add_argument("--no-logistic", action="store_true",
                        help="leave out the tuned LogisticRegression (most of the run time)")
    parser.add_argument("--folds", type=int, default=None,
                        help="cross-fitting folds of the calibration (default: Calibrated's; "
                             "--study calibration: 2, 3 and 5)")
    parser.add_argument("--method", choices=("temperature", "top-bias", "auto"), default=None,
                        help="--study train: the calibration's method (default: Calibrated's)")
    parser.add_argument("--ngrams", choices=("auto", "fixed"), default=None,
                        help="--study train: 'fixed' keeps unigrams (default: short documents choose)")
    parser.add_argument("--unseen", choices=("auto", "keep", "drop"), default=None,
                        help="--study train: how the calibration's halves score held-out rows "
                             "(default: short documents score them as unseen ones)")
    parser.add_argument("--json", help="write every number here")
    parser.add_argument("--cache", type=Path, default=CACHE, help="folder for the built tasks (JSON)")
    args = parser.parse_args(argv)
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    learners = [n.strip() for n in args.learners.split(",") if n.strip()]
    from bench_out_of_box import task_loaders

    known = [*SHORT_TEXT_TASKS, *task_loaders(10000)]
    unknown = [t for t in tasks if t not in known]
    if unknown:
        parser.error(f"unknown task(s) {', '.join(unknown)}; choose among {', '.join(known)}")
    if args.study not in ("calibration", "fit-time") and any(t not in SHORT_TEXT_TASKS for t in tasks):
        parser.error("the project's held-out tasks are for --study calibration and fit-time; "
                     "bench_out_of_box.py measures the rest")
    report = {}
    for name in tasks:
        task = load_task(name, args.max_per_class, args.cache)
        header = (f"{name} ({len(task.y_train)} training, {len(task.y_test)} test, "
                  f"{len(np.unique(task.y_train))} classes)")
        if args.study == "train":
            rows = train_rows(task, learners, {k: v for k, v in (("folds", args.folds), ("method", args.method),
                                                                  ("ngrams", args.ngrams), ("unseen", args.unseen))
                                               if v is not None})
            if not args.no_sklearn:
                rows.update(sklearn_rows(task, ("LogisticRegression tuned",) if args.no_logistic else ()))
        elif args.study == "calibration":
            rows = calibration_rows(task, learners, (args.folds,) if args.folds else (2, 3, 5))
        elif args.study == "fit-time":
            rows = fit_time_rows(task, learners)
        else:
            rows = gap_rows(task, [n for n in learners if n in ("scw1", "scw2", "arow", "cw-stdev")])
        report[header] = rows
        print(markdown(header, rows) if args.study != "fit-time" else "\n".join(
            [f"### {header}", "", "| learner and method | fit best (s) | fit median (s) | half-size fits (s) |",
             "|---|---|---|---|"] + [f"| {k} | {r['best']:.3f} | {r['median']:.3f} | {r['half_fits']:.2f} |"
                                     for k, r in rows.items()]), flush=True)
        if args.json:
            atomic_write_text(args.json, json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
